"""The connection: a variational information bottleneck from each in-modal (IM) embedding to
the out-of-modal (OOM) embedding (paper Sec. 4.1, "connect"; Alemi et al., 2017)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import as_tensor, check_batch, check_int, check_range, resolve_seed
from iclr25._contract import checked
from iclr25._train import seeded_mlp

__all__ = ["VIB", "VIBLoss", "vib_loss"]


@checked
def vib_loss(pred: torch.Tensor, target: torch.Tensor, mu: torch.Tensor, logvar: torch.Tensor,
             beta: float = 0.0) -> torch.Tensor:
    """Reconstruction plus compression: ``MSE(pred, target) + beta * KL(N(mu, s^2) || N(0, I))``.

    The MSE is the mean over all elements; the KL is summed over the bottleneck and averaged
    over rows. ``beta = 0`` is the released code (which has no KL term).

    Args:
        pred, target: (n, D) predicted and target OOM embeddings.
        mu, logvar: (n, K) posterior mean and log-variance.
        beta: KL weight, >= 0.

    Returns:
        Scalar tensor.

    Raises:
        ValueError: shapes differ, NaN/inf, or ``beta < 0``.

    Examples:
        >>> import torch
        >>> z = torch.zeros(4, 3)
        >>> float(vib_loss(z, z, torch.zeros(4, 2), torch.zeros(4, 2), beta=1.0))
        0.0
    """
    beta = check_range(beta, "beta", 0)
    pred = as_tensor(pred, "pred", ndim=2)
    target = as_tensor(target, "target", ndim=2)
    mu = as_tensor(mu, "mu", ndim=2)
    logvar = as_tensor(logvar, "logvar", ndim=2)
    if pred.shape != target.shape:
        raise ValueError(f"pred {tuple(pred.shape)} and target {tuple(target.shape)} differ")
    if mu.shape != logvar.shape or len(mu) != len(pred):
        raise ValueError(f"mu {tuple(mu.shape)} and logvar {tuple(logvar.shape)} must match "
                         f"each other and pred's {len(pred)} rows")
    rec = F.mse_loss(pred, target)
    if beta == 0:
        return rec
    kl = 0.5 * (mu.pow(2) + logvar.exp() - 1.0 - logvar).sum(1).mean()
    return rec + beta * kl


@checked
class VIBLoss(nn.Module):
    """Module twin of :func:`vib_loss` with a fixed ``beta``."""

    def __init__(self, beta: float = 0.0) -> None:
        super().__init__()
        self.beta = check_range(beta, "beta", 0)

    def forward(self, pred: torch.Tensor, target: torch.Tensor, mu: torch.Tensor,
                logvar: torch.Tensor) -> torch.Tensor:
        return vib_loss(pred, target, mu, logvar, self.beta)


@checked
class VIB(nn.Module):
    """Variational bottleneck ``h -> (pred, mu, logvar)``: ``pred = g(z)``,
    ``z ~ N(mu, sigma^2)``, as the official ``models/vib.py`` (its output is the decoder's).

    Everything the prediction carries about ``h`` passes through the K-wide ``z``.
    ``residual=True`` predicts ``h + g(z)`` instead: it anchors the prediction to its input
    (with a zero decoder the prediction *is* the input), so the bottleneck can be bypassed;
    an option, not the paper's model.

    Args:
        dim: embedding width D (input and output).
        bottleneck: K, the width of z.
        hidden: width of the encoder and decoder hidden layers.
        residual: predict ``h + g(z)`` instead of ``g(z)``.
        seed: initialisation seed (int, Generator or None).

    In training mode z is sampled (reparameterised, from ``generator`` if given); in eval
    mode z = mu, so predictions are deterministic.
    """

    def __init__(self, dim: int, bottleneck: int = 256, hidden: int = 1024, *,
                 residual: bool = False, seed: int | torch.Generator | None = 0) -> None:
        super().__init__()
        if not isinstance(residual, bool):
            raise TypeError(f"residual must be a bool, got {type(residual).__name__}")
        self.residual = residual
        self.dim = check_int(dim, "dim", 1)
        self.bottleneck = check_int(bottleneck, "bottleneck", 1)
        self.hidden = check_int(hidden, "hidden", 1)
        gen = resolve_seed(seed)
        s1, s2 = (int(v) for v in torch.randint(0, 2**31 - 1, (2,), generator=gen))
        self.encoder = seeded_mlp([dim, hidden, hidden, 2 * bottleneck], seed=s1)
        self.decoder = seeded_mlp([bottleneck, hidden, hidden, dim], seed=s2)

    def forward(self, h: torch.Tensor, *, generator: torch.Generator | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(n, D) -> pred (n, D), mu (n, K), logvar (n, K)."""
        check_batch(h, "h", ndim=2, width=self.dim)
        mu, logvar = self.encoder(h).chunk(2, dim=1)
        logvar = logvar.clamp(-10.0, 10.0)
        if self.training:
            eps = torch.randn(mu.shape, generator=generator, dtype=mu.dtype,
                              device="cpu" if generator is not None else mu.device)
            z = mu + eps.to(mu.device) * (0.5 * logvar).exp()
        else:
            z = mu
        pred = self.decoder(z)
        return (h + pred if self.residual else pred), mu, logvar
