"""InfoGAIL's reward and GSD's task-relevance constraint on the code posterior, with its dual.

GSD (Sreeramdass et al., ICLR 2025; workshop code ``GSDR.update_posterior``): the posterior
mean may move along a policy trajectory only as far as the discriminator deems the visited
(s, a) task-relevant: ``‖μ_q(s', a') − μ_q(s, a)‖² <= ℓ²`` with
``ℓ = (D_pure(s, a)/c)·‖(s', a') − (s, a)‖·λ_C`` (D_pure = c·sigmoid(f), no offset),
enforced by a Lagrange multiplier λ.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import as_tensor, cat_batches, check_range
from iclr25._contract import checked
from iclr25.datasets.control import OfflineDataset
from iclr25.gsd.networks import BoundedDiscriminator, GaussianPosterior

__all__ = ["DualVariable", "infer_demo_codes", "infogail_reward", "relevance_constraint"]


@checked
def infogail_reward(d: torch.Tensor, log_q: torch.Tensor, info_weight: float = 0.1
                    ) -> torch.Tensor:
    """Per-step policy reward ``softplus(D(s, a)) + λ_I·log q(z | s, a)``.

    Args:
        d: (n,) discriminator output D (c·sigmoid(f) + b when bounded, else the raw logit).
        log_q: (n,) posterior log-likelihood of the episode's code.
        info_weight: λ_I >= 0 (repo: 1 − ``dr_cc`` = 0.1).

    Returns:
        (n,) reward.

    Raises:
        ValueError: mismatched lengths, NaN/inf, ``info_weight < 0``.
    """
    info_weight = check_range(info_weight, "info_weight", 0.0)
    d = as_tensor(d, "d", ndim=1, floating=True)
    log_q = as_tensor(log_q, "log_q", ndim=1, floating=True)
    if len(d) != len(log_q):
        raise ValueError(f"mismatched lengths: d has {len(d)}, log_q has {len(log_q)}")
    return F.softplus(d) + info_weight * log_q


@checked
def relevance_constraint(
    posterior: GaussianPosterior,
    discriminator: BoundedDiscriminator,
    s: torch.Tensor, a: torch.Tensor, s_next: torch.Tensor, a_next: torch.Tensor,
    *, clip: float | None = None, scale: float = 1e-2, slack: float = 1e-6,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """GSD's per-transition constraint ``δ <= ℓ²`` and its (capped) slack.

    ``ℓ = (D_pure(s, a)/c)·‖(s', a') − (s, a)‖₂·λ_C`` (no gradient; D_pure = c·sigmoid(f)),
    ``δ = ‖μ_q(s', a') − μ_q(s, a)‖²``
    (gradient to the posterior), ``violation = min(ℓ² − δ, slack)``: negative where the
    constraint is broken, at most ``slack`` where it holds.

    Args:
        s, a, s_next, a_next: (n, obs_dim), (n, act_dim); ``a_next`` is the greedy action at
            ``s_next`` under the same code.
        clip: c, defaults to ``discriminator.clip``; must be > 0 (D/c is the relevance).
        scale: λ_C > 0 (repo 1e-3; chosen per environment on the training lanes).
        slack: cap on a satisfied constraint's value.

    Returns:
        ``(violation, limit, step)``, each (n,): ``min(ℓ² − δ, slack)``, ℓ, δ.

    Raises:
        ValueError: ``clip <= 0``, ``scale <= 0``, mismatched lengths, NaN/inf.
    """
    c = check_range(discriminator.clip if clip is None else clip, "clip", 0.0, low_open=True)
    scale = check_range(scale, "scale", 0.0, low_open=True)
    slack = check_range(slack, "slack", 0.0)
    s, a = as_tensor(s, "s", ndim=2), as_tensor(a, "a", ndim=2)
    s_next, a_next = as_tensor(s_next, "s_next", ndim=2), as_tensor(a_next, "a_next", ndim=2)
    obs, act = discriminator.obs_dim, discriminator.act_dim
    cat_batches(s=(s, obs), a=(a, act), s_next=(s_next, obs), a_next=(a_next, act))
    if not len(s) == len(a) == len(s_next) == len(a_next):
        raise ValueError(f"mismatched lengths: s {len(s)}, a {len(a)}, s_next {len(s_next)}, "
                         f"a_next {len(a_next)}")
    with torch.no_grad():
        d = discriminator.pure(s, a).clamp(min=0.0)     # the official ``pure_reward``
        dist = torch.linalg.vector_norm(torch.cat([s_next - s, a_next - a], -1), dim=-1)
        limit = d / c * dist * scale
    step = ((posterior(s_next, a_next)[0] - posterior(s, a)[0]) ** 2).sum(-1)
    violation = torch.clamp(limit ** 2 - step, max=slack)
    return violation, limit, step


@checked
class DualVariable(nn.Module):
    """The Lagrange multiplier λ = exp(log λ) of the relevance constraint, with its own Adam.

    ``step(violation)`` minimises ``λ·mean(violation)`` (violation detached) over log λ: λ
    falls while the constraints hold (mean > 0) and rises while they are broken.

    Raises:
        ValueError: ``init <= 0``, ``lr <= 0`` or ``slack < 0``.
    """

    def __init__(self, init: float = 100.0, lr: float = 1e-3, slack: float = 1e-6) -> None:
        super().__init__()
        init = check_range(init, "init", 0.0, low_open=True)
        self.lr = check_range(lr, "lr", 0.0, low_open=True)
        self.slack = check_range(slack, "slack", 0.0)
        self.log_lambda = nn.Parameter(torch.tensor(math.log(init)))
        self._opt = torch.optim.Adam([self.log_lambda], lr=self.lr)

    @property
    def value(self) -> float:
        return float(self.log_lambda.detach().exp())

    def forward(self) -> torch.Tensor:
        """λ, detached (it weighs the posterior loss, it is not trained by it)."""
        return self.log_lambda.exp().detach()

    def step(self, violation: torch.Tensor) -> float:
        """One dual step on a batch of violations; returns the new λ."""
        loss = self.log_lambda.exp() * violation.detach().mean().to(self.log_lambda)
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()
        return self.value


@checked
def infer_demo_codes(posterior: GaussianPosterior, demos: OfflineDataset) -> torch.Tensor:
    """Each demonstration's code: precision-weighted mean of the per-step posterior means.

    ``z_e = Σ_t σ_t⁻² μ_t / Σ_t σ_t⁻²`` per code dimension (repo ``infer_codes_for_demos``).

    Returns:
        (E, z_dim) tensor, one row per episode of ``demos``.

    Raises:
        ValueError: ``demos`` dims differ from the posterior's input.
    """
    in_dim = posterior.in_dim
    if demos.obs_dim + demos.act_dim != in_dim:
        raise ValueError(f"demos has obs_dim + act_dim = {demos.obs_dim + demos.act_dim}, the "
                         f"posterior expects {in_dim}")
    p = next(posterior.parameters())
    with torch.no_grad():
        mean, log_std = posterior(demos.observations.to(p), demos.actions.to(p))
    w = (-2 * log_std).exp()
    ep = demos.episode_index().to(p.device)
    num = torch.zeros(demos.n_episodes, mean.shape[1], device=p.device, dtype=p.dtype)
    den = torch.zeros_like(num)
    return num.index_add_(0, ep, w * mean) / den.index_add_(0, ep, w)
