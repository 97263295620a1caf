"""An EMA vector quantiser with k-means initialisation and dead-code replacement, the VQ that
V3 puts on the content branch (settings of ``vector_quantize_pytorch.VectorQuantize``)."""

from __future__ import annotations

import math

import torch
from torch import nn

from iclr25._checks import check_int, check_tensor
from iclr25._contract import checked
from iclr25._engine import gather, local_rows

__all__ = ["EMAVectorQuantizer", "kmeans"]


@checked
def kmeans(x: torch.Tensor, k: int, iters: int = 10, *,
           generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Lloyd's k-means from k distinct random rows; returns (centroids (k, d), counts (k,))."""
    x = check_tensor(x, "x", ndim=2, floating=True)
    idx = torch.randperm(x.shape[0], generator=generator)[:k].to(x.device)
    if idx.numel() < k:  # fewer rows than codes: sample with replacement
        idx = torch.randint(0, x.shape[0], (k,), generator=generator).to(x.device)
    c = x[idx].clone()
    for _ in range(iters):
        codes = torch.cdist(x, c).argmin(1)
        counts = torch.bincount(codes, minlength=k).to(x.dtype)
        sums = torch.zeros_like(c).index_add_(0, codes, x)
        c = torch.where(counts[:, None] > 0, sums / counts.clamp_min(1)[:, None], c)
    codes = torch.cdist(x, c).argmin(1)
    return c, torch.bincount(codes, minlength=k).to(x.dtype)


@checked
class EMAVectorQuantizer(nn.Module):
    """Nearest-codeword quantiser whose codebook follows an exponential moving average.

    In training each step sets ``cluster_size <- decay * cluster_size + (1 - decay) * counts``
    and ``embed_avg <- decay * embed_avg + (1 - decay) * sum of assigned inputs``; the codebook
    is ``embed_avg`` over the Laplace-smoothed cluster sizes. Codes whose EMA size falls below
    ``dead_code_threshold`` are re-seeded from random inputs of the batch. The first training
    batch initialises the codebook by k-means when ``kmeans_init``. In a training loop with
    gathered rows (:func:`iclr25._engine.gather`, DDP) the k-means, the EMA and the commitment
    loss read every process's rows, and the dead-code draws are the same in every process:
    the codebook stays one, the one a single process would learn.

    Args:
        codebook_size: K >= 2 codes.
        dim: code width d.
        decay: EMA decay in (0, 1).
        commitment: weight of the commitment loss ``mse(x, sg(q))``.
        kmeans_init: initialise from the first training batch by k-means.
        dead_code_threshold: EMA size under which a code is replaced (0 disables).
        seed: seeds the initial codebook, k-means and dead-code draws.

    Forward:
        ``x`` (..., d) -> (straight-through output (..., d), codes (...) int64, commit loss).

    Raises:
        ValueError: codebook_size < 2, dim < 1, decay outside (0, 1), negative weights.
    """

    def __init__(self, codebook_size: int, dim: int, decay: float = 0.98,
                 commitment: float = 1.0, kmeans_init: bool = True,
                 dead_code_threshold: float = 16, *, eps: float = 1e-5,
                 seed: int = 0) -> None:
        super().__init__()
        k = check_int(codebook_size, "codebook_size", 2)
        d = check_int(dim, "dim", 1)
        if not (isinstance(decay, (int, float)) and 0 < decay < 1):
            raise ValueError(f"decay must lie in (0, 1), got {decay!r}")
        for name, v in (("commitment", commitment), ("dead_code_threshold", dead_code_threshold)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a non-negative number, got {v!r}")
        self.codebook_size, self.dim, self.decay = k, d, float(decay)
        self.commitment, self.kmeans_init = float(commitment), bool(kmeans_init)
        self.dead_code_threshold, self.eps = float(dead_code_threshold), float(eps)
        self.seed = check_int(seed, "seed", 0)
        g = torch.Generator().manual_seed(self.seed)
        embed = torch.randn(k, d, generator=g) / math.sqrt(d)
        self.register_buffer("codebook", embed)
        self.register_buffer("cluster_size", torch.ones(k))
        self.register_buffer("embed_avg", embed.clone())
        self.register_buffer("initted", torch.tensor(not self.kmeans_init))
        self._gen: torch.Generator | None = None

    def _generator(self) -> torch.Generator:
        if self._gen is None:
            self._gen = torch.Generator().manual_seed(self.seed + 1)
        return self._gen

    @torch.no_grad()
    def _init(self, flat: torch.Tensor) -> None:
        c, counts = kmeans(flat, self.codebook_size, generator=self._generator())
        self.codebook.copy_(c)
        self.cluster_size.copy_(counts)
        self.embed_avg.copy_(c * counts[:, None])
        self.initted.fill_(True)

    @torch.no_grad()
    def _ema(self, flat: torch.Tensor, codes: torch.Tensor) -> None:
        k, d = self.codebook_size, self.decay
        counts = torch.bincount(codes, minlength=k).to(flat.dtype)
        sums = torch.zeros(k, flat.shape[1], dtype=flat.dtype, device=flat.device)
        sums.index_add_(0, codes, flat)
        self.cluster_size.mul_(d).add_(counts, alpha=1 - d)
        self.embed_avg.mul_(d).add_(sums, alpha=1 - d)
        n = self.cluster_size.sum()
        smoothed = (self.cluster_size + self.eps) / (n + k * self.eps) * n
        self.codebook.copy_(self.embed_avg / smoothed[:, None])
        dead = self.cluster_size < self.dead_code_threshold
        if bool(dead.any()):
            pick = torch.randint(0, flat.shape[0], (int(dead.sum()),),
                                 generator=self._generator()).to(flat.device)
            new = flat[pick]
            self.codebook[dead] = new
            self.cluster_size[dead] = self.dead_code_threshold
            self.embed_avg[dead] = new * self.dead_code_threshold

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        """Nearest code index of each row of ``x`` (..., d) -> (...) int64 (no update)."""
        flat = x.reshape(-1, self.dim)
        return torch.cdist(flat, self.codebook.to(flat.dtype)).argmin(1).reshape(x.shape[:-1])

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = check_tensor(x, "x", floating=True)
        if x.shape[-1] != self.dim:
            raise ValueError(f"x must have last dimension dim={self.dim}, got {x.shape[-1]}")
        # under a gathered DDP loop the codebook sees (and every process updates it from)
        # the global batch, as one process would; x itself otherwise
        whole = gather(x)
        flat = whole.reshape(-1, self.dim)
        # the codebook's state in its own dtype (float32 under bf16 autocast)
        state = flat.detach().to(self.codebook.dtype)
        if self.training and not bool(self.initted):
            self._init(state)
        codes = torch.cdist(flat.detach(), self.codebook.to(flat.dtype)).argmin(1)
        q = self.codebook.to(flat.dtype)[codes]
        commit = self.commitment * torch.nn.functional.mse_loss(flat, q.detach())
        if self.training:
            self._ema(state, codes)
        out = flat + (q - flat).detach()
        return (local_rows(out.reshape(whole.shape)),
                local_rows(codes.reshape(whole.shape[:-1])), commit)
