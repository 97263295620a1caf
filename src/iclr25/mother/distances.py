"""Streaming weight statistics: pairwise model distances and per-model kurtosis.

Models are never held in memory together. For each selected layer we read that one tensor
from every model (a memory-mapped read for files), stack the N copies into an (N, n, n)
tensor, compute all N x N pairwise quantities at once, and accumulate. Peak memory is
O(N * largest layer), not O(N * model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from iclr25._checks import check_device, check_range
from iclr25._choices import METRICS, Metric
from iclr25._contract import checked
from iclr25.mother.sources import ModelSource, as_sources

LayerSpec = str | Sequence[str] | Callable[[str], bool] | None

# float64 temporaries of the Gram / cdist / moment accumulations are processed in column
# chunks of about _CHUNK_ELEMS elements (32 MB) in total, whatever N and the layer size
_CHUNK_ELEMS = 1 << 22


def _chunk(N: int) -> int:
    return max(1024, _CHUNK_ELEMS // max(N, 1))


def _is_square(shape: tuple[int, ...]) -> bool:
    return len(shape) == 2 and shape[0] == shape[1]


@checked
def select_layers(sources: Sequence[ModelSource], layers: LayerSpec = None) -> list[str]:
    """Names of the layers used for distances, checked to exist with one shape in every model.

    Args:
        sources: the models (at least 2).
        layers: ``None``: every 2-D square floating-point matrix of the first model (the
            paper's choice, Sec. 3: biases, norms, embeddings, heads are skipped);
            a string: the square matrices whose name contains it (the official code's
            ``layer_kind``, e.g. ``"value"``); a sequence: exactly these names (any 2-D
            shape); a callable: square matrices whose name it accepts.

    Returns:
        the layer names, in the first model's order.

    Raises:
        ValueError: fewer than 2 models, no layer selected, or a model that lacks a layer or
            has another shape for it (the error names the model and the layer).
    """
    if len(sources) < 2:
        raise ValueError(f"models must hold at least 2 models, got {len(sources)}")
    ref = sources[0].shapes
    chosen = _chosen(ref, layers, sources[0].name)
    if not chosen:
        raise ValueError(f"layers={layers!r} selects no square weight matrix in model "
                         f"{sources[0].name!r} (tensors: {list(ref)[:8]}...); a list of "
                         "names takes 2-D layers of any shape")
    for src in sources[1:]:
        shapes = src.shapes
        for k in chosen:
            if k not in shapes:
                raise ValueError(f"model {src.name!r} has no tensor {k!r} (found in "
                                 f"{sources[0].name!r}): architectures do not match")
            if shapes[k] != ref[k]:
                raise ValueError(f"model {src.name!r}: tensor {k!r} has shape {shapes[k]}, but "
                                 f"{ref[k]} in {sources[0].name!r}: architectures do not match")
    return chosen


def _chosen(ref: dict[str, tuple[int, ...]], layers: LayerSpec, first: str) -> list[str]:
    """The names ``layers`` selects among the first model's tensors ``ref`` (name -> shape),
    a sequence of names checked to be 2-D tensors of the model named ``first``."""
    square = [k for k, s in ref.items() if _is_square(s)]
    if layers is None:
        return square
    if isinstance(layers, str):
        return [k for k in square if layers in k]
    if callable(layers):
        return [k for k in square if layers(k)]
    chosen = [str(k) for k in layers]
    for k in chosen:
        if k not in ref:
            raise ValueError(f"layers: model {first!r} has no tensor {k!r}")
        if len(ref[k]) != 2:
            raise ValueError(f"layers: {k!r} has shape {ref[k]}, expected a 2-D matrix")
    return chosen


def _stack(sources: Sequence[ModelSource], key: str, shape: tuple[int, ...],
           device: torch.device | str | None) -> torch.Tensor:
    """(N, *shape) copy of tensor ``key`` of every model, checked finite: float32, or float64
    as soon as one model stores the layer in float64 (fine-tuned weights can differ below
    float32's resolution, 6e-8 relative; the distances would then read 0)."""
    out = torch.empty((len(sources), *shape), dtype=torch.float32, device=device)
    for i, src in enumerate(sources):
        t = src.get(key)
        if tuple(t.shape) != shape:
            raise ValueError(f"model {src.name!r}: tensor {key!r} has shape {tuple(t.shape)}, "
                             f"expected {shape}")
        if t.dtype == torch.float64 and out.dtype != torch.float64:
            out = out.double()  # the rows copied so far are exact in float64
        out[i].copy_(t)
        del t
        if not bool(torch.isfinite(out[i]).all()):
            raise ValueError(f"model {src.name!r}: tensor {key!r} contains NaN or infinite "
                             f"weights")
    return out


def _pairwise_rms(X: torch.Tensor) -> torch.Tensor:
    """(N, N) RMS of row differences of X (N, P), via a float64 Gram matrix of centred rows."""
    N, P = X.shape
    # centring on one model makes the Gram entries the size of the differences, so the
    # |a|^2 + |b|^2 - 2ab cancellation loses no precision for nearly equal fine-tuned models
    ref = X[0]
    G = torch.zeros(N, N, dtype=torch.float64, device=X.device)
    c = _chunk(N)
    for s in range(0, P, c):
        Y = X[:, s:s + c].to(torch.float64, copy=True).sub_(ref[s:s + c])
        G += Y @ Y.T
    sq = G.diagonal()
    d2 = (sq[:, None] + sq[None, :] - 2 * G).clamp_min_(0) / P
    d2.fill_diagonal_(0)
    return d2.sqrt()


def _pairwise_l1(X: torch.Tensor) -> torch.Tensor:
    """(N, N) mean absolute row difference of X (N, P)."""
    N, P = X.shape
    out = torch.zeros(N, N, dtype=torch.float64, device=X.device)
    c = _chunk(N)
    for s in range(0, P, c):
        Y = X[:, s:s + c].double()
        out += torch.cdist(Y, Y, p=1)
    return out / P


def _pairwise_rank(W: torch.Tensor, rtol: float | None) -> torch.Tensor:
    """(N, N) rank of W_i - W_j for W (N, m, n), batched over pairs."""
    N = W.shape[0]
    iu, ju = torch.triu_indices(N, N, offset=1, device=W.device)
    ranks = torch.empty(iu.numel(), dtype=torch.float64, device=W.device)
    m, n = W.shape[1:]
    batch = max(1, (1 << 24) // max(1, m * n))  # ~64 MB of float32 differences per batch
    for s in range(0, iu.numel(), batch):
        diff = W[iu[s:s + batch]] - W[ju[s:s + batch]]
        ranks[s:s + batch] = torch.linalg.matrix_rank(diff, rtol=rtol).double()
    out = torch.zeros(N, N, dtype=torch.float64, device=W.device)
    out[iu, ju] = ranks
    out[ju, iu] = ranks
    return out


def _kurtosis_rows(X: torch.Tensor) -> torch.Tensor:
    """(N,) Fisher excess kurtosis (biased moments, as scipy.stats.kurtosis) of each row."""
    N, P = X.shape
    c = _chunk(N)
    # chunked too: a float64 sum over the whole (N, P) view would materialise an N * P copy
    mu = torch.zeros(N, 1, dtype=torch.float64, device=X.device)
    for s in range(0, P, c):
        mu += X[:, s:s + c].to(torch.float64).sum(1, keepdim=True)
    mu /= P
    m2 = torch.zeros(N, dtype=torch.float64, device=X.device)
    m4 = torch.zeros_like(m2)
    for s in range(0, P, c):
        c2 = X[:, s:s + c].to(torch.float64, copy=True).sub_(mu).square_()
        m2 += c2.sum(1)
        m4 += c2.square_().sum(1)
    m2, m4 = m2 / P, m4 / P
    return m4 / m2.square() - 3.0


def stream_statistics(
    sources: Sequence[ModelSource],
    layers: LayerSpec = None,
    *,
    metrics: Sequence[Metric] = ("rms",),
    kurtosis_layers: LayerSpec | bool = False,
    rtol: float | None = None,
    device: torch.device | str | None = None,
    progress: Callable[[int, int, str], Any] | None = None,
) -> tuple[dict[str, torch.Tensor], torch.Tensor | None]:
    """One streaming pass over the layers: pairwise distances and (optionally) kurtosis.

    Args:
        sources: named model sources (see ``as_sources``).
        layers: layers for the distances (see ``select_layers``).
        metrics: any of ``"rms"`` (mean over layers of the RMS weight difference, the ICLR
            ``l_FT``), ``"l1"`` (sum over layers of the mean absolute difference, the
            official clustering distance) and ``"rank"`` (sum over layers of
            ``rank(W_i - W_j)``, the ``l_LoRA`` distance).
        kurtosis_layers: ``False`` for no kurtosis, ``None``/``True`` for the distance
            layers, or a layer spec of its own.
        rtol: relative singular-value tolerance of the rank metric, a finite float >= 0
            (default: torch's ``eps * max(m, n)``, as numpy's ``matrix_rank``).
        device: where the per-layer stacks are computed (default CPU).
        progress: called as ``progress(done, total, layer)`` after each layer.

    Returns:
        ``({metric: (N, N) float64 tensor}, (N,) float64 kurtosis or None)``.
    """
    for m in metrics:
        if m not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {m!r}")
    rtol = check_rtol(rtol)
    dist_layers = select_layers(sources, layers)
    if kurtosis_layers is False:
        ku_layers: list[str] = []
    elif kurtosis_layers is None or kurtosis_layers is True:
        ku_layers = list(dist_layers)
    else:
        ku_layers = select_layers(sources, kurtosis_layers)
    ref = sources[0].shapes
    N = len(sources)
    dev = check_device(device) or torch.device("cpu")
    out = {m: torch.zeros(N, N, dtype=torch.float64, device=dev) for m in metrics}
    ku = torch.zeros(N, dtype=torch.float64, device=dev) if ku_layers else None
    todo = list(dict.fromkeys(dist_layers + ku_layers))
    dist_set, ku_set = set(dist_layers), set(ku_layers)
    for step, key in enumerate(todo):
        W = _stack(sources, key, ref[key], dev)
        if key in dist_set:
            _add_distances(out, W, rtol)
        if key in ku_set and ku is not None:
            ku += _layer_kurtosis(W, sources, key)
        del W
        if progress is not None:
            progress(step + 1, len(todo), key)
    if "rms" in out:
        out["rms"] /= len(dist_layers)  # the ICLR l_FT averages, the others sum
    return out, ku


def check_rtol(rtol: float | None) -> float | None:
    """``rtol`` as a finite float >= 0, or None (NaN would make every rank distance 0)."""
    return None if rtol is None else check_range(rtol, "rtol", 0.0)


def _add_distances(out: dict[str, torch.Tensor], W: torch.Tensor, rtol: float | None) -> None:
    """Add one layer's (N, N) distances of the stack W (N, ...) to each metric in ``out``."""
    X = W.reshape(W.shape[0], -1)
    if "rms" in out:
        out["rms"] += _pairwise_rms(X)
    if "l1" in out:
        out["l1"] += _pairwise_l1(X)
    if "rank" in out:
        out["rank"] += _pairwise_rank(W, rtol)


def _layer_kurtosis(W: torch.Tensor, sources: Sequence[ModelSource], key: str) -> torch.Tensor:
    """(N,) kurtosis of one layer of each model; a constant layer is named, not NaN."""
    k = _kurtosis_rows(W.reshape(W.shape[0], -1))
    bad = torch.nonzero(~torch.isfinite(k)).flatten().tolist()
    if bad:  # zero variance: kurtosis is undefined, say where instead of a NaN later
        raise ValueError(f"model {sources[bad[0]].name!r}: layer {key!r} is constant, "
                         "so its kurtosis is undefined; pass kurtosis_layers that "
                         "exclude it, or direction='none'")
    return k


@checked
def pairwise_distances(
    models: Any,
    layers: LayerSpec = None,
    *,
    metric: Metric = "rms",
    names: Sequence[str] | None = None,
    rtol: float | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Pairwise weight distances between models, read one layer at a time.

    Args:
        models: a directory, a sequence of paths / ``nn.Module`` / state dicts, or a
            ``{name: model}`` mapping (see ``as_sources``); at least 2 models with the same
            shapes on the selected layers.
        layers: which matrices (default: all 2-D square ones; see ``select_layers``).
        metric: ``"rms"`` (full fine-tuning, Eq. for ``l_FT``: mean over layers of
            ``sqrt(mean((W_i - W_j)^2))``), ``"rank"`` (LoRA, ``l_LoRA = sum_l
            rank(W_i - W_j)``) or ``"l1"`` (sum over layers of mean ``|W_i - W_j|``, the
            official clustering distance).
        names: names for a sequence of models (only used in error messages here).
        rtol: tolerance of the rank metric.
        device: where the computation runs.

    Returns:
        (N, N) float64 tensor, symmetric with zero diagonal, rows in input order
        (a directory: files sorted by name).

    Paper: Sec. 3.2 (distance) of Horwitz et al., ICLR 2025.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    check_rtol(rtol)
    sources = as_sources(models, names)
    d, _ = stream_statistics(sources, layers, metrics=(metric,), rtol=rtol, device=device)
    return d[metric]


@checked
def kurtosis_scores(
    models: Any,
    layers: LayerSpec = None,
    *,
    names: Sequence[str] | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Sum over layers of the excess kurtosis of each model's weights (the direction score).

    Args:
        models: as for ``pairwise_distances``.
        layers: which matrices (default: all 2-D square ones; the official code uses one
            kind, e.g. ``"output.dense"`` for ViT).
        names: names for a sequence of models (used in error messages).
        device: where the computation runs (default CPU).

    Returns:
        (N,) float64 tensor, ``sum_l scipy.stats.kurtosis(W^l.flatten())`` (Fisher, biased).

    Raises:
        ValueError: naming the model and layer, if a selected layer is constant (its
            kurtosis is undefined; scipy would return NaN).

    Paper: Sec. 3.3 (weight outliers / kurtosis orient the edges).
    """
    sources = as_sources(models, names)
    if not sources:
        raise ValueError("models is empty")
    # a lone model is allowed here (no pair needed): pad it so the layer checks apply
    padded = sources if len(sources) > 1 else sources * 2
    _, ku = stream_statistics(padded, layers, metrics=(), kurtosis_layers=True, device=device)
    assert ku is not None
    return ku[: len(sources)]
