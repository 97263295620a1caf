"""The three networks of InfoGAIL/GSD: latent policy, bounded discriminator, code posterior."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated

import torch
from torch import nn

from iclr25._checks import cat_batches, check_int, check_range, run_model
from iclr25._contract import Range, checked
from iclr25._train import seeded_init, seeded_mlp

__all__ = ["BoundedDiscriminator", "GaussianPosterior", "LatentPolicy"]


@checked
class LatentPolicy(nn.Module):
    """π(a | s, z): Gaussian actor on ``[s, z]`` with a state-independent log-std, plus a critic.

    Args:
        obs_dim, act_dim: sizes of the observation and action.
        z_dim: latent code size (paper: 2), >= 1.
        hidden: widths of both MLPs.
        seed: initialisation seed (global RNG untouched).

    Raises:
        ValueError: a size < 1.
    """

    def __init__(self, obs_dim: int, act_dim: int, z_dim: int = 2, *,
                 hidden: Sequence[int] = (64, 64), seed: int = 0) -> None:
        super().__init__()
        self.obs_dim = check_int(obs_dim, "obs_dim", 1)
        self.act_dim = check_int(act_dim, "act_dim", 1)
        self.z_dim = check_int(z_dim, "z_dim", 1)
        sizes = [self.obs_dim + self.z_dim, *hidden]
        self.actor = seeded_mlp([*sizes, self.act_dim], seed=seed, activation=nn.Tanh)
        self.critic = seeded_mlp([*sizes, 1], seed=seed + 1, activation=nn.Tanh)
        with torch.no_grad():  # CleanRL: small last actor layer, so early actions stay near 0
            self.actor[-1].weight.mul_(0.01)
            self.actor[-1].bias.zero_()
        self.log_std = nn.Parameter(torch.full((self.act_dim,), -0.5))

    def forward(self, obs: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """(n, act_dim) mean action (the greedy action, before clipping to the env's box)."""
        return self.actor(cat_batches(obs=(obs, self.obs_dim), z=(z, self.z_dim)))

    def distribution(self, obs: torch.Tensor, z: torch.Tensor) -> torch.distributions.Normal:
        # no argument validation: the scale exp(log_std) is positive by construction, and the
        # checks cost more than the distribution on a PPO minibatch
        return torch.distributions.Normal(self(obs, z), self.log_std.exp(), validate_args=False)

    def value(self, obs: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self.critic(torch.cat([obs, z], -1)).squeeze(-1)

    def act(self, obs: torch.Tensor, z: torch.Tensor, *, deterministic: bool = False,
            generator: torch.Generator | None = None) -> torch.Tensor:
        """Sample (or, ``deterministic``, take the mean) action for each row."""
        mean = self(obs, z)
        if deterministic:
            return mean
        noise = torch.randn(mean.shape, generator=generator).to(mean)
        return mean + self.log_std.exp() * noise


#: a discriminator's bound c: c·sigmoid(f) and −c/2 finite in float32, else D is ±inf
Clip = Annotated[float, Range(0.0, float(torch.finfo(torch.float32).max))]


@checked
class BoundedDiscriminator(nn.Module):
    """The official ``PairDiscriminator``: D(s, a) = c·sigmoid(f(s, a)) + b, bounded by c.

    With ``clip`` = c > 0 the *pure* score c·sigmoid(f) ∈ [0, c] (closed: sigmoid rounds to
    0 or 1 once |f| exceeds ~17 in float32, ~37 in float64) measures expert-likeness (GSD's
    relevance is pure/c) and the learnable offset b, initialised at −c/2, is added for
    training and reward (the official code sets ``offset_reward`` whenever c > 0): BCE is taken
    on D as a logit (expert label 1) and the reward is softplus(D). ``clip = 0`` gives the
    unbounded InfoGAIL discriminator D = f, without offset.

    Raises:
        ValueError: ``clip`` outside [0, 3.4e38] (its offset −c/2 and c·sigmoid must be
            finite in float32, or D leaves its range).
    """

    def __init__(self, obs_dim: int, act_dim: int, clip: Clip = 10.0, *,
                 hidden: Sequence[int] = (64, 64), seed: int = 0) -> None:
        super().__init__()
        self.clip = check_range(clip, "clip", 0.0)
        self.obs_dim = check_int(obs_dim, "obs_dim", 1)
        self.act_dim = check_int(act_dim, "act_dim", 1)
        self.net = seeded_mlp([self.obs_dim + self.act_dim, *hidden, 1], seed=seed,
                              activation=nn.Tanh)
        self.offset = nn.Parameter(torch.tensor(-self.clip / 2), requires_grad=self.clip > 0)

    def logits(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        """(n,) f(s, a), the network's raw output."""
        x = cat_batches(obs=(obs, self.obs_dim), act=(act, self.act_dim))
        return run_model(self.net, x, "obs and act").squeeze(-1)

    def pure(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        """(n,) c·sigmoid(f) ∈ [0, c] when clip > 0 (no offset: the relevance score), else f.

        Raises:
            ValueError: ``f`` is not finite: inputs so large (~1e38 in float32) that the
                first layer overflows, where the score would be NaN, outside [0, c].
        """
        f = self.logits(obs, act)
        if not bool(torch.isfinite(f).all()):
            raise ValueError("obs and act give the discriminator non-finite logits: NaN or "
                             "inf entries, or entries so large (~1e38 in float32) that its "
                             "first layer overflows")
        return self.clip * torch.sigmoid(f) if self.clip > 0 else f

    def forward(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        """(n,) D(s, a) = pure + b: the logit BCE trains and softplus turns into the reward."""
        return self.pure(obs, act) + self.offset


@checked
class GaussianPosterior(nn.Module):
    """q(z | s, a) = N(μ(s, a), diag σ(s, a)²), log σ clamped to [-20, 2].

    Args:
        spectral: wrap every linear layer in ``spectral_norm`` (the IG+M+SN baseline), so μ is
            ``lipschitz``-Lipschitz in (s, a) (inputs are scaled by ``lipschitz``).

    Raises:
        ValueError: a size < 1, ``lipschitz <= 0``.
    """

    def __init__(self, obs_dim: int, act_dim: int, z_dim: int = 2, *,
                 hidden: Sequence[int] = (64, 64), spectral: bool = False,
                 lipschitz: float = 1.0, seed: int = 0) -> None:
        super().__init__()
        self.z_dim = check_int(z_dim, "z_dim", 1)
        self.lipschitz = check_range(lipschitz, "lipschitz", 0.0, low_open=True)
        self.spectral = bool(spectral)
        self.in_dim = in_dim = check_int(obs_dim, "obs_dim", 1) + check_int(act_dim, "act_dim", 1)
        self.body = seeded_mlp([in_dim, *hidden, 2 * self.z_dim], seed=seed, activation=nn.ReLU)
        if self.spectral:
            with seeded_init(seed):  # spectral_norm draws its power-iteration vectors
                for i, layer in enumerate(self.body):
                    if isinstance(layer, nn.Linear):
                        self.body[i] = nn.utils.parametrizations.spectral_norm(layer)

    def forward(self, obs: torch.Tensor, act: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mean, log_std)``, each (n, z_dim)."""
        x = cat_batches(obs=(obs, None), act=(act, None))
        if x.shape[-1] != self.in_dim:
            raise ValueError(f"obs and act must have {self.in_dim} features together, got "
                             f"{obs.shape[-1]} + {act.shape[-1]}")
        if self.spectral:
            x = x * self.lipschitz
        mean, log_std = self.body(x).chunk(2, -1)
        return mean, log_std.clamp(-20.0, 2.0)

    def log_prob(self, obs: torch.Tensor, act: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """(n,) log q(z | s, a), summed over code dimensions."""
        mean, log_std = self(obs, act)
        var = (2 * log_std).exp()
        return (-0.5 * (z - mean) ** 2 / var - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
