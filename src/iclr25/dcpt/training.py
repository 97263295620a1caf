"""DCPT pre-training, all-in-one fine-tuning, the feature probe, restoration and checkpoints.

The recipe (paper §3, Fig. 2): pre-train any restorer with :func:`pretrain` using only each
input's degradation label (plus the clean-image term), then fine-tune it on (lq, gt) pairs
with :func:`finetune` exactly as one would train from scratch.
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import (
    ArrayLike,
    check_callback,
    check_choice,
    check_int,
    check_labels,
    check_range,
    resolve_seed,
)
from iclr25._guard import Fallback, check_fallback, check_reference, guarded
from iclr25._guard import RestorationWarning as _RestorationWarning
from iclr25._progress import progress_bar
from iclr25.datasets.images import KINDS, check_images
from iclr25.dcpt.baselines import CLASSICAL, _classical, psfs
from iclr25.dcpt.loss import _check_layers, _dcpt_step
from iclr25.dcpt.networks import DegradationClassifier, FeatureTap, UNet

__all__ = ["Checkpoint", "FinetuneResult", "PretrainResult", "RestorationWarning", "feature_probe",
           "finetune", "load", "pretrain", "restore", "save"]

Batch = tuple[torch.Tensor, ...]


class RestorationWarning(_RestorationWarning):
    """:func:`restore`'s output scored below the classical result or the input (both numbers
    in the message)."""


@dataclass
class PretrainResult:
    """What :func:`pretrain` returns: the pre-trained restorer, its classifier, the losses."""

    model: nn.Module
    classifier: DegradationClassifier
    layers: tuple[str, ...]
    history: dict[str, list[float]] = field(default_factory=dict)
    steps: int = 0              # steps taken
    stopped: str = "cap"        # "target": validation accuracy reached; "cap": ran all steps
    val_accuracy: float = float("nan")   # at the last validation check (NaN without val)


@dataclass
class FinetuneResult:
    """What :func:`finetune` returns: the (EMA) restorer, the raw weights, the L1 losses, and
    the restorer as it was after each step count in ``snapshots``."""

    model: nn.Module
    raw_model: nn.Module
    history: dict[str, list[float]] = field(default_factory=dict)
    snapshots: dict[int, nn.Module] = field(default_factory=dict)


def _device_of(model: nn.Module) -> torch.device:
    p = next(model.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


def _stream(data: Iterable[Batch] | Batch, steps: int) -> Iterator[Batch]:
    """``steps`` batches from ``data``, re-iterating a finite re-iterable collection."""
    if isinstance(data, tuple) and data and all(isinstance(d, torch.Tensor) for d in data):
        data = [data]  # one (lq, gt[, y]) batch, repeated
    try:
        it = iter(data)
    except TypeError:
        raise TypeError(f"data must be an iterable of (lq, gt, y) batches, got "
                        f"{type(data).__name__}") from None
    one_shot = it is data
    n = 0
    while n < steps:
        try:
            b = next(it)
        except StopIteration:
            if one_shot or n == 0:
                raise ValueError(f"data ran out after {n} of {steps} batches") from None
            it = iter(data)
            continue
        yield b
        n += 1


def _unpack(b: object, device: torch.device, need_y: bool, n_classes: int | None
            ) -> Batch:
    if not isinstance(b, (tuple, list)) or len(b) < (3 if need_y else 2):
        raise ValueError(f"data must yield (lq, gt{', y' if need_y else '[, y]'}) batches, "
                         f"got {type(b).__name__}")
    lq = check_images(b[0], "lq").to(device)
    gt = check_images(b[1], "gt").to(device)
    if lq.ndim != 4 or lq.shape != gt.shape:
        raise ValueError(f"lq and gt must be (B, 3, H, W) batches of one shape, got "
                         f"{tuple(lq.shape)} and {tuple(gt.shape)}")
    if not need_y:
        return lq, gt
    y = check_labels(b[2], "y", n_classes, n=lq.shape[0], device=device)
    return lq, gt, y


def _seeded(seed: int | torch.Generator | None) -> int:
    return int(resolve_seed(seed).initial_seed())


def pretrain(model: nn.Module, data: Iterable[Batch] | Batch, *,
             layers: Sequence[str] | None = None, n_classes: int, steps: int,
             lr: float = 1e-3, focal_gamma: float = 0.0, num_res_blocks: int = 2,
             seed: int | torch.Generator | None = 0,
             callback: Callable[[int, dict[str, float]], None] | None = None,
             val: tuple[object, object] | None = None, target_accuracy: float = 0.9,
             check_every: int = 10) -> PretrainResult:
    """Degradation-classification pre-training of any restorer (DCPT, paper §3, Alg. 1).

    Each step: L = L1(E(gt), gt) + Focal(C(features of E(lq)), y), one Adam step on the
    restorer E and the classifier C together. The classifier is built from the tapped
    features' channel counts (read from the first batch) and initialised from ``seed``.
    ``model`` itself is not modified: a trained copy is returned.

    Agreement with the official loop (issue 54): ``DCPTModel.optimize_parameters`` and its
    validation, run on the same width-12 :class:`UNet`, classifier weights, 150 batches of
    the full setting (Adam 5e-4, seed 0): the first step's loss is identical (CE 1.28296),
    |Δ| <= 1.2e-7 (classification) and 3.7e-9 (clean-image term) over the first 10 steps;
    float rounding then grows as in any two runs (largest |Δ| 0.52 by step 150). Both reach
    the 0.9 validation accuracy (here at step 110, official 120); mean clean-image loss
    0.00921 vs 0.00922. Before the fix to :class:`UNet`'s last conv that term read 0.0 at
    every step in both loops; at Adam 2e-3 both plateau near 0.7 validation accuracy.

    Args:
        model: any image-to-image ``nn.Module``; its parameters' device is used.
        data: iterable of ``(lq, gt, y)`` batches ((B, 3, H, W) in [0, 1], (B,) int64), e.g.
            :class:`iclr25.datasets.images.AllInOnePairs`; a finite collection is cycled, an
            iterator is consumed (exactly ``steps`` batches).
        layers: module names whose outputs feed the classifier, fine to coarse; default
            ``model.tap_layers``.
        n_classes: number of degradation kinds (>= 2).
        steps: optimisation steps (>= 1); with ``val``, the cap.
        lr: Adam learning rate (> 0).
        val: ``(lq, y)`` validation crops: every ``check_every`` steps the classifier is scored
            on them and pre-training stops once its accuracy reaches ``target_accuracy``
            (``result.stopped`` says "target" or "cap"). Keep it apart from any test split.
        target_accuracy, check_every: the stopping rule's level in (0, 1] and period (>= 1).
        focal_gamma: focal exponent (0 = cross-entropy, the official default).
        num_res_blocks: bottlenecks per classifier stage.
        seed: seeds the classifier's initialisation (and any randomness in the model).
        callback: called as ``callback(step, parts)`` after each step.

    Returns:
        :class:`PretrainResult` with ``model`` (trained copy), ``classifier``, ``layers`` and
        ``history`` (``loss``, ``pixel``, ``cls``, ``accuracy`` per step).

    Raises:
        ValueError/TypeError: before any training, for bad ``steps``, ``lr``, ``n_classes``,
            ``focal_gamma``, unknown ``layers``, or a malformed first batch.

    Examples:
        >>> from iclr25.datasets.images import AllInOnePairs, load_image
        >>> pairs = AllInOnePairs([load_image("astronaut", max_side=64)], ("noise", "blur"),
        ...                       size=16, batch_size=4, seed=0)
        >>> res = pretrain(UNet(width=4), pairs, n_classes=2, steps=2, num_res_blocks=1)
        >>> len(res.history["loss"])
        2
    """
    n_classes = check_int(n_classes, "n_classes", 2)
    steps = check_int(steps, "steps", 1)
    lr = check_range(lr, "lr", 0, low_open=True)
    check_callback(callback)
    gamma = check_range(focal_gamma, "focal_gamma", 0)
    num_res_blocks = check_int(num_res_blocks, "num_res_blocks", 0)
    layers = _tap_layers(model, layers)
    target_accuracy = check_range(target_accuracy, "target_accuracy", 0, 1, low_open=True)
    check_every = check_int(check_every, "check_every", 1)
    seed_int = _seeded(seed)
    dev = _device_of(model)
    stop = None if val is None else _Validation(*_check_val(val, n_classes, dev),
                                                target_accuracy, check_every)
    stream = _stream(data, steps)
    first = _unpack(next(stream), dev, True, n_classes)
    net = copy.deepcopy(model).train()
    with torch.random.fork_rng(devices=[dev.index or 0] if dev.type == "cuda" else []):
        torch.manual_seed(seed_int)
        with FeatureTap(net, layers) as tap, torch.no_grad():
            net(first[0][:1])
            dims = [f.shape[1] for f in tap.features]
        clf = DegradationClassifier(dims, n_classes, num_res_blocks).to(dev)
        _check_layers(clf, layers)
        opt = torch.optim.Adam([*net.parameters(), *clf.parameters()], lr=lr,
                               foreach=True)  # the same update as the loop, bit for bit
        batches = chain([first], (_unpack(b, dev, True, n_classes) for b in stream))
        hist, stopped, acc, taken = _pretrain_loop(net, clf, layers, opt, batches,
                                                   _Run(steps, gamma, callback, stop))
    return PretrainResult(net, clf.eval(), layers, hist, taken, stopped, acc)


def _tap_layers(model: nn.Module, layers: Sequence[str] | None) -> tuple[str, ...]:
    """The checked layer names to tap (default ``model.tap_layers``)."""
    if layers is None:
        layers = getattr(model, "tap_layers", None)
        if layers is None:
            raise ValueError("layers: the model has no tap_layers; name the modules to tap")
    if isinstance(layers, str):
        raise TypeError("layers must be a sequence of module names, got a single string")
    layers = tuple(layers)
    FeatureTap(model, layers).remove()  # names checked before any work
    return layers


@dataclass
class _Validation:
    """Pre-training's stopping rule: the validation crops, the level and the period."""

    lq: torch.Tensor
    y: torch.Tensor
    target: float
    every: int


def _check_val(val: object, n_classes: int, dev: torch.device
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """The checked ``(lq, y)`` validation pair, on ``dev``."""
    if not isinstance(val, (tuple, list)) or len(val) != 2:
        raise TypeError("val must be a pair (lq, y)")
    val_lq = check_images(val[0], "val[0]")
    if val_lq.ndim != 4:
        raise ValueError(f"val[0] must be (B, 3, H, W), got {tuple(val_lq.shape)}")
    val_y = check_labels(val[1], "val[1]", n_classes)
    if len(val_y) != len(val_lq):
        raise ValueError(f"val[1] has {len(val_y)} labels for {len(val_lq)} images")
    return val_lq.to(dev), val_y.to(dev)


@dataclass(frozen=True)
class _Run:
    """How pre-training runs: at most ``steps`` steps, the classification loss's focal
    exponent ``gamma``, ``callback(step, losses)`` after each step, and the validation rule
    that may stop it early."""

    steps: int
    gamma: float
    callback: Callable[[int, dict[str, float]], None] | None
    stop: _Validation | None


def _pretrain_loop(net: nn.Module, clf: DegradationClassifier, layers: tuple[str, ...],
                   opt: torch.optim.Optimizer, batches: Iterator[Batch], run: _Run,
                   ) -> tuple[dict[str, list[float]], str, float, int]:
    """The DCPT steps: (history, why it stopped, last validation accuracy, steps taken)."""
    steps, gamma, callback, stop = run.steps, run.gamma, run.callback, run.stop
    hist: dict[str, list[float]] = {"loss": [], "pixel": [], "cls": [], "accuracy": []}
    acc = float("nan")
    bar = progress_bar(steps, "DCPT pre-training")
    with FeatureTap(net, layers) as tap, bar as advance:
        for step, batch in enumerate(batches):
            loss, parts = _dcpt_step(net, clf, tap, *batch, gamma)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            hist["loss"].append(float(loss.detach()))
            for k, v in parts.items():
                hist[k].append(v)
            if callback is not None:
                callback(step, parts)
            advance()
            if stop is not None and ((step + 1) % stop.every == 0 or step + 1 == steps):
                acc = _accuracy(net, clf, tap, stop.lq, stop.y)
                hist.setdefault("val_accuracy", []).append(acc)
                if acc >= stop.target:
                    return hist, "target", acc, step + 1
    return hist, "cap", acc, steps


@torch.no_grad()
def _accuracy(net: nn.Module, clf: DegradationClassifier, tap: FeatureTap, lq: torch.Tensor,
              y: torch.Tensor, batch_size: int = 64) -> float:
    """Top-1 accuracy of ``clf`` on ``net``'s tapped features (both put back in train mode)."""
    net.eval(), clf.eval()
    hits = 0
    for a, b in zip(lq.split(batch_size), y.split(batch_size), strict=True):
        tap.clear()
        net(a)
        hits += int((clf(tap.features).argmax(1) == b).sum())
    tap.clear()
    net.train(), clf.train()
    return hits / len(y)


def finetune(model: nn.Module, data: Iterable[Batch] | Batch, *, steps: int, lr: float = 1e-3,
             ema: float = 0.999, seed: int | torch.Generator | None = 0,
             callback: Callable[[int, float], None] | None = None,
             snapshots: Sequence[int] = ()) -> FinetuneResult:
    """All-in-one restoration training with L1 on (lq, gt) pairs, keeping an EMA of weights.

    The same loop trains a DCPT-pre-trained network (fine-tuning, paper §3.3) or a fresh one
    (the from-scratch baseline). The EMA decay is ``min(ema, (1 + t) / (10 + t))`` at step
    ``t`` (a warm-up, so short runs are not dominated by the initial weights; the paper's
    runs are long enough for the plain 0.999). ``model`` is not modified.

    Where the degradation is known, fine-tune for it alone (the recommended path; all-in-one
    over several kinds stays available): feed pairs of that one kind, e.g.
    ``AllInOnePairs(clean, ("noise",), size, batch_size)``, save with
    ``save(..., degradation="noise")`` and restore with ``restore(..., degradation="noise")``
    (the CLI: ``iclr25 dcpt finetune --degradation noise``).

    Args:
        model: any image-to-image ``nn.Module``.
        data: iterable of ``(lq, gt)`` or ``(lq, gt, y)`` batches (``y`` is ignored).
        steps: optimisation steps (>= 1).
        lr: Adam learning rate (> 0).
        ema: EMA decay in [0, 1); 0 returns the raw weights as ``model``.
        seed: seeds any randomness inside the model.
        callback: called as ``callback(step, loss)`` after each step.
        snapshots: step counts (each in [1, ``steps``]) after which a copy of ``model`` (EMA
            weights, or raw where ``ema`` is 0) is kept: run n of them equals
            ``finetune(..., steps=n)`` on the same data and seed (nothing depends on
            ``steps`` but the loop's end), so a shorter run comes free with a longer one.

    Returns:
        :class:`FinetuneResult` (``model`` = EMA weights, ``raw_model``, ``history["loss"]``,
        ``snapshots``).

    Raises:
        ValueError/TypeError: bad ``steps``, ``lr``, ``ema``, ``snapshots`` or first batch,
            before training.
    """
    steps = check_int(steps, "steps", 1)
    lr = check_range(lr, "lr", 0, low_open=True)
    ema = check_range(ema, "ema", 0, 1, high_open=True)
    if isinstance(snapshots, (str, bytes)) or not isinstance(snapshots, Sequence):
        raise TypeError(f"snapshots must be a sequence of step counts, got "
                        f"{type(snapshots).__name__}")
    keep = {check_int(n, "snapshots", 1) for n in snapshots}
    if keep and max(keep) > steps:
        raise ValueError(f"snapshots must lie in [1, steps={steps}], got {max(keep)}")
    check_callback(callback)
    seed_int = _seeded(seed)
    dev = _device_of(model)
    stream = _stream(data, steps)
    first = _unpack(next(stream), dev, False, None)
    net = copy.deepcopy(model).train()
    avg = copy.deepcopy(net).eval()
    for p in avg.parameters():
        p.requires_grad_(False)
    # foreach: the same update bit for bit, without a Python loop over the parameters
    opt = torch.optim.Adam(net.parameters(), lr=lr, foreach=True)
    hist: dict[str, list[float]] = {"loss": []}
    kept: dict[int, nn.Module] = {}
    with torch.random.fork_rng(devices=[dev.index or 0] if dev.type == "cuda" else []):
        torch.manual_seed(seed_int)
        with progress_bar(steps, "fine-tuning") as advance:
            batch = first
            for step in range(steps):
                if step > 0:
                    batch = _unpack(next(stream), dev, False, None)
                lq, gt = batch[0], batch[1]
                loss = F.l1_loss(net(lq), gt)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                _ema_update(avg, net, min(ema, (1 + step) / (10 + step)))
                hist["loss"].append(float(loss.detach()))
                if step + 1 in keep:
                    kept[step + 1] = copy.deepcopy(avg if ema > 0 else net).eval()
                if callback is not None:
                    callback(step, hist["loss"][-1])
                advance()
    return FinetuneResult(avg if ema > 0 else net.eval(), net.eval(), hist, kept)


@torch.no_grad()
def _ema_update(avg: nn.Module, net: nn.Module, decay: float) -> None:
    """``avg ← decay · avg + (1 − decay) · net`` for the weights; buffers copied."""
    for pa, pn in zip(avg.parameters(), net.parameters(), strict=True):
        pa.lerp_(pn, 1 - decay)
    for ba, bn in zip(avg.buffers(), net.buffers(), strict=True):
        ba.copy_(bn)


@torch.no_grad()
def tapped_features(model: nn.Module, x: torch.Tensor, layers: Sequence[str],
                    batch_size: int = 64) -> torch.Tensor:
    """Global-average-pooled tapped features, concatenated: (B, sum of channels)."""
    out = []
    was = model.training
    model.eval()
    try:
        with FeatureTap(model, layers) as tap:
            for chunk in x.split(batch_size):
                tap.clear()
                model(chunk)
                out.append(torch.cat([f.mean((-2, -1)) for f in tap.features], 1))
    finally:
        model.train(was)
    return torch.cat(out)


def feature_probe(model: nn.Module, lq: ArrayLike, y: ArrayLike, *, layers: Sequence[str],
                  n_neighbors: int = 5, test_size: float = 0.33, repeats: int = 5,
                  seed: int = 0) -> float:
    """How well the degradation can be read off a network's features (the paper's Fig. 1).

    As the official ``knn.py``: global-average-pooled features of the tapped layers, a
    ``KNeighborsClassifier(n_neighbors)`` on a ``train_test_split(test_size)``, mean test
    accuracy over ``repeats`` splits (seeds ``seed, seed + 1, ...``).

    Returns:
        Mean held-out top-1 accuracy, a float in [0, 1].

    Raises:
        ValueError/TypeError: bad images or labels, unknown layers, bad probe parameters.
    """
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import KNeighborsClassifier

    x = check_images(lq, "lq")
    if x.ndim != 4:
        raise ValueError(f"lq must be a (B, 3, H, W) batch, got {tuple(x.shape)}")
    t = check_labels(y, "y", n=x.shape[0])
    n_neighbors = check_int(n_neighbors, "n_neighbors", 1)
    test_size = check_range(test_size, "test_size", 0, 1, low_open=True, high_open=True)
    repeats = check_int(repeats, "repeats", 1)
    seed = check_int(seed, "seed", 0)
    if isinstance(layers, str):
        raise TypeError("layers must be a sequence of module names, got a single string")
    FeatureTap(model, layers).remove()
    feats = tapped_features(model, x.to(_device_of(model)), layers).cpu().double().numpy()
    labels = t.cpu().numpy()
    accs = []
    for r in range(repeats):
        a, b, ya, yb = train_test_split(feats, labels, test_size=test_size,
                                        random_state=seed + r)
        accs.append(KNeighborsClassifier(min(n_neighbors, len(a))).fit(a, ya).score(b, yb))
    return float(np.mean(accs))


@torch.no_grad()
def restore(model: nn.Module, images: object, *, degradation: str | None = None,
            reference: object = None, fallback: Fallback = "none", check: bool = True,
            tile: int | None = None, overlap: int = 16, batch_size: int = 16) -> torch.Tensor:
    """Run a restorer on images in [0, 1], checking that it did not make them worse.

    Each output is scored beside the input and the classical restorer for ``degradation``
    (:func:`~iclr25.dcpt.baselines.classical`: NL-means for noise, Richardson-Lucy for blur
    and defocus, unsharp masking for motion blur, a gamma curve for low light). Where ours
    scores below either, a :class:`~iclr25.dcpt.RestorationWarning` gives the numbers;
    ``fallback`` says what is returned then. The measure (``iclr25._guard``):

    * ``reference`` given: PSNR against it;
    * ``degradation="noise"``: the recorrupted-to-recorrupted estimate of the PSNR against
      the unseen clean image (unbiased for Gaussian noise of any σ; σ estimated from the
      image), so the check reads the same figure a reference would (at 1.12σ, so about
      1 dB below it for every arm alike);
    * ``degradation="blur"`` or ``"defocus"``: the discrepancy principle: the PSNR of the
      output re-blurred by the classical restorer's kernel against the input (a faithful
      restoration explains the blurred photo; one that changes content or tone does not);
      biased towards Richardson-Lucy, which fits this very term: on blur narrower than
      the kernel it can prefer Richardson-Lucy to a network that beats it;
    * otherwise: NIQE (lower is better), the no-reference score restoration papers report
      where no reference exists; it sees noise, blur, ringing and blocking, not colour.

    Knowing the degradation matters twice: it picks the classical restorer, and a model
    fine-tuned for that one degradation (``iclr25 dcpt finetune --degradation KIND``, the
    recommended path) restores it better than the all-in-one model (noise σ = 25/255 on three
    held-out photos, the CLI's defaults: 27.9 dB against 19.8 dB, the input 20.5).

    Args:
        model: the restorer (its device is used; input and output stay on the input's).
        images: (3, H, W) or (B, 3, H, W).
        degradation: one of :data:`~iclr25.datasets.images.KINDS` if known (None: the check
            compares with the input only).
        reference: clean image(s) of ``images``' shape: the check uses PSNR.
        fallback: where ours scores below the alternative: "none" (default) warns and
            returns ours; "classical" returns the classical result (needs a
            ``degradation`` that has one); "input" returns the input unchanged.
        check: False skips the comparison (the plain network output, as in the
            reproduction); ``fallback`` must then be "none".
        tile: if given, process overlapping ``tile``×``tile`` windows (stride
            ``tile − overlap``) and average them, so large images fit in memory.
        overlap: pixels shared by neighbouring tiles.
        batch_size: images (or tiles) per forward pass.

    Returns:
        Restored tensor of the input's shape, dtype and device, clipped to [0, 1].

    Raises:
        ValueError/TypeError: bad images, reference, degradation, fallback (a ``fallback``
            that cannot apply, e.g. "classical" without a degradation that has a classical
            restorer), tile or batch size; all before any work.

    Warns:
        RestorationWarning: ours scores below the classical result or the input.
    """
    x = check_images(images, "images")
    batch_size = check_int(batch_size, "batch_size", 1)
    if tile is not None:
        tile = check_int(tile, "tile", 8)
        overlap = check_int(overlap, "overlap", 0, tile - 1)
    if degradation is not None:
        check_choice(degradation, "degradation", KINDS)
    ref = check_reference(reference, x)
    fallback = check_fallback(
        fallback, check, degradation in CLASSICAL,
        f"no classical restorer for degradation={degradation!r}; those with one: "
        f"{', '.join(CLASSICAL)}")
    single = x.ndim == 3
    xb = x[None] if single else x
    dev = _device_of(model)

    def run(b: torch.Tensor) -> torch.Tensor:
        if tile is None:
            out = torch.cat([model(c.to(dev, torch.float32)) for c in b.split(batch_size)])
        else:
            out = _tiled(model, b, tile, overlap, batch_size, dev)
        return out.clamp(0, 1).to(x.device, x.dtype)

    was = model.training
    model.eval()
    try:
        out = run(xb)
        if check:
            ks = psfs(degradation) if degradation is not None else []
            measure = ("psnr" if ref is not None else "r2r" if degradation == "noise"
                       else "reblur" if ks else "niqe")
            cls = ({CLASSICAL[degradation]: lambda b: _classical(b, degradation)}
                   if degradation in CLASSICAL else {})
            out = guarded(xb, out, run, cls, measure=measure, fallback=fallback,
                          reference=None if ref is None else (ref[None] if single else ref),
                          what="dcpt.restore", psfs=ks,
                          category=RestorationWarning)
    finally:
        model.train(was)
    return out[0] if single else out


def _tiled(model: nn.Module, x: torch.Tensor, tile: int, overlap: int, batch_size: int,
           dev: torch.device) -> torch.Tensor:
    B, C, H, W = x.shape
    stride = tile - overlap

    def starts(n: int) -> list[int]:
        if n <= tile:
            return [0]
        s = list(range(0, n - tile, stride))
        return s + [n - tile]

    acc = torch.zeros(B, C, H, W, device=dev)
    cnt = torch.zeros(1, 1, H, W, device=dev)
    for i in starts(H):  # a loop over tiles, each a batched forward pass
        for j in starts(W):
            patch = x[:, :, i:i + tile, j:j + tile].to(dev, torch.float32)
            res = torch.cat([model(c) for c in patch.split(batch_size)])
            acc[:, :, i:i + tile, j:j + tile] += res
            cnt[:, :, i:i + tile, j:j + tile] += 1
    return acc / cnt


# --- checkpoints ------------------------------------------------------------------------------

@dataclass
class Checkpoint:
    """What :func:`load` returns."""

    model: nn.Module
    classifier: DegradationClassifier | None = None
    kinds: tuple[str, ...] | None = None
    layers: tuple[str, ...] | None = None
    degradation: str | None = None   # the one degradation it was fine-tuned for, if any


def _backbones() -> dict[str, type[nn.Module]]:
    """The restorers besides :class:`UNet` that :func:`save` records and :func:`load`
    rebuilds by name (the backbones of DCPT's released checkpoints)."""
    from iclr25.dcpt.nafnet import NAFNet
    from iclr25.dcpt.restormer import Restormer

    return {"NAFNet": NAFNet, "Restormer": Restormer}


def save(model: nn.Module, path: str | Path, *, classifier: DegradationClassifier | None = None,
         kinds: Sequence[str] | None = None, layers: Sequence[str] | None = None,
         degradation: str | None = None) -> Path:
    """Write a restorer (and optionally its degradation classifier) to ``.safetensors``.

    A :class:`UNet`'s width/depth (a ``NAFNet``'s or ``Restormer``'s sizes) are stored
    so :func:`load` can rebuild it; any other model is reloaded into an instance passed to
    :func:`load`. The order is gsd's and lsdt's: ``save(obj, path)``; the old
    ``save(path, model)`` still works, with a DeprecationWarning. ``degradation`` records the
    one degradation the model was fine-tuned for (``iclr25 dcpt restore`` then checks
    against its classical restorer by default).

    Raises:
        ValueError: ``path`` not ending in .safetensors or its directory missing;
            ``kinds`` length not matching the classifier; unknown ``degradation``.
    """
    from safetensors.torch import save_file

    if isinstance(model, (str, os.PathLike)) and isinstance(path, nn.Module):
        warnings.warn("dcpt.save(path, model) is deprecated: call save(model, path)",
                      DeprecationWarning, stacklevel=2)
        model, path = path, model

    p = Path(path)
    if p.suffix != ".safetensors":
        raise ValueError(f"path must end in .safetensors, got {p.name!r}")
    if not p.parent.is_dir():
        raise ValueError(f"path: directory {p.parent} does not exist")
    meta: dict[str, object] = {}
    if isinstance(model, UNet):
        meta["unet"] = {"width": model.width, "depth": model.depth}
    elif type(model).__name__ in _backbones():
        meta["backbone"] = {"name": type(model).__name__, "config": model.config()}
    tensors = {f"model.{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    if classifier is not None:
        if kinds is not None and len(kinds) != classifier.n_classes:
            raise ValueError(f"kinds has {len(kinds)} names but the classifier has "
                             f"{classifier.n_classes} classes")
        meta["classifier"] = {"feature_dims": list(classifier.feature_dims),
                              "n_classes": classifier.n_classes,
                              "num_res_blocks": classifier.num_res_blocks}
        tensors.update({f"classifier.{k}": v.detach().cpu().contiguous()
                        for k, v in classifier.state_dict().items()})
    if kinds is not None:
        meta["kinds"] = list(kinds)
    if layers is not None:
        meta["layers"] = list(layers)
    if degradation is not None:
        meta["degradation"] = check_choice(degradation, "degradation", KINDS)
    save_file(tensors, str(p), metadata={"iclr25.dcpt": json.dumps(meta)})
    return p


def load(path: str | Path, model: nn.Module | None = None, *,
         device: torch.device | str | None = None) -> Checkpoint:
    """Read a checkpoint written by :func:`save`.

    Args:
        path: the ``.safetensors`` file.
        model: an instance to load the weights into (needed for non-:class:`UNet` models);
            it is not modified, a loaded copy is returned.
        device: where the loaded modules live (default CPU).

    Raises:
        ValueError: unreadable file, not a DCPT checkpoint, or weights not matching ``model``.
    """
    from safetensors import safe_open

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path {p} is not a file")
    try:
        with safe_open(str(p), framework="pt") as f:
            meta_raw = (f.metadata() or {}).get("iclr25.dcpt")
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises its own error types
        raise ValueError(f"cannot read checkpoint {p}: {exc}") from None
    if meta_raw is None:
        raise ValueError(f"{p} is not an iclr25.dcpt checkpoint (no metadata)")
    meta = json.loads(meta_raw)
    if model is None:
        if "unet" in meta:
            net: nn.Module = UNet(**meta["unet"])
        elif meta.get("backbone", {}).get("name") in _backbones():
            net = _backbones()[meta["backbone"]["name"]](**meta["backbone"]["config"])
        else:
            raise ValueError(f"{p} holds a custom model: pass an instance as model=")
    else:
        net = copy.deepcopy(model)
    try:
        net.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    except RuntimeError as exc:
        raise ValueError(f"weights in {p} do not match the model: {exc}") from None
    clf = None
    if "classifier" in meta:
        clf = DegradationClassifier(**meta["classifier"])
        try:    # files from before the official last down-sampling block lack its weights
            clf.load_state_dict({k[11:]: v for k, v in tensors.items()
                                 if k.startswith("classifier.")})
        except RuntimeError as exc:
            raise ValueError(f"classifier weights in {p} do not match: {exc}") from None
        clf = clf.to(device or "cpu").eval()
    kinds = tuple(meta["kinds"]) if "kinds" in meta else None
    layers = tuple(meta["layers"]) if "layers" in meta else getattr(net, "tap_layers", None)
    return Checkpoint(net.to(device or "cpu").eval(), clf, kinds, layers,
                      meta.get("degradation"))


@torch.no_grad()
def classify(checkpoint: Checkpoint, images: object) -> torch.Tensor:
    """Degradation probabilities (B, n_classes) for images, from a checkpoint with a classifier.

    Raises:
        ValueError: the checkpoint has no classifier or no tap layers; bad images.
    """
    if checkpoint.classifier is None or checkpoint.layers is None:
        raise ValueError("checkpoint has no degradation classifier (save it with classifier=)")
    x = check_images(images, "images")
    xb = x[None] if x.ndim == 3 else x
    model = checkpoint.model
    dev = _device_of(model)
    was = model.training
    model.eval()
    try:
        with FeatureTap(model, checkpoint.layers) as tap:
            model(xb.to(dev, torch.float32))
            p = torch.softmax(checkpoint.classifier(tap.features), 1)
    finally:
        model.train(was)
    return p.to(x.device)
