"""Explore: agreement between the IM heads applied to OOM embeddings picks confident
pseudo-labels; a prior KL keeps the OOM head's label distribution from collapsing
(paper Sec. 4.2; the released code's defects fixed, notes Sec. 4.2)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from iclr25._checks import ArrayLike, as_tensor, check_int, check_range
from iclr25._contract import checked

__all__ = ["entropy_discrepancy", "prior_kl", "select_agreement"]


def _entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = logits.log_softmax(1)
    return -(logp.exp() * logp).sum(1)


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
    a = as_tensor(a, "logits_a", ndim=2, floating=True)
    b = as_tensor(b, "logits_b", ndim=2, floating=True)
    if a.shape != b.shape:
        raise ValueError(f"logits_a {tuple(a.shape)} and logits_b {tuple(b.shape)} differ")
    return a, b


@checked
def entropy_discrepancy(logits_a: torch.Tensor, logits_b: torch.Tensor) -> torch.Tensor:
    """Per-sample ``|H(softmax(a)) - H(softmax(b))|`` (nats).

    Args:
        logits_a, logits_b: (n, C) logits of two IM heads on the same OOM rows.

    Returns:
        (n,) tensor (the released code averaged it to a scalar before its top-k).

    Raises:
        ValueError: shapes differ, not 2-D, or NaN/inf.
    """
    a, b = _pair(logits_a, logits_b)
    return (_entropy(a) - _entropy(b)).abs()


@checked
def select_agreement(logits_list: Sequence[torch.Tensor], k: int = 8,
                     min_confidence: float = 0.8) -> tuple[torch.Tensor, torch.Tensor]:
    """Agreement samples: rows where every head's argmax agrees, every max-probability is
    ``>= min_confidence``, and the summed pairwise entropy discrepancy is among the ``k``
    lowest.

    Args:
        logits_list: two or more (n, C) logits (one per IM head).
        k: at most this many rows are returned (fewer if fewer pass the filters).
        min_confidence: in (0, 1).

    Returns:
        ``(idx, pseudo_labels)``: (m,) int64 row indices sorted by discrepancy, and the
        argmax of the mean logits on those rows, m <= k.

    Raises:
        ValueError: fewer than two logits, shapes differ, ``k < 1``, ``min_confidence``
            outside (0, 1).

    Examples:
        >>> import torch
        >>> a = torch.tensor([[4.0, 0.0], [0.0, 4.0], [4.0, 0.0]])
        >>> b = torch.tensor([[4.0, 0.0], [4.0, 0.0], [0.1, 0.0]])
        >>> select_agreement([a, b], k=2, min_confidence=0.8)
        (tensor([0]), tensor([0]))
    """
    k = check_int(k, "k", 1)
    check_range(min_confidence, "min_confidence", 0, 1, low_open=True, high_open=True)
    if isinstance(logits_list, torch.Tensor) or len(logits_list) < 2:
        raise ValueError("logits_list must be a sequence of at least two (n, C) logits")
    ls = [as_tensor(x, "logits_list", ndim=2) for x in logits_list]
    if any(x.shape != ls[0].shape for x in ls):
        raise ValueError(f"logits_list shapes differ: {[tuple(x.shape) for x in ls]}")
    probs = torch.stack([x.softmax(1) for x in ls])  # (M, n, C)
    conf, arg = probs.max(2)  # (M, n)
    ok = (arg == arg[:1]).all(0) & (conf >= min_confidence).all(0)
    ent = torch.stack([_entropy(x) for x in ls])  # (M, n)
    disc = (ent[:, None] - ent[None]).abs().sum((0, 1)) / 2
    disc = torch.where(ok, disc, torch.full_like(disc, float("inf")))
    m = min(k, int(ok.sum()))
    order = torch.argsort(disc, stable=True)[:m]
    pseudo = torch.stack(ls).mean(0)[order].argmax(1)
    return order, pseudo


@checked
def prior_kl(oom_logits: torch.Tensor, prior: torch.Tensor) -> torch.Tensor:
    """``KL(prior || mean_i softmax(oom_logits_i))``, computed on log-probabilities.

    Args:
        oom_logits: (n, C) OOM-head logits. prior: (C,) non-negative, sums to 1.

    Returns:
        Scalar tensor, 0 when the mean prediction equals the prior.

    Raises:
        ValueError: prior negative, not summing to 1, or of the wrong length.
    """
    x = as_tensor(oom_logits, "oom_logits", ndim=2, floating=True)
    pi = as_tensor(prior, "prior", ndim=1, dtype=x.dtype, device=x.device)
    if len(pi) != x.shape[1]:
        raise ValueError(f"prior must have {x.shape[1]} entries, got {len(pi)}")
    if bool((pi < 0).any()) or abs(float(pi.sum()) - 1.0) > 1e-4:
        raise ValueError(f"prior must be non-negative and sum to 1, got sum {float(pi.sum())}")
    log_mean = torch.logsumexp(x.log_softmax(1), 0) - torch.log(
        torch.tensor(float(len(x)), dtype=x.dtype, device=x.device))
    pos = pi > 0
    return (pi[pos] * (pi[pos].log() - log_mean[pos])).sum()
