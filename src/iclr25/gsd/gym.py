"""GSD on any gymnasium continuous-control env: a ``gymnasium.vector`` adapter and evaluation.

Only LaneReach has a torch-batched twin (all envs stepped as one tensor op) and a built-in
behaviour factor. Every other env with a ``Box`` observation and a bounded ``Box`` action space
is stepped here through ``gymnasium.vector.SyncVectorEnv`` (one Python ``step`` per env: much
slower), behind the same tensor interface, and behaviours are told apart by a statistic of the
rollouts the user names (:func:`parse_factor`, e.g. ``"obs:0"``: the episode mean of the first
observation). Policies act in ``[-1, 1]``; :class:`GymVec` maps actions affinely onto the
env's bounds, and :func:`unit_actions` maps demonstrations into ``[-1, 1]`` the same way.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import gymnasium as gym
import numpy as np
import torch

from iclr25._checks import as_tensor, check_int, resolve_seed, user_stacklevel
from iclr25._contract import PositiveInt, checked
from iclr25.datasets.control import OfflineDataset, env_maker, outlasting
from iclr25.gsd.evaluation import recovery_error, rolled_policy
from iclr25.gsd.testbed import _BATCHED, make_vec

if TYPE_CHECKING:   # training imports this module: GSDResult is read where it is used
    from iclr25.gsd.training import GSDResult

__all__ = ["Factor", "GymEvaluation", "GymVec", "beyond_the_demos", "check_env_id",
           "check_max_episode_steps", "demo_factors", "evaluate_gym", "make_env",
           "parse_factor", "trained_horizon", "unit_actions"]

_FACTOR = re.compile(r"^(obs|act):(\d+)(?::(mean|last|std))?$")


def check_env_id(env_id: object) -> tuple[gym.spaces.Box, gym.spaces.Box, int]:
    """(observation space, action space, horizon) of a registered continuous-control env.

    Raises:
        ValueError: unknown id, a non-``Box`` or unbounded action space, a non-flat ``Box``
            observation space, or no time limit; each names ``env_id``.
    """
    if not isinstance(env_id, str):
        raise ValueError(f"env_id must be a gymnasium env id string, got {env_id!r}")
    try:
        spec = gym.spec(env_id)
    except gym.error.Error as exc:
        raise ValueError(f"env_id: no gymnasium environment {env_id!r} ({exc})") from None
    if spec.max_episode_steps is None:
        raise ValueError(f"env_id: {env_id!r} has no time limit (max_episode_steps)")
    try:
        env = gym.make(env_id)
    except Exception as exc:  # a missing simulator (mujoco, box2d) or a broken entry point
        raise ValueError(f"env_id: cannot make {env_id!r} ({type(exc).__name__}: {exc})"
                         ) from None
    obs_space, act_space = env.observation_space, env.action_space
    env.close()
    if not (isinstance(act_space, gym.spaces.Box) and act_space.shape and
            len(act_space.shape) == 1 and np.isfinite(act_space.low).all()
            and np.isfinite(act_space.high).all()):
        raise ValueError(f"env_id: {env_id!r} needs a bounded 1-D Box action space (continuous "
                         f"control), got {act_space}")
    if not (isinstance(obs_space, gym.spaces.Box) and len(obs_space.shape) == 1):
        raise ValueError(f"env_id: {env_id!r} needs a 1-D Box observation space, got "
                         f"{obs_space}")
    return obs_space, act_space, int(spec.max_episode_steps)


class GymVec:
    """``num_envs`` copies of a gymnasium env behind :class:`~iclr25.gsd.testbed.
    LaneReachVec`'s tensor interface (``reset``, ``step``, ``obs_dim``, ``act_dim``,
    ``horizon``), stepped by ``gymnasium.vector.SyncVectorEnv``.

    Actions in ``[-1, 1]`` (clipped) are mapped affinely onto the env's ``[low, high]``. An
    episode that terminates before the time limit is reset in the same step (gymnasium's
    same-step autoreset), so a rollout of ``horizon`` steps always has ``num_envs`` rows.
    ``max_episode_steps``: the horizon (None: the env's time limit), passed to
    ``gymnasium.make`` (:func:`~iclr25.datasets.control.env_maker`).

    Raises:
        ValueError: see :func:`check_env_id`; ``num_envs < 1``; ``max_episode_steps < 1``.
    """

    def __init__(self, env_id: str, num_envs: int, *,
                 device: torch.device | str | None = None,
                 max_episode_steps: int | None = None) -> None:
        make = env_maker(env_id, max_episode_steps)   # its check before any env is made
        obs_space, act_space, limit = check_env_id(env_id)
        self.horizon = make.keywords.get("max_episode_steps", limit)   # the checked int
        self.env_id = env_id
        self.num_envs = check_int(num_envs, "num_envs", 1)
        self.device = torch.device(device or "cpu")
        self.obs_dim, self.act_dim = obs_space.shape[0], act_space.shape[0]
        self.low = torch.as_tensor(act_space.low, dtype=torch.float32)
        self.high = torch.as_tensor(act_space.high, dtype=torch.float32)
        self._envs = gym.vector.SyncVectorEnv(
            [make] * self.num_envs, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
        self.t = 0

    def to_env(self, action: torch.Tensor) -> np.ndarray:
        """``[-1, 1]`` actions -> the env's units (numpy, float32)."""
        a = action.detach().to("cpu", torch.float32).clamp(-1.0, 1.0)
        return (self.low + (a + 1.0) * 0.5 * (self.high - self.low)).numpy()

    def to_unit(self, action: torch.Tensor) -> torch.Tensor:
        """The env's units -> ``[-1, 1]`` (inverse of :meth:`to_env`)."""
        lo, hi = self.low.to(action), self.high.to(action)
        return 2.0 * (action - lo) / (hi - lo) - 1.0

    def _t(self, x: np.ndarray, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.as_tensor(np.asarray(x), dtype=dtype).to(self.device)

    def reset(self, *, seed: int | torch.Generator | None = None) -> torch.Tensor:
        gen = resolve_seed(seed)
        seeds = torch.randint(2**31 - 1, (self.num_envs,), generator=gen).tolist()
        obs, _ = self._envs.reset(seed=seeds)
        self.t = 0
        return self._t(obs)

    def step(self, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                  torch.Tensor, dict]:
        """Advance all envs; returns ``(obs, reward, terminated, truncated, info)`` tensors."""
        obs, r, term, trunc, info = self._envs.step(self.to_env(action))
        self.t += 1
        return (self._t(obs), self._t(r), self._t(term, torch.bool), self._t(trunc, torch.bool),
                info)

    def close(self) -> None:
        self._envs.close()


def check_max_episode_steps(env_id: str, steps: object,
                            name: str = "max_episode_steps") -> int | None:
    """``steps``, the episodes' horizon on ``env_id`` (None: the env's time limit), as an int
    >= 1; ``name``: the argument as the caller spells it (``"--max-episode-steps"``).

    Raises:
        TypeError: not an int.
        ValueError: below 1, or a torch-batched env (LaneReach), whose episodes keep its
            horizon; each names ``name``.
    """
    if steps is None:
        return None
    steps = check_int(steps, name, 1)
    if env_id in _BATCHED:
        raise ValueError(f"{name} cuts a gymnasium env's rollouts; {env_id}'s keep its horizon "
                         f"(the length of the demos `gsd demos` writes)")
    return steps


@checked
def trained_horizon(result: GSDResult, env_id: str,
                    max_episode_steps: PositiveInt | None = None) -> int | None:
    """The rollouts' horizon on ``env_id`` for a policy trained as ``result`` records:
    ``max_episode_steps`` where given, else the horizon ``result`` was trained at
    (``result.max_episode_steps``, set by ``train(..., max_episode_steps=N)`` and read from
    its file) where it was trained on ``env_id``; None (the env's time limit) otherwise: a
    result trained at the env's limit, on another env, or from a file that records no env.
    :func:`evaluate_gym` given a result and ``gsd evaluate`` both decide it here.

    Raises:
        TypeError: ``result`` not a :class:`~iclr25.gsd.GSDResult`, ``env_id`` not a str.
        ValueError: ``max_episode_steps < 1``.
    """
    from iclr25.gsd.training import GSDResult

    if not isinstance(result, GSDResult):   # the annotation names what only a checker imports
        raise TypeError(f"result must be a GSDResult (what gsd.train returns), got "
                        f"{type(result).__name__}")
    if max_episode_steps is None and result.env_id == env_id:
        return result.max_episode_steps
    return max_episode_steps


def make_env(env_id: str, num_envs: int, *, device: torch.device | str | None = None,
             max_episode_steps: int | None = None):
    """The torch-batched twin of ``env_id`` if there is one, else a :class:`GymVec` whose
    episodes last ``max_episode_steps`` (None: the env's time limit), checked first, before
    any env is made (:func:`check_max_episode_steps`: :func:`~iclr25.gsd.train` relies on
    it)."""
    max_episode_steps = check_max_episode_steps(env_id, max_episode_steps)
    if env_id in _BATCHED:
        return make_vec(env_id, num_envs, device=device)
    return GymVec(env_id, num_envs, device=device, max_episode_steps=max_episode_steps)


def unit_actions(demos: OfflineDataset, env: GymVec) -> OfflineDataset:
    """``demos`` with actions mapped from the env's ``[low, high]`` into ``[-1, 1]``.

    Raises:
        ValueError: an action outside the env's bounds, or dims that do not match the env's.
    """
    if demos.obs_dim != env.obs_dim or demos.act_dim != env.act_dim:
        raise ValueError(f"demos have obs/action dims {demos.obs_dim}/{demos.act_dim}, but "
                         f"{env.env_id} has {env.obs_dim}/{env.act_dim}")
    a = demos.actions
    lo, hi = env.low.to(a), env.high.to(a)
    tol = 1e-6 * (hi - lo)
    if bool(((a < lo - tol) | (a > hi + tol)).any()):
        raise ValueError(f"demos actions lie outside {env.env_id}'s action bounds "
                         f"[{env.low.tolist()}, {env.high.tolist()}]")
    return OfflineDataset(demos.observations, env.to_unit(a).clamp(-1.0, 1.0), demos.rewards,
                          demos.terminals, demos.timeouts, episode_factors=demos.episode_factors)


@dataclass(frozen=True)
class Factor:
    """A behaviour statistic of one episode: ``stat`` over time of ``source[:, index]``."""

    source: str   # "obs" or "act" (actions in the env's units)
    index: int
    stat: str     # "mean", "last" or "std"

    def __str__(self) -> str:
        return f"{self.source}:{self.index}:{self.stat}"

    def of(self, obs: torch.Tensor, act: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(n,) statistic over the time steps where ``mask`` (T, n) holds; ``obs``/``act``
        are (T, n, dim): the observation each action was taken in, and the action."""
        x = (obs if self.source == "obs" else act)[..., self.index]
        m = mask.to(x)
        n = m.sum(0).clamp_min(1)
        if self.stat == "last":
            last = (m * torch.arange(1, len(m) + 1, device=m.device)[:, None].to(m)).argmax(0)
            return x.gather(0, last[None])[0]
        mean = (x * m).sum(0) / n
        if self.stat == "mean":
            return mean
        return (((x - mean) ** 2 * m).sum(0) / n).sqrt()


def parse_factor(text: str, obs_dim: int, act_dim: int) -> Factor:
    """``"obs:I"``, ``"act:I"``, optionally ``":mean"`` (default), ``":last"`` or ``":std"``.

    Raises:
        ValueError: another form, or an index out of range (naming ``factor``).
    """
    m = _FACTOR.match(str(text).strip())
    if m is None:
        raise ValueError(f"factor must look like obs:I or act:I[:mean|last|std], got {text!r}")
    source, index, stat = m.group(1), int(m.group(2)), m.group(3) or "mean"
    dim = obs_dim if source == "obs" else act_dim
    if index >= dim:
        raise ValueError(f"factor {text!r}: index {index} is out of range for {source} "
                         f"(dimension {dim})")
    return Factor(source, index, stat)


def demo_factors(demos: OfflineDataset, factor: Factor) -> torch.Tensor:
    """(E,) the statistic of each demonstrated episode (actions as stored, env units)."""
    ends = torch.nonzero(demos.terminals | demos.timeouts).flatten().tolist()
    out, start = [], 0
    for end in ends:
        o, a = demos.observations[start:end + 1, None], demos.actions[start:end + 1, None]
        out.append(factor.of(o, a, torch.ones(len(o), 1, dtype=torch.bool)))
        start = end + 1
    return torch.cat(out)


def beyond_the_demos(returns: torch.Tensor, factors: torch.Tensor, demo_factors: torch.Tensor,
                     demo_returns: torch.Tensor) -> list[str]:
    """Why the policy does not do what the demos did, one warning each (empty when it does):
    its mean return below every demonstrated episode's, most codes behaving beyond the
    demonstrated range widened by half its width on each side (GSD generalises between and
    near the demos, not over the whole state space), or the codes' behaviours spanning under
    half the demonstrated range (styles missing). ``gsd evaluate`` prints these and
    :func:`evaluate_gym` warns them, after :func:`~iclr25.datasets.control.outlasting`'s
    warning where the rollouts run longer than the longest demonstration.

    Args:
        returns, factors: (n,) each code's return and behaviour.
        demo_factors, demo_returns: (E,) each demonstrated episode's.
    """
    why = []
    mean, worst = float(returns.mean()), float(demo_returns.min())
    if mean < worst:
        why.append(f"the policy's mean return {mean:.4g} lies below every demonstration's "
                   f"(worst {worst:.4g}, best {float(demo_returns.max()):.4g})")
    lo, hi = float(demo_factors.min()), float(demo_factors.max())
    pad = 0.5 * (hi - lo)
    outside = float(((factors < lo - pad) | (factors > hi + pad)).double().mean())
    if outside > 0.5:
        why.append(f"{outside:.0%} of the codes behave outside [{lo - pad:.4g}, "
                   f"{hi + pad:.4g}] (the demonstrated {lo:.4g}..{hi:.4g}, widened by half "
                   f"its width)")
    f_lo, f_hi = float(factors.min()), float(factors.max())
    if len(factors) > 1 and f_hi - f_lo < 0.5 * (hi - lo):
        # one style, or none: the codes should reach the demonstrated ends (issue 68 walk 6:
        # cart positions -0.06..0.08 against styles parked at -0.3 and +0.3)
        why.append(f"the codes behave within {f_lo:.4g}..{f_hi:.4g}, under half the "
                   f"demonstrated {lo:.4g}..{hi:.4g}: some demonstrated styles are missing")
    return [f"the policy does not do what the demos did: {w}; train longer (more "
            f"iterations: the paper trains for far longer) before relying on it" for w in why]


def _rolled_out(policy: object, env_id: str, max_episode_steps: int | None
                ) -> tuple[Callable, int | None]:
    """:func:`evaluate_gym`'s policy and horizon: a training result's policy and
    :func:`trained_horizon`, or a callable policy and ``max_episode_steps`` as given
    (:func:`~iclr25.gsd.evaluation.rolled_policy` tells them apart)."""
    policy, result = rolled_policy(policy)
    if result is not None:
        return policy, trained_horizon(result, env_id, max_episode_steps)
    return policy, max_episode_steps


@dataclass(frozen=True)
class GymEvaluation:
    """Per-code rollouts on a gymnasium env: returns and the behaviour statistic."""

    codes: torch.Tensor          # (n, z_dim)
    factors: torch.Tensor        # (n,) the statistic of each code's first episode
    returns: torch.Tensor        # (n,) undiscounted return of that episode
    factor: Factor
    vl: dict[int, float]         # budget -> VL_K over the targets (empty without targets)


@checked
def evaluate_gym(
    policy: GSDResult | Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    env_id: str,
    *,
    factor: str | Factor,
    targets: Sequence[float] | torch.Tensor | None = None,
    n_codes: PositiveInt = 100,
    budgets: Sequence[int] = (10,),
    z_dim: int | None = None,
    seed: int | torch.Generator | None = 0,
    demos: OfflineDataset | None = None,
    max_episode_steps: PositiveInt | None = None,
) -> GymEvaluation:
    """Roll out one deterministic episode per prior code z ~ N(0, I) in a gymnasium env.

    ``policy``: what :func:`~iclr25.gsd.train` returned (or :func:`~iclr25.gsd.io.load`
    read), whose policy is rolled out, or any ``policy(obs (n, d), z (n, z_dim))`` returning
    mean actions in ``[-1, 1]`` (mapped onto the env's bounds). Each code's behaviour is
    ``factor`` over its first episode (steps after an early termination are not counted);
    with ``targets``, ``VL_K`` as for LaneReach. ``max_episode_steps``: the episodes'
    horizon, passed to ``gymnasium.make``; None: for a training result on the env it was
    trained on, the horizon it was trained at (``train(..., max_episode_steps=N)``, as ``gsd
    evaluate`` rolls out: :func:`trained_horizon`), else the env's time limit. With
    ``demos`` (the training demonstrations), warns when the rollouts run longer than their
    longest episode (``max_episode_steps`` at that length compares returns and behaviours
    over as many steps) and when the policy does not do what they did
    (:func:`beyond_the_demos`), as ``gsd evaluate --demos`` does.

    Raises:
        ValueError: bad env id, factor, targets, n_codes, budgets or max_episode_steps,
            before any rollout.
        TypeError: ``policy`` neither a training result nor callable; ``demos`` not an
            :class:`~iclr25.datasets.control.OfflineDataset`.
    """
    policy, max_episode_steps = _rolled_out(policy, env_id, max_episode_steps)
    n_codes = check_int(n_codes, "n_codes", 1)
    budgets = [check_int(b, "budgets", 1, n_codes) for b in budgets]
    t = None if targets is None else as_tensor(targets, "targets", ndim=1,
                                                dtype=torch.float32)
    if t is not None and len(t) == 0:
        raise ValueError("targets is empty")
    z_dim = check_int(z_dim if z_dim is not None else getattr(policy, "z_dim", 0), "z_dim", 1)
    obs_space, act_space, _ = check_env_id(env_id)
    if not isinstance(factor, Factor):
        factor = parse_factor(factor, obs_space.shape[0], act_space.shape[0])
    if demos is not None and not isinstance(demos, OfflineDataset):
        raise TypeError(f"demos must be an OfflineDataset (the training demonstrations) or "
                        f"None, got {type(demos).__name__}")
    demo = None if demos is None else (demo_factors(demos, factor), demos.returns())
    param = next(iter(getattr(policy, "parameters", lambda: iter([torch.zeros(())]))()))
    env = GymVec(env_id, n_codes, device=param.device, max_episode_steps=max_episode_steps)
    gen = resolve_seed(seed)
    codes = torch.randn(n_codes, z_dim, generator=gen).to(param.device, param.dtype)
    obs = env.reset(seed=gen)
    S, A, alive = [], [], []
    ret = torch.zeros(n_codes)
    live = torch.ones(n_codes, dtype=torch.bool)
    with torch.no_grad():
        for _ in range(env.horizon):
            a = policy(obs.to(param.dtype), codes)
            S.append(obs.cpu())
            A.append(torch.as_tensor(env.to_env(a)))
            alive.append(live.clone())
            obs, r, term, trunc, _ = env.step(a)
            ret += r.cpu() * live
            live &= ~(term | trunc).cpu()
            if not bool(live.any()):
                break
    env.close()
    f = factor.of(torch.stack(S), torch.stack(A), torch.stack(alive))
    vl = {} if t is None else {b: recovery_error(f, t, b) for b in budgets}
    if demo is not None:
        for message in [*outlasting(demos.longest_episode, env.horizon, "max_episode_steps=",
                                    "returns and behaviours"), *beyond_the_demos(ret, f, *demo)]:
            warnings.warn(message, UserWarning, stacklevel=user_stacklevel())
    return GymEvaluation(codes, f, ret, factor, vl)
