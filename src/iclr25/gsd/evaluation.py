"""Novel-behaviour recovery: the repo's ``VL_K`` metric and the evaluation that feeds it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from iclr25._checks import ArrayLike, as_tensor, check_int, resolve_seed
from iclr25._contract import PositiveInt, checked
from iclr25.gsd.testbed import LaneReachVec, make_vec

__all__ = ["Evaluation", "recovery_error", "select_behaviours", "evaluate"]

#: a latent-conditioned policy: ``policy(obs (n, d), z (n, z_dim)) -> mean action (n, a)``
Policy = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def rolled_policy(policy: object) -> tuple[Policy, GSDResult | None]:
    """What every evaluator rolls out: the policy of a training result (what
    :func:`~iclr25.gsd.train` returns, :func:`~iclr25.gsd.io.load` reads) and that result, or
    a callable ``policy(obs, z)`` as given and None.

    Raises:
        TypeError: ``policy`` neither a training result nor callable.
    """
    if isinstance(policy, GSDResult):
        return policy.policy, policy
    if not callable(policy):
        raise TypeError(f"policy must be a GSDResult (what gsd.train returns) or a callable "
                        f"policy(obs, z), got {type(policy).__name__}")
    return policy, None


def _check_budget(factors: ArrayLike, targets: ArrayLike, budget: int
                  ) -> tuple[torch.Tensor, torch.Tensor, int]:
    f = as_tensor(factors, "factors", ndim=1, floating=True)
    t = as_tensor(targets, "targets", ndim=1, floating=True).to(f)
    budget = check_int(budget, "budget", 1, len(f))
    return f, t, budget


@checked
def select_behaviours(factors: ArrayLike, targets: ArrayLike, budget: int = 10) -> torch.Tensor:
    """Index of the behaviour closest to each target within each chunk of ``budget``.

    Returns:
        (n_chunks, n_targets) int64 indices into ``factors`` (a trailing partial chunk is
        dropped, as in the repo).
    """
    f, t, budget = _check_budget(factors, targets, budget)
    n_chunks = len(f) // budget
    chunks = f[: n_chunks * budget].view(n_chunks, budget)
    best = (chunks[:, :, None] - t[None, None, :]).abs().argmin(1)
    return best + budget * torch.arange(n_chunks, device=f.device)[:, None]


@checked
def recovery_error(factors: ArrayLike, targets: ArrayLike, budget: int = 10) -> float:
    """``VL_K``: mean over chunks of ``budget`` behaviours of min |f − target|, mean over targets.

    The repo's ``run_model.evaluate`` metric (lower is better): a user who may try ``budget``
    codes picks the one whose behaviour factor is closest to what they want.

    Args:
        factors: (n,) behaviour factor of each rolled-out code.
        targets: (m,) wanted factors (held out from the demonstrations).
        budget: K, in [1, n].

    Returns:
        Python float.

    Raises:
        ValueError: factors not 1-D, empty or NaN; empty targets; budget <= 0 or > n.

    Examples:
        >>> recovery_error([0.0, 0.5, 1.0, 0.9], [1.0], budget=2)
        0.25
    """
    f, t, budget = _check_budget(factors, targets, budget)
    idx = select_behaviours(f, t, budget)
    return float((f[idx] - t[None, :]).abs().mean())


@checked
@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate` measured: per-code rollouts and the recovery metrics."""

    codes: torch.Tensor          # (n, z_dim)
    factors: torch.Tensor        # (n,)
    returns: torch.Tensor        # (n,)
    success: torch.Tensor        # (n,) bool
    vl: dict[int, float]         # budget -> VL_K over the targets
    selected_success: float      # success of the per-chunk argmin behaviours (first budget)


@checked
def evaluate(
    policy: GSDResult | Policy,
    env: str | LaneReachVec,
    *,
    targets: Sequence[float] | torch.Tensor,
    n_codes: PositiveInt = 300,
    budgets: Sequence[int] = (10,),
    z_dim: int | None = None,
    seed: int | torch.Generator | None = 0,
) -> Evaluation:
    """Roll out one deterministic episode per prior code z ~ N(0, I) and score recovery.

    Works for what :func:`~iclr25.gsd.train` returns (or :func:`~iclr25.gsd.io.load` reads),
    whose policy is rolled out, and for any latent-conditioned policy: ``policy(obs (n, d),
    z (n, z_dim)) -> mean action`` (a :class:`~iclr25.gsd.LatentPolicy` is one), on the
    policy's device.

    Args:
        policy: a :class:`~iclr25.gsd.GSDResult` or a callable policy.
        env: a registered env id with a batched version, or such an env with
            ``num_envs == n_codes``.
        targets: held-out behaviour factors.
        n_codes: prior samples (repo 1500; spec 300).
        budgets: the K of each ``VL_K``.
        z_dim: code size; defaults to ``policy.z_dim``.

    Raises:
        ValueError: empty targets, a budget <= 0 or > n_codes, n_codes < 1, env mismatch.
        TypeError: ``policy`` neither a training result nor callable.
    """
    policy, _ = rolled_policy(policy)
    n_codes = check_int(n_codes, "n_codes", 1)
    t = as_tensor(targets, "targets", ndim=1, dtype=torch.float32)
    budgets = [check_int(b, "budgets", 1, n_codes) for b in budgets]
    if not budgets:
        raise ValueError("budgets is empty")
    z_dim = check_int(z_dim if z_dim is not None else getattr(policy, "z_dim", 0), "z_dim", 1)
    param = next(iter(getattr(policy, "parameters", lambda: iter([torch.zeros(())]))()))
    device = param.device
    if isinstance(env, str):
        try:
            env = make_vec(env, n_codes, device=device)
        except ValueError as exc:   # a gymnasium env: the other evaluator
            raise ValueError(f"{exc}; for any gymnasium env use iclr25.gsd.gym.evaluate_gym("
                             f"policy, {env!r}, factor='obs:0', ...)") from None
    elif getattr(env, "num_envs", None) != n_codes:
        raise ValueError(f"env must have num_envs == n_codes ({n_codes})")
    gen = resolve_seed(seed)
    codes = torch.randn(n_codes, z_dim, generator=gen).to(device, param.dtype)
    obs = env.reset(seed=gen).to(param.dtype)
    ret = torch.zeros(n_codes, device=device)
    with torch.no_grad():
        done = False
        while not done:
            obs, r, term, trunc, info = env.step(policy(obs, codes))
            ret += r.to(ret)
            done = bool((term | trunc).all())
    factors, success = info["factor"].float(), info["success"]
    vl = {b: recovery_error(factors, t.to(factors), b) for b in budgets}
    sel = select_behaviours(factors, t.to(factors), budgets[0])
    return Evaluation(codes, factors, ret, success, vl, float(success[sel].float().mean()))


# last: training imports gym, which imports this module's recovery_error (defined by now);
# the package imports this module first, so GSDResult is here before any call reads it
from iclr25.gsd.training import GSDResult  # noqa: E402
