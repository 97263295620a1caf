"""Rolling a (Long-Short) Decision Transformer out in a gymnasium env: :func:`evaluate`
conditions the policy on a target return that is decreased by the rewards received. It reads
only what :class:`Policy` lists, so another library's Decision Transformer wrapped in that
signature rolls out alike (benchmarks/lsdt.py rolls Hugging Face's out)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import torch

from iclr25._checks import check_int, check_range, resolve_seed, user_stacklevel
from iclr25._contract import PositiveInt, checked
from iclr25._format import num
from iclr25._optional import require
from iclr25.datasets.control import OfflineDataset, env_maker, outlasting

gym = require("gymnasium", "rl")

__all__ = ["EvalResult", "evaluate"]


@runtime_checkable
class Policy(Protocol):
    """What :func:`evaluate` reads of a model: its sizes, its return scale and
    ``get_action`` over (B, T, ·) histories returning (B, act_dim). A
    :class:`~iclr25.lsdt.LongShortDecisionTransformer` (and the DT and DC baselines) is one."""

    obs_dim: int
    act_dim: int
    context: int
    max_timestep: int
    rtg_scale: torch.Tensor

    def get_action(self, returns_to_go: torch.Tensor, states: torch.Tensor,
                   actions: torch.Tensor, timesteps: torch.Tensor) -> torch.Tensor: ...

    def parameters(self, recurse: bool = True) -> Iterator[torch.nn.Parameter]: ...

    def eval(self) -> Policy: ...


@checked
@dataclass
class EvalResult:
    """Episode returns (n_episodes,) and their mean."""

    returns: torch.Tensor
    mean_return: float

    def __repr__(self) -> str:
        # the summary, in the project's number format, not a raw tensor of returns
        r = self.returns
        return (f"EvalResult(mean_return={num(float(self.mean_return))}, "
                f"n_episodes={len(r)}, min={num(float(r.min()))}, max={num(float(r.max()))})")


@torch.no_grad()
@checked
def evaluate(model: Policy, env_id: str | None = None, *, target_return: float,
             n_episodes: PositiveInt = 10, seed: int | torch.Generator | None = 0,
             max_episode_steps: PositiveInt | None = None,
             dataset: OfflineDataset | None = None, **env_kwargs) -> EvalResult:
    """Roll the model out in ``n_episodes`` copies of a gymnasium env, stepping them together.

    The returns-to-go token starts at ``target_return / rtg_scale`` and drops by each reward.
    Episode i is reset with seed ``seed + i`` (an int ``seed``; a generator or None draws the
    base seed). ``model``: a LongShortDecisionTransformer, or any module with its
    ``obs_dim``, ``act_dim``, ``context``, ``max_timestep``, ``rtg_scale`` and
    ``get_action(returns_to_go, states, actions, timesteps) -> (B, act_dim)`` (another
    library's model wrapped in that signature). ``env_id``: the gymnasium env id; None: the
    model's recorded ``env_id`` (a model read by :func:`~iclr25.lsdt.load` from a file
    ``lsdt train --env`` or ``save(env_id=...)`` wrote). ``max_episode_steps``: the rollouts'
    horizon (None: the env's time limit); the training data's longest episode
    (``OfflineDataset.longest_episode``) compares returns over as many steps as the data's.
    ``dataset``: the training data, whose longest episode the warning below reads in place
    of the model's (a model from another library records none). ``env_kwargs`` go to
    ``gymnasium.make``.

    Warns:
        UserWarning: the rollouts may run longer than the training data's longest episode
            (``dataset``'s, else the model's ``longest_episode``, set by
            :func:`~iclr25.lsdt.train` and :func:`~iclr25.lsdt.load`), naming
            ``max_episode_steps=`` at it (issue 68, walk 11: 150-step Hopper-v5 data,
            returns 21..151, rolled out to 1000 steps: 795); ``lsdt evaluate`` says it in
            its own words.

    Raises:
        TypeError: a ``model`` without one of those (no ``get_action``, ...).
        ValueError: an unknown ``env_id``, or none given for a model that records none; env
            spaces that differ from the model's dims (naming the env the model records); an
            env time limit longer than the model's ``max_timestep``; ``n_episodes < 1`` or
            ``max_episode_steps < 1``.
    """
    if env_id is None:
        env_id = getattr(model, "env_id", None)
        if env_id is None:
            raise ValueError("env_id: the model records no env (trained without one): pass "
                             "the env its training data came from")
    n = check_int(n_episodes, "n_episodes", 1)
    target_return = check_range(target_return, "target_return")
    base = check_int(seed, "seed", 0) if isinstance(seed, int) else \
        int(torch.randint(2**31 - n, (1,), generator=resolve_seed(seed)))
    envs, o_dim = _make_envs(model, env_id, n, {"max_episode_steps": max_episode_steps,
                                                **env_kwargs})
    horizon = envs[0].spec.max_episode_steps if envs[0].spec is not None else None
    longest = dataset.longest_episode if dataset is not None else \
        getattr(model, "longest_episode", None)
    for message in outlasting(longest, horizon, "max_episode_steps="):
        warnings.warn(message, UserWarning, stacklevel=user_stacklevel())
    p = next(model.parameters())
    model.eval()
    obs = torch.tensor(np.stack([e.reset(seed=base + i)[0] for i, e in enumerate(envs)]),
                       dtype=p.dtype, device=p.device)
    states, actions = [obs], []
    rtg = [torch.full((n, 1), target_return, dtype=p.dtype, device=p.device) / model.rtg_scale]
    done = torch.zeros(n, dtype=torch.bool)
    total = torch.zeros(n, dtype=torch.float64)
    t = 0
    while not bool(done.all()) and t < model.max_timestep:
        K = model.context
        S = torch.stack(states[-K:], 1)
        placeholder = torch.zeros(n, model.act_dim, dtype=p.dtype, device=p.device)
        A = torch.stack([*(actions[-(K - 1):] if K > 1 else []), placeholder], 1)
        R = torch.stack(rtg[-K:], 1)
        T = torch.arange(t - S.shape[1] + 1, t + 1, device=p.device).repeat(n, 1)
        act = model.get_action(R, S, A, T)
        a_np = act.cpu().numpy()
        nxt, rew = [], torch.zeros(n, dtype=p.dtype)
        for i, e in enumerate(envs):
            if done[i]:
                nxt.append(np.zeros(o_dim, np.float32))
                continue
            o, r, term, trunc, _ = e.step(a_np[i])
            total[i] += r
            rew[i] = r
            done[i] = bool(term or trunc)
            nxt.append(np.asarray(o, np.float32))
        actions.append(act)
        states.append(torch.tensor(np.stack(nxt), dtype=p.dtype, device=p.device))
        rtg.append(rtg[-1] - rew.to(p.device)[:, None] / model.rtg_scale)
        t += 1
    return EvalResult(total.float(), float(total.mean()))


class EnvError(ValueError):
    """An env :func:`evaluate` (or ``lsdt train --env``) refuses, in its parts: ``env_id``,
    what is wrong with it (``problem``) and the remedy, where there is one (``hint``); its
    text is ``env_id '<env_id>' <problem>[: <hint>]``. ``lsdt evaluate`` words the problem
    anew where it chose the env itself."""

    def __init__(self, env_id: str, problem: str, hint: str | None = None) -> None:
        super().__init__(env_id, problem, hint)     # args: pickled and rebuilt whole
        self.env_id, self.problem, self.hint = env_id, problem, hint

    def __str__(self) -> str:
        return f"env_id {self.env_id!r} {self.problem}" + (f": {self.hint}" if self.hint else "")


def _make_envs(model: Policy, env_id: str, n: int, env_kwargs: dict,
               data: str | None = None) -> tuple[list, int]:
    """``n`` copies of the env and its observation size, checked against the model (``data``:
    the name of the training data the model was just built for, which a dims mismatch then
    names instead of the model). Raises :class:`EnvError`."""
    make = env_maker(env_id, **env_kwargs)
    try:
        envs = [make() for _ in range(n)]
    except gym.error.Error as exc:
        raise EnvError(env_id, f"is not a registered gymnasium env ({exc})") from None
    limit = envs[0].spec.max_episode_steps if envs[0].spec is not None else None
    if limit is not None and limit > model.max_timestep:
        raise EnvError(env_id, f"runs {limit} steps but the model embeds only max_timestep="
                               f"{model.max_timestep}; returns would be cut short")
    o_dim = int(np.prod(envs[0].observation_space.shape))
    a_dim = int(np.prod(envs[0].action_space.shape))
    dims = f"has obs/act dims ({o_dim}, {a_dim}) but"
    if (o_dim, a_dim) != (model.obs_dim, model.act_dim) and data is not None:
        raise EnvError(env_id, f"{dims} {data} has ({model.obs_dim}, {model.act_dim})",
                       f"pass the env {data} came from")
    if (o_dim, a_dim) != (model.obs_dim, model.act_dim):
        trained = getattr(model, "env_id", None)
        raise EnvError(env_id, f"{dims} the model expects ({model.obs_dim}, {model.act_dim})",
                       f"it was trained for {trained!r}" if trained is not None else
                       "roll it out in the env its training data came from (the model does "
                       "not record it)")
    return envs, o_dim
