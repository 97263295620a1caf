"""The training engine behind :func:`iclr25._train.fit_minibatch`: devices, precision, checkpoints.

One loop (:class:`Loop`) runs every minibatch training in the package. Single process in
float32 with no checkpoint (what the claims run) it calls ``model``, ``loss.backward()`` and
``optimizer.step()`` directly, the same operations in the same order as before this module
existed, so their numbers are unchanged bit for bit. Any other option hands devices,
precision and process groups to **Lightning Fabric**:

- ``devices=N, strategy="ddp"``: DistributedDataParallel on N processes (gloo on CPU, NCCL on
  GPU). Launched from Python the processes are forked here (``ddp_fork``: the loss function and
  callbacks need not pickle; on a GPU launch with ``torchrun`` or ``fabric run`` instead, which
  Fabric detects: pass ``devices`` = the processes per node, e.g. ``torchrun --nnodes 2
  --nproc-per-node 4 train.py`` with ``devices=4``; the nodes are WORLD_SIZE / devices;
  not run here: no cluster). Each process takes its share of every global batch, and the loss is
  weighted so the averaged gradient is the gradient of the global batch's mean loss: the same
  run as one process at the same ``batch_size``, up to the order of floating-point sums.
- ``precision="bf16-mixed"`` (CPU or GPU) / ``"16-mixed"`` (GPU, with a gradient scaler):
  the forward pass under ``torch.autocast``, parameters and optimiser state in float32.
- ``checkpoint=PATH, checkpoint_every=K``: every K optimiser steps (and at the end) one file
  holds the model, optimiser, scheduler, EMA model, the extra stateful objects, the RNG states
  (the shuffling generator at the epoch's start and now, torch's global RNG) and the data
  position (epoch, batch within it, step, losses so far). It is written beside PATH and moved
  over it, so a crash never leaves half a file. ``resume=PATH`` continues from it: in float32
  on one thread the resumed run equals the uninterrupted one bit for bit. A checkpoint that
  does not fit (another model or size, another batch size or dataset length, a corrupted or
  foreign file) is refused with one error naming what does not fit, before anything is loaded
  or written. The data are named by a fingerprint (an on-disk dataset's files and columns,
  or a hash of the tensors' values), so resuming on other data of the same length is refused
  too.

Why Fabric and not Hugging Face Accelerate (read 2026-12, docs and issues):

- Fabric is made for a hand-written loop like ours: ``Fabric.setup``/``backward``/``autocast``
  wrap it without owning it, and several Fabric objects with different precisions live in one
  process (https://lightning.ai/docs/fabric/stable/api/fabric_args.html). Accelerate keeps
  one process-wide ``AcceleratorState``; switching CPU/multi-process or precision in the same
  process needs ``AcceleratorState._reset_state`` (its own tests do so:
  https://github.com/huggingface/accelerate/pull/1055), and a second ``Accelerator`` with
  another ``mixed_precision`` is an error.
- Checkpoints: ``Fabric.save(path, state)`` / ``load(path, state)`` take one dictionary of
  modules, optimisers and arbitrary values and write one file under DDP
  (https://lightning.ai/docs/fabric/latest/guide/checkpoint/checkpoint.html); Accelerate's
  ``save_state`` writes a folder of files per object and needs ``register_for_checkpointing``
  for the rest (https://huggingface.co/docs/accelerate/usage_guides/checkpoint), and its
  documentation expects the states to come from the same script.
- Launching from Python: ``Fabric.launch(fn)`` with ``strategy="ddp_fork"`` forks worker
  processes and returns rank 0's result (CPU DDP with ``accelerator="cpu"``:
  https://lightning.ai/docs/fabric/latest/fundamentals/launch.html); ``torchrun`` and
  ``fabric run`` launch the same code on clusters. Accelerate's ``notebook_launcher`` needs
  a picklable function and its CPU ``debug_launcher`` is "not intended for real trainings"
  (https://huggingface.co/docs/accelerate/package_reference/launchers).
- bf16 on CPU: both use ``torch.autocast("cpu", torch.bfloat16)``; Fabric silently turns
  ``16-mixed`` on CPU into ``bf16-mixed``, so we refuse it here instead. gloo cannot
  all-reduce bfloat16 (https://github.com/pytorch/pytorch/issues/111131), which does not
  matter: gradients of float32 parameters stay float32 under autocast.
- Dependencies: ``lightning-fabric`` needs only ``lightning-utilities`` beside torch.

Contrastive losses (``gathered=True``): every process is given a batch of the global batch's
shape, computes the embeddings of its own rows (:func:`local_rows`) and gathers everyone's with
their gradient (:func:`gather`) before the loss, so the negatives are the global batch's, as
the papers' official code does (CoMM's ``all_gather_batch_with_grad``,
https://github.com/Duplums/CoMM, ``utils.py``/``losses/comm_loss.py``; the same in SLIP and
SimCLR). Each process then holds the global loss; the gathered rows' gradients are summed over
the processes, and DDP's mean of the parameters' gradients makes the step the one process's
step at the same batch. In one process both functions return their argument: the claims'
numbers are unchanged. From a map-style Dataset each process reads only its own rows (its
:func:`local_rows` share of the batch's indices); zeros stand in for the other processes'
rows, so shapes and the random draws made over the batch (augmentations, masks) stay the
global batch's. The model reads the batch only through :func:`local_rows` (a whole-batch
target is ``gather(local_rows(x))``).

Batches drawn as the training goes (random crops with their random draws, a caller's iterable
of pairs: DCPT, low light) come as a :class:`Stream` of global batches: every process draws the
same batch from the same generator and takes its rows of each tensor (a drawn scalar is
shared), so a draw made per batch shape (low light's sub-image pairing) is the global batch's.
``on_step`` runs after every step (an early stop on validation, snapshots, a progress log);
what it keeps goes in ``extra_state``, and :func:`mean_of_shares` turns per-process metrics
into the global batch's.

Determinism: Fabric never reseeds (we do not call ``seed_everything``); all randomness of the
loop comes from the caller's generator and torch's global RNG, both saved in checkpoints.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from iclr25._checks import check_choice, check_int
from iclr25._io import atomic_write

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # typing-extensions comes with torch
    from typing_extensions import Unpack

__all__ = ["CHECKPOINT_KIND", "Engine", "EngineOptions", "Loop", "Precision", "Strategy",
           "Stream", "Unpack", "available_devices", "fingerprint", "gather", "local_rows",
           "mean_of_shares"]

Precision = Literal["32", "bf16-mixed", "16-mixed"]
Strategy = Literal["auto", "single", "ddp"]
#: The marker a checkpoint of this loop carries; another file is refused by it.
CHECKPOINT_KIND = "iclr25.fit_minibatch/1"

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
Callback = Callable[[torch.Tensor, torch.Tensor], torch.Tensor | None]


class EngineOptions(TypedDict, total=False):
    """The training engine's keywords, as every method's training function takes them
    (``**engine: Unpack[EngineOptions]``) and passes them on to
    :func:`iclr25._train.fit_minibatch`; each is a field of :class:`Engine` (read there).

    Keys:
        devices: processes (CPU, gloo) or GPUs (NCCL) of data-parallel training (default 1).
        strategy: "auto" (DDP when devices > 1), "single" or "ddp".
        precision: "32" (default), "bf16-mixed", or "16-mixed" (CUDA only).
        checkpoint: file holding the whole training state, written every
            ``checkpoint_every`` optimiser steps and at the end.
        checkpoint_every: steps between checkpoints (needs ``checkpoint``).
        resume: a checkpoint of this same training to continue from; the result equals the
            uninterrupted run.
    """

    devices: int
    strategy: Strategy
    precision: Precision
    checkpoint: str | os.PathLike | None
    checkpoint_every: int | None
    resume: str | os.PathLike | None


def available_devices(kind: str) -> int:
    """How many devices of ``kind`` ("cpu": processes, one per core; "cuda": GPUs) exist."""
    if kind == "cuda":
        return torch.cuda.device_count()
    return os.cpu_count() or 1


@dataclass(frozen=True)
class Engine:
    """How a training runs: devices, strategy, precision, checkpoints (checked on creation).

    Args:
        devices: processes (CPU) or GPUs; at most what exists.
        strategy: "auto" (DDP when devices > 1), "single" (devices must be 1) or "ddp".
        precision: "32", "bf16-mixed", or "16-mixed" (CUDA only).
        checkpoint: file written every ``checkpoint_every`` steps and at the end.
        checkpoint_every: optimiser steps between checkpoints (needs ``checkpoint``).
        resume: a checkpoint of the same training to continue from.
        device_kind: "cpu" or "cuda", where the model lives (what ``devices`` counts).
    """

    devices: int = 1
    strategy: Strategy = "auto"
    precision: Precision = "32"
    checkpoint: Path | None = None
    checkpoint_every: int | None = None
    resume: Path | None = None
    device_kind: str = "cpu"

    def __post_init__(self) -> None:
        check_int(self.devices, "devices", 1)
        check_choice(self.strategy, "strategy", Strategy)
        check_choice(self.precision, "precision", Precision)
        have = available_devices(self.device_kind)
        if self.devices > have:
            unit = "GPU(s)" if self.device_kind == "cuda" else "CPU core(s)"
            raise ValueError(f"devices={self.devices} but this machine has {have} {unit}")
        if self.strategy == "single" and self.devices != 1:
            raise ValueError(f"strategy='single' needs devices=1, got devices={self.devices}")
        if self.precision == "16-mixed" and self.device_kind != "cuda":
            raise ValueError("precision='16-mixed' needs a CUDA device (float16 autocast); "
                             "on CPU use precision='bf16-mixed'")
        if self.checkpoint_every is not None:
            check_int(self.checkpoint_every, "checkpoint_every", 1)
            if self.checkpoint is None:
                raise ValueError("checkpoint_every needs checkpoint= (the file to write)")
        for name in ("checkpoint", "resume"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, Path(value))
        if self.resume is not None and not self.resume.is_file():
            raise ValueError(f"resume: no checkpoint file at {self.resume}")
        if self.checkpoint is not None and (self.checkpoint.is_dir()
                                            or not self.checkpoint.parent.is_dir()):
            raise ValueError(f"checkpoint must be a file in an existing folder, got "
                             f"{self.checkpoint}")

    @classmethod
    def of(cls, options: Mapping[str, Any], device_kind: str = "cpu") -> Engine:
        """The engine of a training function's ``**engine`` keywords, checked before any
        work (an unknown keyword is a TypeError naming it)."""
        unknown = sorted(set(options) - set(EngineOptions.__annotations__))
        if unknown:
            raise TypeError(f"unexpected keyword argument {unknown[0]!r} (the engine takes "
                            f"{', '.join(EngineOptions.__annotations__)})")
        return cls(**options, device_kind=device_kind)

    @property
    def distributed(self) -> bool:
        return self.strategy == "ddp" or self.devices > 1

    @property
    def plain(self) -> bool:
        """One process in float32: the loop runs without Fabric (the claims' path)."""
        return not self.distributed and self.precision == "32"


# -- one global batch over the processes (contrastive losses) ------------------------------

#: (rank, world size) while a DDP process of a ``gathered`` loop trains; None otherwise
_SHARD: tuple[int, int] | None = None


def local_rows(x: torch.Tensor) -> torch.Tensor:
    """This process's rows of a global batch ``x`` (N, ...): its ``tensor_split`` share
    under DDP, ``x`` itself in one process."""
    if _SHARD is None:
        return x
    rank, world = _SHARD
    return x.tensor_split(world)[rank]


def gather(x: torch.Tensor) -> torch.Tensor:
    """Every process's rows of ``x`` (n_rank, ...) concatenated in rank order (N, ...),
    this process's rows keeping their gradient (the gathered gradients are summed over the
    processes: ``torch.distributed.nn.functional.all_gather``); ``x`` itself in one process.
    Uneven shares are padded for the collective and cut back."""
    if _SHARD is None:
        return x
    import torch.distributed as dist
    from torch.distributed.nn.functional import all_gather

    world = _SHARD[1]
    sizes = [torch.zeros(1, dtype=torch.long, device=x.device) for _ in range(world)]
    dist.all_gather(sizes, torch.tensor([len(x)], device=x.device))
    rows = [int(s) for s in sizes]
    pad = max(rows) - len(x)
    padded = torch.cat([x, x.new_zeros(pad, *x.shape[1:])]) if pad else x
    with warnings.catch_warnings():     # torch 2.13 deprecates it for a private module's
        warnings.simplefilter("ignore", FutureWarning)  # (which Fabric does not use either)
        parts = all_gather(padded.contiguous())
    return torch.cat([p[:r] for p, r in zip(parts, rows, strict=True)])


def mean_of_shares(values: Mapping[str, float], rows: int) -> dict[str, float]:
    """The global batch's means of per-row means (``values``: a loss's parts, an accuracy)
    that each process computed on its ``rows`` rows, weighted by the rows: under DDP an
    all-reduce every process must make (an ``on_step`` hook's); ``values`` in one process."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return dict(values)
    device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    t = torch.tensor([*values.values(), 1.0], dtype=torch.float64, device=device) * rows
    dist.all_reduce(t)
    return {k: float(v / t[-1]) for k, v in zip(values, t[:-1], strict=True)}


# -- data --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    """Global batches made as the training goes (random crops and their random draws, a
    caller's iterable of pairs): the source of a training that draws its batches instead of
    reading rows by index.

    Args:
        batches: ``epoch -> iterable of (x, y)`` global batches; ``x`` and ``y`` are tensors
            or tuples of them whose first dimension is the batch (other values, such as a
            drawn scalar, are passed as they are). It must draw only from the loop's
            generator (``seed=``) or be otherwise deterministic: every DDP process draws
            the same batches, and a resumed run draws the epoch's batches again and skips
            those already done. Under DDP each process takes its ``tensor_split`` share of
            every tensor's rows and its loss is weighted by the share, as for index batches.
        size: the data's size (images, pairs: the caller's count; 0: unknown), which a
            resumed run must share.
        fingerprint: ``() -> str``, the data's identity (:func:`fingerprint` of the training
            tensors), which a resumed run must share; called only when a checkpoint is
            written or read. None: not checked.
    """

    batches: Callable[[int], Iterable[tuple[Any, Any]]]
    size: int
    fingerprint: Callable[[], str | None] | None = None

    def __len__(self) -> int:
        return self.size


def fingerprint(*tensors: torch.Tensor | None) -> str:
    """A hash of the tensors' shapes, dtypes and values: the identity of in-memory data a
    checkpoint records (hashed in bounded blocks: no copy of the whole data)."""
    h = hashlib.sha1()
    for t in tensors:
        if isinstance(t, torch.Tensor):
            h.update(f"{tuple(t.shape)}{t.dtype}".encode())
            flat = t.detach().reshape(len(t), -1) if t.ndim else t.detach().reshape(1, 1)
            for block in flat.split(65536):
                h.update(block.cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:16]


class _Source:
    """Where batches come from: in-memory tensors or a map-style Dataset, read by index
    batches (the same order for both), a DataLoader iterated as it is, or a :class:`Stream`
    of ready global batches."""

    def __init__(self, X: Any, y: torch.Tensor | None) -> None:
        self.X, self.y = X, y
        self.loader = X if isinstance(X, DataLoader) else None
        self.dataset = X if isinstance(X, Dataset) and self.loader is None else None
        self.stream = X if isinstance(X, Stream) else None

    def __len__(self) -> int:
        if self.loader is not None:
            return len(self.loader.dataset)  # type: ignore[arg-type]
        return len(self.X)

    @property
    def device(self) -> torch.device:
        return self.X.device if isinstance(self.X, torch.Tensor) else torch.device("cpu")

    def batch(self, idx: torch.Tensor) -> tuple[Any, Any]:
        """Rows ``idx``: ``(X[idx], y[idx])``, or the Dataset's items collated."""
        if self.dataset is None:
            return self.X[idx], self.y[idx]
        from torch.utils.data import default_collate
        xb, yb = default_collate([self.dataset[i] for i in idx.tolist()])
        return xb, yb


def _placed(obj: Any, start: int, n: int) -> Any:
    """``obj``'s batched tensors (m rows) put at rows ``start:start + m`` of zeros with ``n``
    rows (the global batch's place of a process's share); other values as they are."""
    if isinstance(obj, (tuple, list)):
        return type(obj)(_placed(o, start, n) for o in obj)
    if not isinstance(obj, torch.Tensor) or not obj.ndim:
        return obj
    full = obj.new_zeros(n, *obj.shape[1:])
    full[start:start + len(obj)] = obj
    return full


def _to(obj: Any, device: torch.device) -> Any:
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, device) for o in obj)
    return obj.to(device) if isinstance(obj, torch.Tensor) else obj


def _rows(obj: Any) -> int | None:
    """The batch dimension of ``obj``: its first tensor's first (None: no batched tensor)."""
    if isinstance(obj, (tuple, list)):
        return next((n for n in map(_rows, obj) if n is not None), None)
    return len(obj) if isinstance(obj, torch.Tensor) and obj.ndim else None


def _share(obj: Any, n: int, rank: int, world: int) -> Any:
    """This process's ``tensor_split`` share of every tensor of ``obj`` with ``n`` rows."""
    if isinstance(obj, (tuple, list)):
        return type(obj)(_share(o, n, rank, world) for o in obj)
    if isinstance(obj, torch.Tensor) and obj.ndim and len(obj) == n:
        return obj.tensor_split(world)[rank]
    return obj


# -- the loop ---------------------------------------------------------------------------------


@dataclass
class _Position:
    """Where the run stands: what a checkpoint needs to continue it."""

    epoch: int = 0
    batch: int = 0              # batches of this epoch already done
    step: int = 0               # optimiser steps in all
    history: list[float] = field(default_factory=list)
    total: float = 0.0          # this epoch's backpropagated loss so far
    steps: int = 0              # and its number of steps
    epoch_rng: dict[str, torch.Tensor] = field(default_factory=dict)  # at the epoch's start


@dataclass
class Loop:
    """Everything one minibatch training needs; :meth:`run` trains and returns the history.

    ``model``, ``optimizer``, ``scheduler``, ``ema`` and ``extra_state`` are the caller's
    objects, trained in place (after a forked DDP run, rank 0's states are loaded back).
    ``gathered``: under DDP each process is given the whole batch (from a Dataset: only its
    own rows read, zeros in the others' places) and ``model`` computes the global batch's
    loss through :func:`local_rows` and :func:`gather` (a contrastive loss), instead of each
    process taking its share of the rows. ``interval="step"``: the
    scheduler and the progress bar advance after every optimiser step and the history holds
    every step's loss (a training counted in steps, one "epoch" of ``steps`` batches).
    ``grad_clip``: the gradients' global norm is clipped to it before each step.
    ``on_step(step, loss)``: called after every optimiser step (and EMA update) with the
    steps done and the batch's loss, before that step's checkpoint; returning True stops the
    training there (an early stop, a snapshot: keep what it records in ``extra_state``).
    Under DDP it runs in every process, so it must decide from what they share (the model,
    the reported loss).
    """

    model: nn.Module
    loss_fn: LossFn
    source: _Source
    epochs: int
    batch_size: int
    optimizer: torch.optim.Optimizer
    gen: torch.Generator
    engine: Engine
    callback: Callback | None = None
    batches: Callable[[int], Iterable[torch.Tensor]] | None = None
    scheduler: Any = None
    ema: torch.optim.swa_utils.AveragedModel | None = None
    extra_state: Mapping[str, Any] = field(default_factory=dict)
    on_epoch_end: Callable[[int], bool | None] | None = None
    on_step: Callable[[int, float], bool | None] | None = None
    advance: Callable[..., None] = lambda n=1, **info: None
    gathered: bool = False
    interval: Literal["epoch", "step"] = "epoch"
    grad_clip: float | None = None

    # -- checks (before any work) --------------------------------------------------------

    def check(self) -> None:
        eng = self.engine
        own = "a DataLoader" if self.source.loader is not None else \
            "a Stream" if self.source.stream is not None else None
        if own is not None and (self.callback is not None or self.batches is not None):
            raise ValueError(f"{own} brings its own batches: callback= and batches= "
                             f"need arrays or a Dataset (they read the batch's indices)")
        if eng.distributed:
            # batches= stays: it must draw only from the seed's generator (the same in every
            # process, as LOS's class-balanced sampler), and each process takes its share
            for name in ("callback", "on_epoch_end"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name}= is not supported with devices > 1 or "
                                     f"strategy='ddp' (it would run in each process on its "
                                     f"share of the rows)")
            if self.batch_size < eng.devices:
                raise ValueError(f"batch_size ({self.batch_size}) must be >= devices "
                                 f"({eng.devices}): each process takes a share of a batch")
        if (eng.checkpoint is not None or eng.resume is not None) and \
                self.callback is not None and not self.extra_state:
            raise ValueError("checkpoint/resume with a callback needs extra_state= (the "
                             "objects the callback keeps state in), else a resumed run differs")
        for name, obj in self.extra_state.items():
            if not (hasattr(obj, "state_dict") and hasattr(obj, "load_state_dict")):
                raise TypeError(f"extra_state[{name!r}] must have state_dict and "
                                f"load_state_dict, got {type(obj).__name__}")

    # -- running ---------------------------------------------------------------------------

    def run(self) -> list[float]:
        """Train; return the mean backpropagated loss of each epoch (NaN: no step)."""
        self.check()
        saved = _read_checkpoint(self.engine.resume, self) if self.engine.resume else None
        if self.engine.plain:
            return self._train(None, saved)
        from lightning_fabric import Fabric

        # Fabric's banners (process group, AMP) are INFO: keep a library call quiet
        logging.getLogger("lightning_fabric").setLevel(logging.WARNING)
        fabric = Fabric(**self._fabric_args())
        if not self.engine.distributed or _launched_externally():
            fabric.launch()
            return self._train(fabric, saved)
        threads = max(1, torch.get_num_threads() // self.engine.devices)
        fd, out = tempfile.mkstemp(suffix=".final.ckpt")
        os.close(fd)
        try:
            fabric.launch(_forked_worker, self, saved, threads, out)
            state = torch.load(out, map_location="cpu", weights_only=True)
        finally:
            os.unlink(out)
        self._restore(state)
        return state["position"].history

    def _fabric_args(self) -> dict[str, Any]:
        eng = self.engine
        cuda = eng.device_kind == "cuda"
        strategy: Any = "auto"
        if eng.distributed:
            from lightning_fabric.strategies import DDPStrategy

            # a baseline objective may leave a part of the model out of its loss (CoMM's
            # fusion under "cross"): DDP must not wait for those gradients
            start = "popen" if _launched_externally() else ("spawn" if cuda else "fork")
            strategy = DDPStrategy(start_method=start, find_unused_parameters=True)
            devices: Any = eng.devices
        else:
            index = next(self.model.parameters()).device.index if cuda else None
            devices = [index or 0] if cuda else 1
        nodes = max(1, int(os.environ.get("WORLD_SIZE", "1")) // eng.devices) \
            if eng.distributed and _launched_externally() else 1
        return {"accelerator": "cuda" if cuda else "cpu", "devices": devices,
                "num_nodes": nodes, "strategy": strategy,
                "precision": "32-true" if eng.precision == "32" else eng.precision}

    def _train(self, fabric: Any, saved: dict[str, Any] | None) -> list[float]:
        global _SHARD
        model, optimizer = self.model, self.optimizer
        if fabric is not None:
            model, optimizer = fabric.setup(self.model, self.optimizer)
            if self.gathered and fabric.world_size > 1:
                _SHARD = (fabric.global_rank, fabric.world_size)
        try:
            return self._epochs(model, optimizer, fabric, saved)
        finally:
            _SHARD = None

    def _epochs(self, model: nn.Module, optimizer: Any, fabric: Any,
                saved: dict[str, Any] | None) -> list[float]:
        pos = _Position()
        if saved is not None:
            self._restore(saved)
            pos = saved["position"]
        while pos.epoch < self.epochs:
            stopped = self._epoch(model, optimizer, fabric, pos)
            if self.interval == "epoch":
                pos.history.append(pos.total / pos.steps if pos.steps else float("nan"))
            if self.scheduler is not None and self.interval == "epoch":
                with warnings.catch_warnings():  # resumed at an epoch's end: no step yet here
                    warnings.filterwarnings("ignore", "Detected call of `lr_scheduler.step",
                                            UserWarning)
                    self.scheduler.step()
            pos.epoch, pos.batch, pos.total, pos.steps = pos.epoch + 1, 0, 0.0, 0
            pos.epoch_rng = {}
            if self.interval == "epoch":
                self.advance(loss=pos.history[-1])
            if stopped or (self.on_epoch_end is not None and self.on_epoch_end(pos.epoch - 1)):
                break
        if self.engine.checkpoint is not None:
            self._save(fabric, pos)
        return pos.history

    def _epoch_batches(self, pos: _Position) -> Iterator[Any]:
        """This epoch's batches, skipping those a resumed run already did: the generators are
        set to their state at the epoch's start, so the same batches are drawn again."""
        if pos.epoch_rng:
            now = _rng_state(self.gen, self.source.loader)
            _set_rng_state(pos.epoch_rng, self.gen, self.source.loader)
        else:
            now = None
            pos.epoch_rng = _rng_state(self.gen, self.source.loader)
        if self.source.loader is not None:
            it: Iterator[Any] = iter(self.source.loader)
        elif self.source.stream is not None:
            it = iter(self.source.stream.batches(pos.epoch))
        elif self.batches is not None:
            it = iter(self.batches(pos.epoch))
        else:
            it = iter(torch.randperm(len(self.source), generator=self.gen)
                      .to(self.source.device).split(self.batch_size))
        for _ in range(pos.batch):
            next(it)
        if now is not None:
            _set_rng_state(now, self.gen, self.source.loader)
        return it

    def _epoch(self, model: nn.Module, optimizer: Any, fabric: Any, pos: _Position) -> bool:
        """One pass: for each batch, loss, backward, step (and EMA, checkpoint); True when
        ``on_step`` stopped it."""
        model.train()
        every = self.engine.checkpoint_every
        for item in self._epoch_batches(pos):
            loss = self._loss(model, item, fabric)
            pos.batch += 1
            if loss is None:
                continue
            optimizer.zero_grad(set_to_none=True)
            if fabric is None:
                loss.backward()
            else:
                fabric.backward(loss)
            if self.grad_clip is not None:
                if fabric is None:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
                else:   # unscaled first under 16-mixed
                    fabric.clip_gradients(model, optimizer, max_norm=self.grad_clip)
            optimizer.step()
            if self.ema is not None:
                self.ema.update_parameters(self.model)
            reported = self._reported(loss, fabric)
            if self.interval == "step":
                if self.scheduler is not None:
                    self.scheduler.step()
                pos.history.append(reported)
                self.advance(loss=reported)
            pos.total += reported
            pos.steps += 1
            pos.step += 1
            if self.on_step is not None and self.on_step(pos.step, reported):
                return True         # the final checkpoint follows
            if every is not None and pos.step % every == 0:
                self._save(fabric, pos)
        return False

    def _batch(self, item: Any, fabric: Any) -> tuple[Any, Any, Any, tuple[int, int] | None]:
        """``(idx, x, y, share)`` of one batch: its indices (None: not read by index), inputs,
        targets and, under DDP, this process's rows of it and their share ``(n_local,
        n_global)`` (None: the whole batch here)."""
        ddp = fabric is not None and fabric.world_size > 1
        shared = ddp and not self.gathered
        if self.source.loader is not None:
            return None, *item, None
        if self.source.stream is not None:
            xb, yb = item
            n = _rows((xb, yb))
            if not shared or n is None:
                return None, xb, yb, None
            rank, world = fabric.global_rank, fabric.world_size
            return (None, _share(xb, n, rank, world), _share(yb, n, rank, world),
                    (n // world + (rank < n % world), n))
        idx, share = item, None
        if shared:
            idx = item.tensor_split(fabric.world_size)[fabric.global_rank]
            share = (len(idx), len(item))
        elif ddp and self.source.dataset is not None:
            return idx, *self._local_read(idx, fabric.global_rank, fabric.world_size), None
        return idx, *self.source.batch(idx), share

    def _local_read(self, idx: torch.Tensor, rank: int, world: int) -> tuple[Any, Any]:
        """A gathered loop's batch ``idx`` from a Dataset with only this process's rows read
        (its ``tensor_split`` share, which :func:`local_rows` returns) and zeros of their
        shape in the other processes' places: the global batch's shapes, not its reading."""
        parts = idx.tensor_split(world)
        if not len(parts[rank]):            # fewer rows than processes: nothing to shape on
            return self.source.batch(idx)
        start = sum(len(p) for p in parts[:rank])
        return _placed(self.source.batch(parts[rank]), start, len(idx))

    def _loss(self, model: nn.Module, item: Any, fabric: Any) -> torch.Tensor | None:
        """The scalar to backpropagate for one batch (None: the callback skips it). Under
        DDP, this process's rows of the batch, weighted by their share of it."""
        idx, xb, yb, share = self._batch(item, fabric)
        if fabric is not None or self.source.dataset is not None:
            device = fabric.device if fabric is not None else next(self.model.parameters()).device
            xb, yb = _to(xb, device), _to(yb, device)
        out = model(xb)
        if share is not None and share[0] == 0:
            return out.sum() * 0.0              # no rows here: take part in the all-reduce
        loss = self.loss_fn(out, yb)
        if self.callback is not None:
            loss = self.callback(idx, loss)
            if loss is None:
                return None
        elif loss.ndim:
            loss = loss.mean()
        if share is not None and share[0] * fabric.world_size != share[1]:
            loss = loss * (share[0] * fabric.world_size / share[1])
        return loss

    @staticmethod
    def _reported(loss: torch.Tensor, fabric: Any) -> float:
        """The batch's loss as one process would see it (DDP: the weighted shares summed)."""
        loss = loss.detach()
        if fabric is not None and fabric.world_size > 1:
            loss = fabric.all_reduce(loss.float(), reduce_op="sum") / fabric.world_size
        return float(loss)

    # -- checkpoints ---------------------------------------------------------------------

    def _objects(self) -> dict[str, Any]:
        objs: dict[str, Any] = {"model": self.model, "optimizer": self.optimizer}
        if self.scheduler is not None:
            objs["scheduler"] = self.scheduler
        if self.ema is not None:
            objs["ema"] = self.ema
        for name, obj in self.extra_state.items():
            objs[f"extra.{name}"] = obj
        return objs

    @functools.cached_property
    def _fingerprint(self) -> str | None:
        """The data's identity: an on-disk dataset's (its files and columns,
        :mod:`iclr25.datasets.files`), a hash of in-memory tensors' values, else None."""
        src = self.source
        data = src.loader.dataset if src.loader is not None else src.X
        if src.stream is not None:
            return None if src.stream.fingerprint is None else src.stream.fingerprint()
        if src.loader is not None or src.dataset is not None:
            return getattr(data, "fingerprint", None)
        return fingerprint(src.X, src.y)

    def _meta(self) -> dict[str, Any]:
        """What a resumed run must share with the saved one, by the caller's names."""
        return {"kind": CHECKPOINT_KIND, "batch_size": self.batch_size,
                "n_samples": len(self.source), "dataset": self._fingerprint,
                "model": {k: list(v.shape) for k, v in self.model.state_dict().items()}}

    def state(self, pos: _Position) -> dict[str, Any]:
        """The checkpoint's content as plain state dicts and values."""
        out = {name: obj.state_dict() for name, obj in self._objects().items()}
        out.update(meta=self._meta(), position=_position_dict(pos),
                   rng=_rng_state(self.gen, self.source.loader))
        return out

    def _save(self, fabric: Any, pos: _Position) -> None:
        """Write the checkpoint beside its path and move it over (rank 0 under DDP)."""
        path = self.engine.checkpoint
        assert path is not None
        ddp = fabric is not None and fabric.world_size > 1
        if not ddp or fabric.global_rank == 0:
            with atomic_write(path, perm=0o600) as fh:   # the owner's only
                torch.save(self.state(pos), fh)
        if ddp:
            fabric.barrier()

    def _restore(self, saved: dict[str, Any]) -> None:
        """Load a checked checkpoint (or a forked worker's final state) into the objects."""
        for name, obj in self._objects().items():
            obj.load_state_dict(saved[name])
        _set_rng_state(saved["rng"], self.gen, self.source.loader)
        if not isinstance(saved["position"], _Position):
            saved["position"] = _position_from(saved["position"])


def _forked_worker(fabric: Any, loop: Loop, saved: dict[str, Any] | None,
                   threads: int, out: str) -> None:
    """One DDP process: train, and rank 0 writes the final states to the file ``out`` for
    the parent (through the launcher's queue, a state over a pipe's buffer would deadlock:
    the launcher joins the processes before it reads the queue)."""
    torch.set_num_threads(threads)
    history = loop._train(fabric, saved)
    if fabric.global_rank == 0:
        torch.save(loop.state(_Position(epoch=loop.epochs, history=history)), out)


def _launched_externally() -> bool:
    """Whether torchrun / fabric run / SLURM already started the processes."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def _position_dict(pos: _Position) -> dict[str, Any]:
    return {"epoch": pos.epoch, "batch": pos.batch, "step": pos.step,
            "history": list(pos.history), "total": pos.total, "steps": pos.steps,
            "epoch_rng": dict(pos.epoch_rng)}


def _position_from(d: Mapping[str, Any]) -> _Position:
    return _Position(epoch=int(d["epoch"]), batch=int(d["batch"]), step=int(d["step"]),
                     history=[float(v) for v in d["history"]], total=float(d["total"]),
                     steps=int(d["steps"]), epoch_rng=dict(d["epoch_rng"]))


def _rng_state(gen: torch.Generator, loader: DataLoader | None) -> dict[str, torch.Tensor]:
    state = {"generator": gen.get_state(), "torch": torch.get_rng_state()}
    if loader is not None and getattr(loader, "generator", None) is not None:
        state["loader"] = loader.generator.get_state()
    return state


def _set_rng_state(state: Mapping[str, torch.Tensor], gen: torch.Generator,
                   loader: DataLoader | None) -> None:
    gen.set_state(state["generator"])
    torch.set_rng_state(state["torch"])
    if "loader" in state and loader is not None and loader.generator is not None:
        loader.generator.set_state(state["loader"])


def _read_checkpoint(path: Path, loop: Loop) -> dict[str, Any]:
    """Read and check ``path`` against ``loop``; nothing is loaded into the objects here.

    Raises:
        ValueError: unreadable or foreign file, or a field that does not fit, named.
    """
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 (zip, pickle and OS errors alike: not readable)
        raise ValueError(f"resume: {path} is not a readable checkpoint "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0][:120]})") from None
    meta = saved.get("meta") if isinstance(saved, dict) else None
    if not isinstance(meta, dict) or meta.get("kind") != CHECKPOINT_KIND:
        raise ValueError(f"resume: {path} is not a checkpoint of this training loop "
                         f"(no {CHECKPOINT_KIND!r} marker)")
    _check_fits(meta, loop._meta(), set(saved), set(loop._objects()))
    try:
        _check_optimizer(saved["optimizer"], loop.optimizer)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"resume: {path}: the optimizer state is malformed ({exc})") from None
    saved["position"] = _position_from(saved["position"])
    return saved


def _check_fits(saved: Mapping[str, Any], here: Mapping[str, Any], saved_keys: set[str],
                objects: set[str]) -> None:
    for name in ("batch_size", "n_samples", "dataset"):
        if saved.get(name) != here[name]:
            what = {"n_samples": "dataset length", "dataset": "dataset (files, columns: "
                    "fingerprint)"}.get(name, name)
            raise ValueError(f"resume: the checkpoint was trained with {what} "
                             f"{saved.get(name)}, this run has {here[name]}")
    a, b = saved["model"], here["model"]
    missing, extra = sorted(set(b) - set(a)), sorted(set(a) - set(b))
    if missing or extra:
        raise ValueError(f"resume: the checkpoint's model does not fit this one: "
                         f"missing {missing[:3]}, unexpected {extra[:3]}")
    for k in b:
        if list(a[k]) != list(b[k]):
            raise ValueError(f"resume: the checkpoint's model does not fit this one: {k!r} "
                             f"has shape {tuple(a[k])} there, {tuple(b[k])} here")
    absent = sorted(objects - saved_keys)
    unused = sorted(k for k in saved_keys - objects
                    if k not in ("meta", "position", "rng"))
    if absent or unused:
        raise ValueError(f"resume: the checkpoint holds {unused or 'no'} extra state and lacks "
                         f"{absent or 'nothing'} this run has (scheduler, ema, extra_state)")


def _check_optimizer(saved: Mapping[str, Any], optimizer: torch.optim.Optimizer) -> None:
    groups = saved["param_groups"]
    sizes = [len(g["params"]) for g in groups]
    here = [len(g["params"]) for g in optimizer.param_groups]
    if sizes != here:
        raise ValueError(f"resume: the checkpoint's optimizer has parameter groups of sizes "
                         f"{sizes}, this one {here}")

