"""DCPT pre-training and all-in-one fine-tuning.

The recipe (paper §3, Fig. 2): pre-train any restorer with :func:`pretrain` using only each
input's degradation label (plus the clean-image term), then fine-tune it on (lq, gt) pairs
with :func:`finetune` exactly as one would train from scratch. Restoring is
:mod:`~iclr25.dcpt.restoration`'s, checkpoints :mod:`~iclr25.dcpt.io`'s, the feature probe
:mod:`~iclr25.dcpt.probe`'s.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Annotated

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import check_callback, check_int, check_labels, check_range, resolve_seed
from iclr25._contract import NonNegative, NonNegativeInt, Positive, PositiveInt, Range, checked
from iclr25._engine import Engine, EngineOptions, Stream, Unpack, fingerprint, mean_of_shares
from iclr25._train import fit_minibatch
from iclr25.datasets.images import check_images
from iclr25.dcpt.loss import _check_layers, _dcpt_step
from iclr25.dcpt.networks import DegradationClassifier, FeatureTap, _device_of

__all__ = ["FinetuneResult", "PretrainResult", "finetune", "pretrain"]

Batch = tuple[torch.Tensor, ...]


@checked
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


@checked
@dataclass
class FinetuneResult:
    """What :func:`finetune` returns: the (EMA) restorer, the raw weights, the L1 losses, and
    the restorer as it was after each step count in ``snapshots``."""

    model: nn.Module
    raw_model: nn.Module
    history: dict[str, list[float]] = field(default_factory=dict)
    snapshots: dict[int, nn.Module] = field(default_factory=dict)



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


@checked
def pretrain(model: nn.Module, data: Iterable[Batch] | Batch, *,
             layers: str | Sequence[str] | None = None, n_classes: int, steps: PositiveInt,
             lr: Positive = 1e-3, focal_gamma: NonNegative = 0.0,
             num_res_blocks: NonNegativeInt = 2, seed: int | torch.Generator | None = 0,
             callback: Callable[[int, dict[str, float]], None] | None = None,
             val: tuple[object, object] | None = None,
             target_accuracy: Annotated[float, Range(0.0, 1.0, low_open=True)] = 0.9,
             check_every: PositiveInt = 10, **engine: Unpack[EngineOptions]) -> PretrainResult:
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
        callback: called as ``callback(step, parts)`` after each step (one process only).
        **engine: how the loop runs (:class:`iclr25._engine.EngineOptions`: ``devices``,
            ``strategy``, ``precision``, ``checkpoint``, ``checkpoint_every``, ``resume``).
            The batches are the global batches (under DDP each process takes its share of
            each batch's rows); a resumed run reads ``data`` again from its start and skips
            the batches done, so ``data`` must give the same batches again (a seeded
            :class:`~iclr25.datasets.images.AllInOnePairs` does); a checkpoint records the
            first batch's fingerprint. The validation rule runs in every process on the
            same weights.

    Returns:
        :class:`PretrainResult` with ``model`` (trained copy), ``classifier``, ``layers`` and
        ``history`` (``loss``, ``pixel``, ``cls``, ``accuracy`` per step, each the global
        batch's).

    Raises:
        ValueError/TypeError: before any training, for bad ``steps``, ``lr``, ``n_classes``,
            ``focal_gamma``, unknown ``layers``, a malformed first batch, bad engine
            options or a checkpoint that does not fit (named).

    Examples:
        >>> from iclr25.datasets.images import AllInOnePairs, load_image
        >>> from iclr25.dcpt.networks import UNet
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
    _check_engine(engine, dev, callback)
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
        log = _pretrain_loop(net, clf, layers, opt, _source(batches, first),
                             _Run(steps, gamma, callback, stop, len(first[0])), engine)
    return PretrainResult(net, clf.eval(), layers, log.history(), len(log.parts["loss"]),
                          log.stopped, log.val[-1] if log.val else float("nan"))


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
    exponent ``gamma``, ``callback(step, losses)`` after each step, the validation rule
    that may stop it early, and the (global) batch size."""

    steps: int
    gamma: float
    callback: Callable[[int, dict[str, float]], None] | None
    stop: _Validation | None
    batch_size: int


def _check_engine(engine: EngineOptions, dev: torch.device, callback: object) -> None:
    """The engine's keywords, checked before any work; a callback needs one process."""
    if Engine.of(engine, dev.type).distributed and callback is not None:
        raise ValueError("callback= is not supported with devices > 1 or strategy='ddp' (it "
                         "would run in every process)")


def _source(batches: Iterator[Batch], first: Batch, pairs: bool = False) -> Stream:
    """The checked batches as the engine's stream of global batches, ``(batch, None)`` or
    with ``pairs`` ``(lq, gt)``, named by the first batch's fingerprint (an iterable's
    length is unknown: size 0)."""
    items = (((b[0], b[1]) if pairs else (b, None)) for b in batches)
    return Stream(lambda _: items, 0, lambda: fingerprint(*first))


class _Log:
    """What a pre-training records beside the engine's loss: each step's parts, the
    validation accuracies, why it stopped (checkpointed with the run: ``extra_state``)."""

    def __init__(self) -> None:
        self.parts: dict[str, list[float]] = {"loss": [], "pixel": [], "cls": [],
                                              "accuracy": []}
        self.val: list[float] = []
        self.stopped = "cap"

    def history(self) -> dict[str, list[float]]:
        return {**self.parts, **({"val_accuracy": self.val} if self.val else {})}

    def state_dict(self) -> dict[str, object]:
        return {"parts": self.parts, "val": self.val, "stopped": self.stopped}

    def load_state_dict(self, state: dict[str, object]) -> None:
        self.parts = {k: list(v) for k, v in state["parts"].items()}  # type: ignore[union-attr]
        self.val, self.stopped = list(state["val"]), str(state["stopped"])  # type: ignore


class _PretrainStep(nn.Module):
    """One batch ``(lq, gt, y)`` -> the DCPT loss, as the engine calls it (its parts and
    rows kept for the step's log)."""

    def __init__(self, net: nn.Module, clf: DegradationClassifier, tap: FeatureTap,
                 gamma: float) -> None:
        super().__init__()
        self.net, self.clf, self.tap, self.gamma = net, clf, tap, gamma

    def forward(self, batch: Batch) -> torch.Tensor:
        loss, self.last = _dcpt_step(self.net, self.clf, self.tap, *batch, self.gamma)
        self.rows = len(batch[0])       # this process's share of the batch
        return loss


def _pretrain_loop(net: nn.Module, clf: DegradationClassifier, layers: tuple[str, ...],
                   opt: torch.optim.Optimizer, source: Stream, run: _Run,
                   engine: EngineOptions) -> _Log:
    """The DCPT steps on the engine; the log holds the history and why it stopped."""
    log, stop = _Log(), run.stop
    with FeatureTap(net, layers) as tap:
        step_fn = _PretrainStep(net, clf, tap, run.gamma)

        def on_step(step: int, loss: float) -> bool:
            parts = mean_of_shares(step_fn.last, step_fn.rows)
            log.parts["loss"].append(loss)
            for k, v in parts.items():
                log.parts[k].append(v)
            if run.callback is not None:
                run.callback(step - 1, parts)
            if stop is not None and (step % stop.every == 0 or step == run.steps):
                log.val.append(_accuracy(net, clf, tap, stop.lq, stop.y))
                if log.val[-1] >= stop.target:
                    log.stopped = "target"
                    return True
            return False

        fit_minibatch(step_fn, lambda loss, _: loss, source, None, epochs=1,
                      batch_size=run.batch_size, optimizer=opt, interval="step",
                      on_step=on_step, extra_state={"log": log}, progress="DCPT pre-training",
                      steps=run.steps, **engine)
    return log


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


@checked
def finetune(model: nn.Module, data: Iterable[Batch] | Batch, *, steps: PositiveInt,
             lr: Positive = 1e-3, ema: Annotated[float, Range(0.0, 1.0, high_open=True)] = 0.999,
             seed: int | torch.Generator | None = 0,
             callback: Callable[[int, float], None] | None = None,
             snapshots: Sequence[int] = (), **engine: Unpack[EngineOptions]) -> FinetuneResult:
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
        **engine: how the loop runs (:class:`iclr25._engine.EngineOptions`), as for
            :func:`pretrain`: global batches, each process's share under DDP; the EMA and
            the snapshots are checkpointed with the run; ``callback`` needs one process.

    Returns:
        :class:`FinetuneResult` (``model`` = EMA weights, ``raw_model``, ``history["loss"]``,
        ``snapshots``).

    Raises:
        ValueError/TypeError: bad ``steps``, ``lr``, ``ema``, ``snapshots``, first batch or
            engine options, or a checkpoint that does not fit (named), before training.
    """
    steps = check_int(steps, "steps", 1)
    lr = check_range(lr, "lr", 0, low_open=True)
    ema = check_range(ema, "ema", 0, 1, high_open=True)
    keep = _check_snapshots(snapshots, steps)
    check_callback(callback)
    seed_int = _seeded(seed)
    dev = _device_of(model)
    _check_engine(engine, dev, callback)
    stream = _stream(data, steps)
    first = _unpack(next(stream), dev, False, None)
    net = copy.deepcopy(model).train()
    avg = None
    if ema > 0:
        avg = torch.optim.swa_utils.AveragedModel(net, avg_fn=_warm_ema(ema))
        avg.n_averaged.fill_(1)         # the initial weights are the first average
        avg.module.eval().requires_grad_(False)
    # foreach: the same update bit for bit, without a Python loop over the parameters
    opt = torch.optim.Adam(net.parameters(), lr=lr, foreach=True)
    with torch.random.fork_rng(devices=[dev.index or 0] if dev.type == "cuda" else []):
        torch.manual_seed(seed_int)
        batches = chain([first], (_unpack(b, dev, False, None) for b in stream))
        hist, kept = _finetune_loop(net, avg, opt, _source(batches, first, pairs=True),
                                    _Tune(keep, callback, len(first[0]), steps), engine)
    return FinetuneResult(avg.module if avg is not None else net.eval(), net.eval(), hist,
                          kept.models)


def _check_snapshots(snapshots: object, steps: int) -> set[int]:
    """The checked step counts of ``snapshots``, each in [1, ``steps``]."""
    if isinstance(snapshots, (str, bytes)) or not isinstance(snapshots, Sequence):
        raise TypeError(f"snapshots must be a sequence of step counts, got "
                        f"{type(snapshots).__name__}")
    keep = {check_int(n, "snapshots", 1) for n in snapshots}
    if keep and max(keep) > steps:
        raise ValueError(f"snapshots must lie in [1, steps={steps}], got {max(keep)}")
    return keep


@dataclass(frozen=True)
class _Tune:
    """How fine-tuning runs: the step counts after which a copy is kept, ``callback(step,
    loss)`` after each step, the (global) batch size and the steps (the progress bar's
    total; the stream holds as many batches)."""

    keep: set[int]
    callback: Callable[[int, float], None] | None
    batch_size: int
    steps: int


def _warm_ema(cap: float) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]:
    """The EMA's update as ``AveragedModel``'s ``avg_fn``: ``avg ← decay · avg + (1 − decay) ·
    net`` with decay ``min(cap, (1 + t) / (10 + t))`` at step ``t`` (the averages so far,
    ``n``, count the initial weights: t = n − 1)."""

    def update(avg: torch.Tensor, net: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        t = int(n) - 1
        return torch.lerp(avg, net, 1 - min(cap, (1 + t) / (10 + t)))

    return update


class _Kept:
    """The copies fine-tuning keeps by step count (checkpointed with the run)."""

    def __init__(self, template: nn.Module) -> None:
        self.template = template
        self.models: dict[int, nn.Module] = {}

    def state_dict(self) -> dict[str, object]:
        return {str(n): m.state_dict() for n, m in self.models.items()}

    def load_state_dict(self, state: dict[str, object]) -> None:
        self.models = {}
        for n, sd in state.items():
            m = copy.deepcopy(self.template)
            m.load_state_dict(sd)  # type: ignore[arg-type]
            self.models[int(n)] = m.eval()


def _finetune_loop(net: nn.Module, avg: torch.optim.swa_utils.AveragedModel | None,
                   opt: torch.optim.Optimizer, source: Stream, run: _Tune,
                   engine: EngineOptions) -> tuple[dict[str, list[float]], _Kept]:
    """The L1 steps on ``(lq, gt)`` batches on the engine, ``avg`` kept as the EMA of ``net``:
    (the loss history, the copies kept by step count)."""
    kept = _Kept(net)

    def on_step(step: int, loss: float) -> None:
        if step in run.keep:
            kept.models[step] = copy.deepcopy(avg.module if avg is not None else net).eval()
        if run.callback is not None:
            run.callback(step - 1, loss)

    history = fit_minibatch(
        net, F.l1_loss, source, None, epochs=1, batch_size=run.batch_size, optimizer=opt,
        ema=avg, interval="step", on_step=on_step, extra_state={"kept": kept},
        progress="fine-tuning", steps=run.steps, **engine)
    return {"loss": history}, kept
