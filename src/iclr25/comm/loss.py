"""Contrastive losses: SimCLR's NT-Xent (``infonce``), the cross-modal CLIP loss (the
"Cross" baseline) and the CoMM loss over the n+1 modality masks (Sec. 3.3 of the paper)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import ArrayLike, as_tensor, check_int, check_range
from iclr25._contract import checked

__all__ = ["ClipLoss", "CoMMLoss", "InfoNCELoss", "clip_loss", "comm_loss", "infonce",
           "modality_masks"]


def _pair(z1: ArrayLike, z2: ArrayLike, names: tuple[str, str] = ("z1", "z2")
          ) -> tuple[torch.Tensor, torch.Tensor]:
    """Two (N, d) floating embeddings of the same shape, N >= 2, finite."""
    a = as_tensor(z1, names[0], ndim=2)
    b = as_tensor(z2, names[1], ndim=2)
    for t, name in ((a, names[0]), (b, names[1])):
        if not t.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got {t.dtype}")
    if a.shape != b.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    if len(a) < 2:
        raise ValueError(f"{names[0]} needs at least 2 rows (one positive, one negative), "
                         f"got {len(a)}")
    return a, b.to(a.dtype)


def _temperature(temperature: object) -> float:
    return check_range(temperature, "temperature", 0.0, low_open=True)


def _infonce(a: torch.Tensor, b: torch.Tensor, temperature: float) -> torch.Tensor:
    """Unchecked NT-Xent of two (N, d) batches (rows i of a and b are the positive pair)."""
    a, b = F.normalize(a, dim=1), F.normalize(b, dim=1)
    z = torch.cat([a, b], 0)                                     # (2N, d)
    # in place on the fresh (2N, 2N) product (the division's backward does not read it): an
    # out-of-place mask costs two more passes over it, forward and backward (~10% at N = 256)
    sim = (z @ z.T / temperature).fill_diagonal_(float("-inf"))
    n = len(a)
    pos = torch.arange(n, 3 * n, device=a.device) % (2 * n)       # row i's positive: i +- N
    return F.cross_entropy(sim, pos)


@checked
def infonce(z1: ArrayLike, z2: ArrayLike, temperature: float = 0.1) -> torch.Tensor:
    """SimCLR's NT-Xent between two batches of embeddings, L2-normalised inside.

    Row ``i`` of ``z1`` and row ``i`` of ``z2`` are a positive pair; the other ``2N - 2``
    rows of both batches are its negatives. The loss is the mean over the ``2N`` anchors of
    ``-log softmax`` of the positive's cosine similarity / ``temperature`` (Chen et al.
    2020; the ``Î`` estimator of CoMM's Eq. 3).

    Args:
        z1, z2: (N, d) floating embeddings, N >= 2 (tensors, numpy arrays or lists).
        temperature: tau > 0 (0.1 in the paper).

    Returns:
        A scalar tensor in the dtype and on the device of ``z1``; symmetric in (z1, z2),
        invariant to positive rescaling of rows and to a joint rotation of both batches.

    Raises:
        ValueError: shapes differ, N < 2, NaN/inf, temperature <= 0.
        TypeError: integer embeddings.

    Examples:
        >>> import torch
        >>> z = torch.eye(4)
        >>> round(float(infonce(z, z, temperature=1.0)), 4)  # -log(e / (e + 6)) per anchor
        1.1654
    """
    a, b = _pair(z1, z2)
    return _infonce(a, b, _temperature(temperature))


@checked
def clip_loss(z1: ArrayLike, z2: ArrayLike, temperature: float = 0.1) -> torch.Tensor:
    """The symmetric cross-modal InfoNCE of CLIP (open_clip's ``ClipLoss``): the "Cross"
    baseline of the paper, which aligns modality 1 with modality 2 and keeps mainly their
    shared (redundant) information.

    ``(CE(z1 z2^T / tau, diag) + CE(z2 z1^T / tau, diag)) / 2`` on L2-normalised rows;
    unlike :func:`infonce`, negatives come only from the other modality.

    Args:
        z1, z2: (N, d) embeddings of the two modalities, N >= 2.
        temperature: tau > 0 (a fixed temperature; CLIP learns it, CoMM's Cross uses 0.1).

    Returns:
        A scalar tensor.

    Raises:
        ValueError, TypeError: as :func:`infonce`.
    """
    a, b = _pair(z1, z2)
    tau = _temperature(temperature)
    logits = F.normalize(a, dim=1) @ F.normalize(b, dim=1).T / tau
    target = torch.arange(len(a), device=a.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2


@checked
def modality_masks(n: int, device: torch.device | str | None = None) -> torch.Tensor:
    """The n+1 modality masks of CoMM: the n one-hot masks, then the all-True mask.

    Args:
        n: number of modalities (>= 1).

    Returns:
        (n + 1, n) bool tensor; ``modality_masks(2)`` is ``[[T, F], [F, T], [T, T]]``.
    """
    n = check_int(n, "n", 1)
    return torch.cat([torch.eye(n, dtype=torch.bool), torch.ones(1, n, dtype=torch.bool)]
                     ).to(device)


def _check_weights(weights: ArrayLike, n_terms: int) -> torch.Tensor:
    w = as_tensor(weights, "weights", ndim=1, dtype=torch.float64)
    if len(w) != n_terms:
        raise ValueError(f"weights must have one entry per term (n + 1 = {n_terms}), "
                         f"got {len(w)}")
    if bool((w < 0).any()) or float(w.sum()) <= 0:
        raise ValueError(f"weights must be >= 0 with a positive sum, got {w.tolist()}")
    return w


def _check_views(z1: object, z2: object) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    for v, name in ((z1, "z1"), (z2, "z2")):
        if isinstance(v, torch.Tensor) or not isinstance(v, Sequence):
            raise TypeError(f"{name} must be a list of (N, d) embeddings (one per mask, the "
                            f"full embedding last), got {type(v).__name__}")
    if len(z1) != len(z2):  # type: ignore[arg-type]
        raise ValueError(f"z1 and z2 must hold the same number of embeddings, got "
                         f"{len(z1)} and {len(z2)}")  # type: ignore[arg-type]
    if len(z1) < 3:  # type: ignore[arg-type]
        raise ValueError(f"z1 must hold n + 1 >= 3 embeddings (at least 2 modalities and the "
                         f"full one), got {len(z1)}")  # type: ignore[arg-type]
    a, b = [], []
    for i, (u, v) in enumerate(zip(z1, z2, strict=True)):  # type: ignore[call-overload]
        u, v = _pair(u, v, (f"z1[{i}]", f"z2[{i}]"))
        if a and u.shape != a[0].shape:
            raise ValueError(f"z1[{i}] has shape {tuple(u.shape)}, but z1[0] has "
                             f"{tuple(a[0].shape)}: every embedding needs the same batch size "
                             f"and width")
        a.append(u)
        b.append(v)
    return a, b


def _comm_terms(a: list[torch.Tensor], b: list[torch.Tensor], temperature: float
                ) -> torch.Tensor:
    """(n+1,) unchecked terms ``(NCE(a_i, b_full) + NCE(b_i, a_full)) / 2``."""
    return torch.stack([(_infonce(u, b[-1], temperature) + _infonce(v, a[-1], temperature)) / 2
                        for u, v in zip(a, b, strict=True)])


@checked
def comm_loss(z1: Sequence[torch.Tensor], z2: Sequence[torch.Tensor],
              temperature: float = 0.1, weights: ArrayLike | None = None) -> torch.Tensor:
    """The CoMM loss between the n+1 masked embeddings of two augmented views.

    ``L = sum_i w_i (NCE(Z'_i, Z''_full) + NCE(Z''_i, Z'_full)) / 2`` over the n one-hot
    masks and the full mask, with ``w_i = 1 / (n + 1)`` by default (the official code
    averages the terms; the paper writes ``-sum_i Î(Z'_i; Z'') - Î(Z'; Z'')``, Eq. 6). The
    unimodal terms bring in redundant and unique information fast; the last term (SimCLR on
    the fused embedding) also captures synergy.

    Args:
        z1, z2: lists of n+1 (N, d) embeddings of view 1 and view 2, one per row of
            :func:`modality_masks`, the full-modality embedding last.
        temperature: tau > 0.
        weights: None (the mean) or n+1 non-negative weights, normalised to sum 1: the loss
            is ``sum_i w_i L_i / sum_i w_i``. The official ``CoMMLoss`` returns
            ``mean_i(w_i L_i) = sum_i w_i L_i / (n + 1)`` instead: the two agree when the
            weights sum to n+1 (all ones, for example) and otherwise differ by the constant
            factor ``sum_i w_i / (n + 1)``, which only rescales the learning rate.

    Returns:
        A scalar tensor.

    Raises:
        TypeError: z1/z2 not lists, or integer embeddings.
        ValueError: lists of different lengths or fewer than 3 entries, embeddings of
            differing shapes, N < 2, NaN/inf, temperature <= 0, ``len(weights) != n + 1``.
    """
    a, b = _check_views(z1, z2)
    tau = _temperature(temperature)
    w = None if weights is None else _check_weights(weights, len(a))
    terms = _comm_terms(a, b, tau)
    if w is None:
        return terms.mean()
    return (terms * (w / w.sum()).to(terms)).sum()


@checked
class InfoNCELoss(nn.Module):
    """``nn.Module`` twin of :func:`infonce`."""

    def __init__(self, temperature: float = 0.1) -> None:
        super().__init__()
        self.temperature = _temperature(temperature)

    def forward(self, z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
        return infonce(z1, z2, self.temperature)


@checked
class ClipLoss(nn.Module):
    """``nn.Module`` twin of :func:`clip_loss`."""

    def __init__(self, temperature: float = 0.1) -> None:
        super().__init__()
        self.temperature = _temperature(temperature)

    def forward(self, z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
        return clip_loss(z1, z2, self.temperature)


@checked
class CoMMLoss(nn.Module):
    """``nn.Module`` twin of :func:`comm_loss`; the last call's n+1 terms are in ``.terms``.

    Args:
        temperature: tau > 0 (0.1 in the paper).
        weights: None (mean over the n+1 terms) or n+1 non-negative weights, normalised to
            sum 1 (see :func:`comm_loss` for how this differs from the official code).

    Raises:
        ValueError: temperature <= 0 or bad weights at construction; at call, as
            :func:`comm_loss` (including a ``weights`` length that is not n+1).

    Examples:
        >>> import torch
        >>> loss = CoMMLoss(temperature=0.1)
        >>> z1 = [torch.randn(8, 4, generator=torch.Generator().manual_seed(i)) for i in range(3)]
        >>> z2 = [z + 0.01 for z in z1]
        >>> value = loss(z1, z2)
        >>> torch.allclose(value, loss.terms.mean())
        True
    """

    def __init__(self, temperature: float = 0.1, weights: ArrayLike | None = None) -> None:
        super().__init__()
        self.temperature = _temperature(temperature)
        if weights is not None:
            w = as_tensor(weights, "weights", ndim=1, dtype=torch.float64)
            _check_weights(w, len(w))
            weights = w
        self.weights = weights
        self.terms: torch.Tensor | None = None

    def forward(self, z1: Sequence[torch.Tensor], z2: Sequence[torch.Tensor]) -> torch.Tensor:
        a, b = _check_views(z1, z2)
        w = None if self.weights is None else _check_weights(self.weights, len(a))
        terms = _comm_terms(a, b, self.temperature)
        self.terms = terms.detach()
        if w is None:
            return terms.mean()
        return (terms * (w / w.sum()).to(terms)).sum()
