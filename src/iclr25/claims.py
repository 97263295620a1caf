"""Papers, settings, experiments and claims: the model every reproduction is written in.

A method's ``claim.py`` reads top to bottom::

    @dataclass(frozen=True)
    class Sweep(Setting):
        steps: int          # why this many
        wds: tuple[float, ...]

    @dataclass
    class SweepEvidence(Evidence):
        backward: float = scalar("α")
        by_wd: Table

    @experiment(quick=Sweep(steps=5000, wds=(0, 1e-2)), full=Sweep(steps=20000, ...))
    def sweep(setting: Sweep, ctx: Context) -> SweepEvidence:
        fig = ctx.figure("scores_vs_wd")          # a bare matplotlib Figure
        ...
        return SweepEvidence(backward=..., by_wd=Table(...))

    @claim("crh.backward_alignment", experiment=sweep, sentence=..., metric=...,
           unit="α", paper_figure="...", threshold=0.75, direction=">=")
    def backward(ev: SweepEvidence) -> float:
        return ev.backward

The sentence, metric, paper figure, threshold and direction are fixed at declaration, so a
run cannot move them. A claim that compares arms names the arm it beats (``baseline=``) and
may return a :class:`Comparison` so the report shows both values; a claim whose run can be
uninformative declares a ``control`` over the evidence (the baseline learned, the task is not
saturated, the testbed can express the effect): when it is false the verdict is
``inconclusive``, never ``holds``. A control reads only the baseline, the testbed or the data,
never the method's own result, and the report prints the numbers it read. An experiment
runs once per (scale, seed, device) however many claims read it, and is timed on its own.
A package is a method because its ``__init__`` defines ``PAPER``. The CLI and the report
only talk to this module.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import multiprocessing
import os
import pkgutil
import random
import signal
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import wait as _wait_any
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar, get_args

import numpy as np
import torch

from iclr25 import _forkserver
from iclr25._scale import Scale
from iclr25._threads import torch_threads

__all__ = [
    "Claim", "ClaimResult", "Comparison", "Context", "Evidence", "Experiment",
    "ExperimentRecord", "Paper", "Scale", "Setting", "Table", "claim", "discover", "experiment",
    "papers", "run", "scalar", "select", "torch_threads",
]

Direction = Literal[">=", "<="]
_T = TypeVar("_T")


@dataclass(frozen=True)
class Paper:
    """The paper a method package implements; declared as ``PAPER`` in its ``__init__``.

    ``number`` is the method's row in README's table; the report follows that order.
    """

    number: int
    short: str
    title: str
    authors: str
    venue: str = "ICLR 2025"
    arxiv: str | None = None
    openreview: str | None = None
    code: str | None = None

    def __post_init__(self) -> None:
        if not self.short.isidentifier():
            raise ValueError(f"Paper.short must be the package name, got {self.short!r}")


@dataclass(frozen=True)
class Setting:
    """Base of a method's frozen settings: every choice of a run, fixed before measuring.

    ``deviations`` (keyword-only, so subclasses declare their fields as usual) lists what
    differs from the paper's experiment or from the issue, and why, written before measuring;
    the report prints them under the experiment.

    ``budget_fields`` (a class variable every concrete Setting declares) names the fields that
    set how much training the run does: steps, epochs, iterations, rounds, for every arm and
    the control alike. ``--budget K`` multiplies each by K (:meth:`scaled`); ``()`` declares
    that nothing in the experiment trains, so a budget changes nothing.
    """

    budget_fields: ClassVar[tuple[str, ...] | None] = None
    deviations: tuple[str, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        if isinstance(self.deviations, str) or not all(
                isinstance(d, str) and d for d in self.deviations):
            raise TypeError(f"deviations must be a tuple of non-empty strings, got "
                            f"{self.deviations!r}")
        object.__setattr__(self, "deviations", tuple(self.deviations))

    def scaled(self, budget: float) -> Setting:
        """This setting with every budget field multiplied by ``budget`` (> 0).

        Integers are rounded and kept at least 1; a tuple (per-stage or per-arm counts) is
        scaled element by element. ``budget == 1`` returns the setting itself; otherwise a
        deviation saying what was scaled is added, so the report shows it.

        Raises:
            ValueError: ``budget`` is not a positive finite number.
            TypeError: the Setting declares no ``budget_fields``, or one is not a count.
        """
        budget = check_budget(budget, "budget")
        names = type(self).budget_fields
        if names is None:
            raise TypeError(f"{type(self).__name__} declares no budget_fields")
        if budget == 1.0 or not names:
            return self
        changes, was = {}, []
        for name in names:
            v = getattr(self, name)
            changes[name] = _scale_count(v, budget, f"{type(self).__name__}.{name}")
            was.append(f"{name} {_fmt_count(v)} -> {_fmt_count(changes[name])}")
        note = f"training budget x{budget:g} (--budget): " + ", ".join(was)
        return dataclasses.replace(self, **changes, deviations=(*self.deviations, note))


def _check_budget_fields(cls: type) -> None:
    """A Setting type must name its budget fields: existing fields holding counts."""
    names = cls.budget_fields
    if names is None:
        raise TypeError(f"{cls.__name__} must declare budget_fields: the fields that set how "
                        f"much training the experiment does, or () when nothing trains")
    fields = {f.name for f in dataclasses.fields(cls)}
    if isinstance(names, str) or not all(n in fields for n in names):
        raise TypeError(f"{cls.__name__}.budget_fields must name fields of the Setting, got "
                        f"{names!r}")


def check_budget(budget: Any, name: str = "budget") -> float:
    """``budget`` as a float, refused unless it is a positive finite number."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not (
            math.isfinite(budget) and budget > 0):
        raise ValueError(f"{name} must be a positive number, got {budget!r}")
    return float(budget)


def _scale_count(v: Any, k: float, where: str) -> Any:
    if isinstance(v, tuple):
        return tuple(_scale_count(x, k, where) for x in v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"budget field {where} must be a number or a tuple of numbers, "
                        f"got {v!r}")
    # half up, not Python's half-to-even: 1 epoch x 1.5 is 2
    return max(1, math.floor(v * k + 0.5)) if isinstance(v, int) else v * k


def _fmt_count(v: Any) -> str:
    return "(" + ", ".join(map(_fmt_count, v)) + ")" if isinstance(v, tuple) else f"{v:g}"


@dataclass(frozen=True)
class Comparison:
    """What a comparing claim's read returns: both arms and the figure judged.

    ``value`` is the number compared with the threshold (a difference, a ratio, ...);
    ``ours`` and ``baseline`` are the two arms' own values, in the metric's natural unit.
    """

    ours: float
    baseline: float
    value: float


@dataclass(frozen=True)
class Table:
    """A table of evidence: column names and rows of numbers or strings.

    Floats keep full precision here (and in results.json); the report rounds them.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "rows", tuple(tuple(_plain(v) for v in r) for r in self.rows))
        for r in self.rows:
            if len(r) != len(self.columns):
                raise ValueError(f"table {self.title!r}: row {r} has {len(r)} cells, "
                                 f"expected {len(self.columns)}")

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "columns": list(self.columns),
                "rows": [list(r) for r in self.rows]}


def scalar(unit: str = "", doc: str = "") -> Any:
    """Declare a scalar field of an :class:`Evidence` dataclass with its unit."""
    return field(metadata={"unit": unit, "doc": doc})


@dataclass
class Evidence:
    """Base of an experiment's typed result.

    Fields are scalars (``float``/``int``/``bool``/``str``, unit via :func:`scalar`), lists
    of numbers (per seed) and :class:`Table` s; the report renders each kind as a table.
    """

    def scalars(self) -> list[tuple[str, Any, str]]:
        """``(name, value, unit)`` for every scalar or list-of-numbers field."""
        out = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Table):
                continue
            if isinstance(v, (list, tuple)):
                v = [_plain(x) for x in v]
            else:
                v = _plain(v)
            out.append((f.name, v, f.metadata.get("unit", "")))
        return out

    def tables(self) -> list[Table]:
        return [getattr(self, f.name) for f in dataclasses.fields(self)
                if isinstance(getattr(self, f.name), Table)]


def _plain(v: Any) -> Any:
    """A JSON-ready Python scalar from a tensor/numpy scalar; refuses containers of dicts."""
    if isinstance(v, torch.Tensor):
        v = v.item()
    elif isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    raise TypeError(f"evidence values must be numbers or strings, got {type(v).__name__}")


@dataclass
class Context:
    """What an experiment is given: scale, seed, device, and a place for its figures."""

    scale: Scale
    seed: int
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def quick(self) -> bool:
        return self.scale == Scale.quick

    def figure(self, name: str, **kwargs: Any) -> Any:
        """A bare ``matplotlib.figure.Figure`` saved with the experiment as ``<name>.png``.

        A bare Figure renders without pyplot, so the caller's backend is never switched.
        """
        from matplotlib.figure import Figure

        if not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"figure name must be alphanumeric, got {name!r}")
        fig = Figure(**kwargs)
        self.figures[name] = fig
        return fig

    def map_jobs(self, fn: Callable[..., _T], jobs: Sequence[tuple]) -> list[_T]:
        """``[fn(*job) for job in jobs]``: the one way an experiment runs work in parallel.

        The jobs must be independent and seeded by their own arguments, and ``fn`` a
        module-level function, so that the values do not depend on where the jobs run. They
        run here, one after another on the experiment's threads, at quick scale (a smoke
        test: starting workers costs more than its jobs), on a device other than the CPU
        (CUDA cannot fork) or when the experiment has one thread. Otherwise as many run at
        once as the experiment has threads (``--threads``: under ``--jobs N`` the other
        experiments hold the other cores), each on one torch thread (tiny networks: one job
        per core beats threads inside one job): in forked processes (fork, not spawn, so that
        a caller's unguarded script is not re-run), or, when the experiment runs on a Ray
        worker (``--cluster``), as Ray tasks of one CPU.
        """
        jobs = list(jobs)
        workers = min(torch.get_num_threads(), len(jobs))
        if self.quick or self.device.type != "cpu" or workers <= 1:
            return [fn(*job) for job in jobs]
        from iclr25 import _cluster

        if _cluster.in_ray_worker():
            return _cluster.map_on_ray(fn, jobs, workers)
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=torch.set_num_threads, initargs=(1,)) as pool:
            return list(pool.map(fn, *zip(*jobs, strict=True)))


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: one run per (scale, seed, device), shared by its claims."""

    id: str
    method: str
    fn: Callable[[Setting, Context], Evidence]
    quick: Setting
    full: Setting
    cost: tuple[float, float] | None = None  # (quick, full) seconds on one thread

    def setting(self, scale: Scale) -> Setting:
        return self.quick if Scale(scale) == Scale.quick else self.full

    def expected_seconds(self, scale: Scale) -> float | None:
        """The declared one-thread time at ``scale`` (None: not declared)."""
        if self.cost is None:
            return None
        return self.cost[0] if Scale(scale) == Scale.quick else self.cost[1]


@dataclass(frozen=True)
class Claim:
    """A registered claim: its fixed declaration and the field of evidence it reads."""

    id: str
    method: str
    experiment: Experiment
    sentence: str
    metric: str
    unit: str
    paper_figure: str
    threshold: float
    direction: Direction
    read: Callable[[Evidence], float | Comparison]
    baseline: str | None = None
    control: Callable[[Evidence], bool] | None = None
    control_doc: str | None = None
    trivial: Callable[[Evidence], float | Comparison] | None = None
    trivial_doc: str | None = None
    competitors: Callable[[Evidence], dict[str, float]] | None = None

    def holds(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        return value >= self.threshold if self.direction == ">=" else value <= self.threshold


_EXPERIMENTS: dict[str, Experiment] = {}
_CLAIMS: dict[str, Claim] = {}


def _method_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "iclr25":
        # claims declared outside the package (tests) use their module's last part
        return parts[-1]
    return parts[1]


def experiment(*, quick: Setting, full: Setting, cost: tuple[float, float] | None = None,
               ) -> Callable[[Callable], Experiment]:
    """Register ``fn(setting, ctx) -> Evidence`` as an experiment with its two settings.

    ``cost`` is its measured time in seconds on one thread at (quick, full) scale: the
    runner starts the longest experiments first so that ``--jobs N`` packs well.
    """
    if cost is not None and not (len(cost) == 2 and all(
            isinstance(c, (int, float)) and c >= 0 for c in cost)):
        raise ValueError(f"cost must be (quick seconds, full seconds), got {cost!r}")
    for name, s in (("quick", quick), ("full", full)):
        if not (isinstance(s, Setting) and dataclasses.is_dataclass(s)
                and type(s).__dataclass_params__.frozen):  # type: ignore[attr-defined]
            raise TypeError(f"{name} must be a frozen Setting dataclass, got {type(s).__name__}")
    if type(quick) is not type(full):
        raise TypeError(f"quick and full must be the same Setting type, got "
                        f"{type(quick).__name__} and {type(full).__name__}")
    _check_budget_fields(type(full))

    def register(fn: Callable) -> Experiment:
        method = _method_of(fn.__module__)
        eid = f"{method}.{fn.__name__.lstrip('_')}"
        if eid in _EXPERIMENTS and _EXPERIMENTS[eid].fn.__qualname__ != fn.__qualname__:
            raise ValueError(f"experiment {eid!r} is already registered")
        exp = Experiment(eid, method, fn, quick, full,
                         None if cost is None else (float(cost[0]), float(cost[1])))
        _EXPERIMENTS[eid] = exp
        return exp

    return register


def claim(
    claim_id: str,
    *,
    experiment: Experiment,
    sentence: str,
    metric: str,
    unit: str,
    paper_figure: str,
    threshold: float,
    direction: Direction = ">=",
    baseline: str | None = None,
    control: Callable[[Any], bool] | None = None,
    control_doc: str | None = None,
    trivial: Callable[[Any], float | Comparison] | None = None,
    trivial_doc: str | None = None,
    competitors: Callable[[Any], dict[str, float]] | None = None,
) -> Callable[[Callable[[Any], float | Comparison]], Claim]:
    """Register ``read(evidence)`` as the claim ``claim_id`` (``"<method>.<name>"``).

    ``read`` returns one field of the experiment's evidence (a float), or a
    :class:`Comparison` when the claim compares against the arm named by ``baseline``.
    ``control(evidence) -> bool``, described by ``control_doc``, says whether the run can
    separate method and baseline at all (the baseline learned: it beats its own untrained
    self by a stated margin; the task is not saturated; the testbed can express the effect);
    it must read only the baseline, the testbed or the data.

    ``trivial(evidence)``, described by ``trivial_doc``, is the claim's figure computed with a
    trivial arm in the method's place (random, identity, the reversed direction, a
    construction true by design): when it too meets the threshold the verdict is
    ``uninformative``, never ``holds``. ``competitors(evidence)`` returns ``{arm: value}``
    for arms in the evidence other than the baseline, in the unit of ``ours`` (of the figure
    when the claim returns no Comparison; better in the claim's direction): the report names
    the strongest beside the claim. Everything the claim is judged by is fixed here.
    """
    if direction not in (">=", "<="):
        raise ValueError(f"direction must be '>=' or '<=', got {direction!r}")
    if "." not in claim_id:
        raise ValueError(f"claim_id must look like '<method>.<name>', got {claim_id!r}")
    if not isinstance(experiment, Experiment):
        raise TypeError("experiment must be a function decorated with @experiment")
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    if baseline is not None and not (isinstance(baseline, str) and baseline.strip()):
        raise ValueError(f"baseline must name the arm compared against, got {baseline!r}")
    if (control is None) != (control_doc is None):
        raise ValueError("control and control_doc go together: a control needs the sentence "
                         "saying what it checks")
    if control is not None and not callable(control):
        raise TypeError("control must be a predicate over the experiment's evidence")
    if (trivial is None) != (trivial_doc is None):
        raise ValueError("trivial and trivial_doc go together: a trivial arm needs the "
                         "sentence naming it")
    if trivial is not None and not callable(trivial):
        raise TypeError("trivial must read the trivial arm's figure from the evidence")
    if competitors is not None and not callable(competitors):
        raise TypeError("competitors must read {arm: value} from the evidence")
    method = claim_id.split(".")[0]
    if method != experiment.method and experiment.fn.__module__.startswith("iclr25."):
        raise ValueError(f"claim {claim_id!r} reads experiment {experiment.id!r} of another "
                         f"method")

    def register(read: Callable[[Any], float]) -> Claim:
        if claim_id in _CLAIMS and _CLAIMS[claim_id].read.__qualname__ != read.__qualname__:
            raise ValueError(f"claim {claim_id!r} is already registered")
        c = Claim(claim_id, method, experiment, sentence, metric, unit, paper_figure,
                  float(threshold), direction, read, baseline, control, control_doc,
                  trivial, trivial_doc, competitors)
        _CLAIMS[claim_id] = c
        return c

    return register


def unregister(prefix: str) -> None:
    """Remove the claims and experiments of a method (used by tests that declare their own)."""
    for reg in (_CLAIMS, _EXPERIMENTS):
        for key in [k for k in reg if k.split(".")[0] == prefix]:
            del reg[key]


# --- discovery ------------------------------------------------------------------------------

def method_packages() -> list[str]:
    """Names of the subpackages of ``iclr25`` whose ``__init__`` defines ``PAPER``."""
    import iclr25

    names = []
    for m in pkgutil.iter_modules(iclr25.__path__):
        if not m.ispkg or m.name.startswith("_"):
            continue
        try:
            mod = importlib.import_module(f"iclr25.{m.name}")
        except ImportError:
            continue  # a method whose extra is not installed; `iclr25 list` says which
        if isinstance(getattr(mod, "PAPER", None), Paper):
            names.append(m.name)
    return sorted(names)


def unavailable_methods() -> dict[str, str]:
    """Subpackages that failed to import (a missing extra), with the error message."""
    import iclr25

    out = {}
    for m in pkgutil.iter_modules(iclr25.__path__):
        if m.ispkg and not m.name.startswith("_"):
            try:
                importlib.import_module(f"iclr25.{m.name}")
            except ImportError as exc:
                out[m.name] = str(exc)
    return out


def papers() -> dict[str, Paper]:
    """``{method: PAPER}`` for every importable method, in README order."""
    found = {n: importlib.import_module(f"iclr25.{n}").PAPER for n in method_packages()}
    return dict(sorted(found.items(), key=lambda kv: kv[1].number))


def discover() -> dict[str, Claim]:
    """Import every method's ``claim`` module; return the claims in README order."""
    order = {name: p.number for name, p in papers().items()}
    for name in order:
        try:
            importlib.import_module(f"iclr25.{name}.claim")
        except ModuleNotFoundError as exc:
            if exc.name != f"iclr25.{name}.claim":
                raise
    return dict(sorted(_CLAIMS.items(), key=lambda kv: (order.get(kv[1].method, 10**6),)))


def select(names: Sequence[str], registry: dict[str, Claim]) -> list[Claim]:
    """Claims matching ``names``: exact ids or method names (``mother`` -> ``mother.*``).

    Raises:
        KeyError: naming the unknown names.
    """
    if not names:
        return list(registry.values())
    chosen: dict[str, Claim] = {}
    unknown = []
    for name in names:
        hits = [c for cid, c in registry.items() if cid == name or c.method == name]
        if not hits:
            unknown.append(name)
        chosen.update((c.id, c) for c in hits)
    if unknown:
        raise KeyError(unknown)
    return [c for c in registry.values() if c.id in chosen]


# --- running ----------------------------------------------------------------------------------

@dataclass
class ExperimentRecord:
    """One experiment run, as stored in results.json and rendered once in the report."""

    id: str
    method: str
    scale: str
    seed: int
    device: str
    seconds: float
    setting: dict[str, Any]
    scalars: list[tuple[str, Any, str]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    error: str | None = None
    deviations: list[str] = field(default_factory=list)
    threads: int | None = None
    budget: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["scalars"] = [list(s) for s in self.scalars]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExperimentRecord:
        d = _fields(cls, data)
        d["scalars"] = [tuple(s) for s in d["scalars"]]
        return cls(**d)


Status = Literal["holds", "fails", "inconclusive", "uninformative", "error"]
STATUSES: tuple[str, ...] = get_args(Status)


@dataclass
class ClaimResult:
    """The record of one claim; ``status`` is one of :data:`STATUSES`.

    ``measured`` is the figure judged against the threshold; ``ours`` and ``baseline_value``
    are the two arms' values when the claim returned a :class:`Comparison`. ``control_ok`` is
    the declared control's verdict (None: no control) and ``control_read`` the evidence it
    read; ``trivial_value`` is the trivial arm's figure; ``competitors`` the other arms'
    values; ``reason`` says why a verdict is inconclusive, uninformative or errored, and
    ``why`` is the measured sentence the report ends a claim that does not hold with.
    """

    claim_id: str
    method: str
    experiment: str
    sentence: str
    metric: str
    unit: str
    paper_figure: str
    threshold: float
    direction: str
    measured: float | None
    holds: bool
    status: str
    error: str | None = None
    baseline: str | None = None
    ours: float | None = None
    baseline_value: float | None = None
    control_doc: str | None = None
    control_ok: bool | None = None
    control_read: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    trivial_doc: str | None = None
    trivial_value: float | None = None
    competitors: dict[str, float] = field(default_factory=dict)
    why: str | None = None
    budget: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimResult:
        return cls(**_fields(cls, data))


def _fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    missing = required - set(data)
    if missing:
        raise ValueError(f"{cls.__name__} data is missing fields: {sorted(missing)}")
    return {k: data[k] for k in names if k in data}


def _setting_dict(s: Setting) -> dict[str, Any]:
    return {f.name: (list(v) if isinstance(v := getattr(s, f.name), tuple) else v)
            for f in dataclasses.fields(s) if f.name != "deviations"}


def run_experiment(exp: Experiment, scale: Scale, seed: int, device: str | torch.device,
                   figure_dir: Path, budget: float = 1.0,
                   ) -> tuple[ExperimentRecord, Evidence | None]:
    """Run one experiment on a forked global RNG; an exception becomes ``error``.

    ``budget`` multiplies the setting's budget fields (:meth:`Setting.scaled`).
    """
    scale = Scale(scale)
    dev = torch.device(device)
    ctx = Context(scale=scale, seed=seed, device=dev)
    setting = exp.setting(scale).scaled(budget)
    record = ExperimentRecord(exp.id, exp.method, scale.value, seed, str(dev), 0.0,
                              _setting_dict(setting), deviations=list(setting.deviations),
                              threads=torch.get_num_threads(), budget=float(budget))
    cuda = [dev.index or 0] if dev.type == "cuda" else []
    start = time.perf_counter()
    # forked so that code which still draws from the global RNG is seeded, and the
    # caller's RNG state is left as it was
    state = random.getstate(), np.random.get_state()
    try:
        with torch.random.fork_rng(devices=cuda):
            random.seed(seed)
            np.random.seed(seed)
            torch.manual_seed(seed)
            ev = exp.fn(setting, ctx)
        if not isinstance(ev, Evidence):
            raise TypeError(f"experiment {exp.id} returned {type(ev).__name__}, "
                            f"expected an Evidence dataclass")
        record.scalars = ev.scalars()
        record.tables = [t.to_dict() for t in ev.tables()]
    except Exception:
        record.error = traceback.format_exc()
        ev = None
    finally:
        random.setstate(state[0])
        np.random.set_state(state[1])
        record.seconds = time.perf_counter() - start
    if ctx.figures:
        figure_dir = Path(figure_dir)
        figure_dir.mkdir(parents=True, exist_ok=True)
        for name, fig in ctx.figures.items():
            path = figure_dir / f"{exp.id}.{name}.png"
            fig.savefig(path, dpi=110, bbox_inches="tight")
            record.figures.append(str(path))
    return record, ev


class _Reads:
    """The evidence as a control sees it: every field it reads is recorded for the report."""

    def __init__(self, ev: Evidence) -> None:
        self._ev = ev
        self.read: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        v = getattr(self._ev, name)
        if isinstance(v, Table):
            self.read[name] = f"table {v.title!r}"
        elif isinstance(v, (list, tuple)):
            self.read[name] = [_plain(x) for x in v]
        else:
            try:
                self.read[name] = _plain(v)
            except TypeError:
                self.read[name] = type(v).__name__
        return v


def _figure(got: float | Comparison) -> float:
    return float(got.value) if isinstance(got, Comparison) else float(got)


def judge(c: Claim, ev: Evidence | None, record: ExperimentRecord) -> ClaimResult:
    """Read a claim's figure (its control, trivial arm and competitors) and give the verdict.

    A false control or a NaN/inf reading makes the verdict ``inconclusive`` with its reason;
    a figure that meets the threshold while the trivial arm's does too is ``uninformative``;
    otherwise the figure is compared with the threshold. Every verdict but ``holds`` carries
    its measured ``why``.
    """
    common = dict(claim_id=c.id, method=c.method, experiment=c.experiment.id,
                  sentence=c.sentence, metric=c.metric, unit=c.unit,
                  paper_figure=c.paper_figure, threshold=c.threshold, direction=c.direction,
                  baseline=c.baseline, control_doc=c.control_doc, trivial_doc=c.trivial_doc,
                  budget=record.budget)
    if ev is None:
        r = ClaimResult(measured=None, holds=False, status="error",
                        error=f"experiment {record.id} failed:\n{record.error}", **common)
        r.why = why(r)
        return r
    try:
        got = c.read(ev)
        if isinstance(got, Comparison):
            if c.baseline is None:
                raise TypeError(f"claim {c.id} returned a Comparison but declares no baseline=")
            ours, base = float(got.ours), float(got.baseline)
        else:
            ours, base = None, None
        value = _figure(got)
        control_ok, read = None, {}
        if c.control is not None:
            reads = _Reads(ev)
            control_ok = bool(c.control(reads))
            read = reads.read
        trivial = None if c.trivial is None else _figure(c.trivial(ev))
        competitors = {} if c.competitors is None else {
            str(k): float(v) for k, v in c.competitors(ev).items()}
    except Exception:
        r = ClaimResult(measured=None, holds=False, status="error",
                        error=traceback.format_exc(), **common)
        r.why = why(r)
        return r
    reason, status = None, None
    if control_ok is False:
        reason, status = f"control failed: {c.control_doc}", "inconclusive"
    elif not math.isfinite(value):
        reason = f"the measured value is {value}: the run gave no usable figure"
        status = "inconclusive"
    elif c.holds(value) and trivial is not None and c.holds(trivial):
        reason = f"the trivial arm ({c.trivial_doc}) meets the threshold too"
        status = "uninformative"
    else:
        status = "holds" if c.holds(value) else "fails"
    r = ClaimResult(measured=value, holds=status == "holds", status=status, ours=ours,
                    baseline_value=base, control_ok=control_ok, control_read=read,
                    reason=reason, trivial_value=trivial, competitors=competitors, **common)
    r.why = why(r)
    return r


def _g(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def strongest_competitor(r: ClaimResult) -> tuple[str, float] | None:
    """The competitor that beats ``ours`` by the most, in the claim's direction (or None)."""
    ours = r.ours if r.ours is not None else r.measured
    if ours is None or not r.competitors:
        return None
    better = max if r.direction == ">=" else min
    name = better(r.competitors, key=lambda k: r.competitors[k])
    v = r.competitors[name]
    beats = v > ours if r.direction == ">=" else v < ours
    return (name, v) if beats and math.isfinite(v) else None


def why(r: ClaimResult, trend: str | None = None) -> str | None:
    """One sentence, from measured figures only, saying why a claim does not hold.

    ``None`` for a claim that holds. ``trend`` is the ladder's trend of the claim (see
    :func:`iclr25.ladder.trend`), appended when a ladder was run.
    """
    if r.status == "holds":
        return None
    sign = "≥" if r.direction == ">=" else "≤"
    if r.status == "error":
        text = "the experiment raised before giving a figure"
    elif r.status == "uninformative":
        text = (f"the trivial arm ({r.trivial_doc}) reads {_g(r.trivial_value)}, which also "
                f"meets {sign} {r.threshold:g}, so meeting it says nothing about the method")
    elif r.control_ok is False:
        read = ", ".join(f"{k} = {_fmt_read(v)}" for k, v in r.control_read.items())
        text = f"the control failed ({(r.control_doc or '').rstrip('.')})"
        text += f"; it read {read}" if read else ""
    elif r.measured is None or not math.isfinite(r.measured):
        text = r.reason or "the run gave no usable figure"
    else:
        gap = abs(r.threshold - r.measured)
        text = f"{_g(r.measured)} misses {sign} {r.threshold:g} by {gap:.3g}"
        if r.ours is not None:
            text += f" (ours {_g(r.ours)} vs {r.baseline} {_g(r.baseline_value)})"
        strong = strongest_competitor(r)
        if strong is not None:
            text += f"; the strongest competitor, {strong[0]}, reads {_g(strong[1])}"
    if trend is not None:
        text += f"; ladder: {trend}"
    return text[0].upper() + text[1:] + "."


def _fmt_read(v: Any) -> str:
    if isinstance(v, float):
        return _g(v)
    if isinstance(v, list):
        return "[" + ", ".join(_fmt_read(x) for x in v[:8]) + (", ..." if len(v) > 8 else "") + "]"
    return str(v)


def default_threads(jobs: int) -> int:
    """Torch threads per experiment when ``jobs`` run at once: the cores shared out."""
    return max(1, (os.cpu_count() or 1) // jobs)


def _grouped(selected: Sequence[Claim]) -> dict[str, tuple[Experiment, list[Claim]]]:
    groups: dict[str, tuple[Experiment, list[Claim]]] = {}
    for c in selected:
        groups.setdefault(c.experiment.id, (c.experiment, []))[1].append(c)
    return groups


@dataclass(frozen=True)
class Task:
    """One experiment to run at one (seed, budget), with the claims that read it."""

    exp: Experiment
    claims: tuple[Claim, ...]
    seed: int
    budget: float
    figure_dir: Path


@dataclass(frozen=True)
class _Order:
    """A task as a worker process or a Ray task receives it: the experiment and claims by id,
    with the modules that register them (registered objects do not pickle)."""

    modules: tuple[str, ...]
    experiment: str
    claims: tuple[str, ...]
    scale: str
    seed: int
    device: str
    budget: float
    threads: int
    figure_dir: str

    @classmethod
    def of(cls, t: Task, how: tuple[Scale, str, int]) -> _Order:
        """The order for task ``t`` run at ``how`` = (scale, device, threads)."""
        scale, device, threads = how
        modules = dict.fromkeys([t.exp.fn.__module__, *(c.read.__module__ for c in t.claims)])
        return cls(tuple(modules), t.exp.id, tuple(c.id for c in t.claims), scale.value,
                   t.seed, device, t.budget, threads, str(t.figure_dir))


def _perform(order: _Order) -> tuple[ExperimentRecord, list[ClaimResult]]:
    """What a worker (a process of ``--jobs``, or a Ray task) does with an order: import the
    modules, run the experiment on the order's threads, judge its claims."""
    for m in order.modules:
        importlib.import_module(m)
    with torch_threads(order.threads):  # an experiment that changes the count leaves it here
        rec, ev = run_experiment(_EXPERIMENTS[order.experiment], Scale(order.scale),
                                 order.seed, order.device, Path(order.figure_dir), order.budget)
    return rec, [judge(_CLAIMS[cid], ev, rec) for cid in order.claims]


def _serve(conn: Any) -> None:
    """A worker that lives for the run: performs the orders it is sent, one at a time."""
    while (order := conn.recv()) is not None:
        conn.send(_perform(order))
    conn.close()


def _failed(task: Task, why: str, scale: Scale, device: str, threads: int,
            ) -> tuple[ExperimentRecord, list[ClaimResult]]:
    """The record and verdicts of a task that could not report: every claim errors, ``why``."""
    setting = task.exp.setting(scale).scaled(task.budget)
    rec = ExperimentRecord(task.exp.id, task.exp.method, scale.value, task.seed, device,
                           float("nan"), _setting_dict(setting), error=why,
                           deviations=list(setting.deviations), threads=threads,
                           budget=task.budget)
    return rec, [judge(c, None, rec) for c in task.claims]


def _died(task: Task, exitcode: int | None, scale: Scale, device: str, threads: int,
          ) -> tuple[ExperimentRecord, list[ClaimResult]]:
    if exitcode is not None and exitcode < 0:
        try:
            why = f"killed by {signal.Signals(-exitcode).name} (out of memory, or killed)"
        except ValueError:
            why = f"killed by signal {-exitcode}"
    else:
        why = f"exited with status {exitcode} before reporting"
    return _failed(task, f"worker process {why}", scale, device, threads)


Finish = Callable[[int, ExperimentRecord, list[ClaimResult]], None]


def longest_first(tasks: Sequence[Task], scale: Scale,
                  seconds: dict[str, float] | None = None) -> list[int]:
    """Task indices, the longest expected first (stable among equals).

    The expected time is ``seconds[experiment id]`` (a previous run's), else the experiment's
    declared cost; a task with neither goes first, in registry order, since it may be long.
    A task's time is assumed to grow in proportion to its budget.
    """
    def expected(i: int) -> float:
        t = tasks[i]
        base = (seconds or {}).get(t.exp.id, t.exp.expected_seconds(scale))
        return math.inf if base is None or not math.isfinite(base) else base * t.budget

    return sorted(range(len(tasks)), key=lambda i: -expected(i))


class _Workers:
    """Up to ``jobs`` worker processes, each started once and fed task after task."""

    def __init__(self, jobs: int) -> None:
        _forkserver.start()
        self.mp = _forkserver.CONTEXT
        self.jobs = jobs
        self.idle: list[tuple[Any, Any]] = []
        self.busy: dict[Any, tuple[Any, int]] = {}  # connection -> (process, task index)

    def _start(self) -> tuple[Any, Any]:
        mine, theirs = self.mp.Pipe(duplex=True)
        # not a daemon: an experiment may run its jobs in a process pool (Context.map_jobs)
        proc = self.mp.Process(target=_serve, args=(theirs,), daemon=False)
        proc.start()
        theirs.close()  # the child holds the only other end: its death reads as EOF
        return mine, proc

    def can_take(self) -> bool:
        return len(self.busy) < self.jobs

    def send(self, i: int, order: _Order) -> None:
        conn, proc = self.idle.pop() if self.idle else self._start()
        conn.send(order)
        self.busy[conn] = proc, i

    def results(self) -> Iterator[tuple[int, Any, int | None]]:
        """``(task index, (record, results) or None, exit code)`` for each task that ends."""
        for conn in _wait_any(list(self.busy)):
            proc, i = self.busy.pop(conn)
            try:
                got = conn.recv()
            except (EOFError, OSError):  # the worker died: it is not reused
                proc.join()
                conn.close()
                yield i, None, proc.exitcode
                continue
            self.idle.append((conn, proc))
            yield i, got, None

    def close(self) -> None:
        for conn, proc in self.idle:
            try:
                conn.send(None)
            except OSError:
                pass
            conn.close()
            proc.join()
        for conn, (proc, _i) in self.busy.items():  # an interrupt: no worker outlives the run
            if proc.is_alive():
                proc.terminate()
            proc.join()
            conn.close()
        self.idle, self.busy = [], {}


def _run_in_workers(tasks: Sequence[Task], jobs: int, how: tuple[Scale, str, int],
                    on_experiment: Callable[[Experiment], None] | None,
                    finish: Finish, order: Sequence[int]) -> None:
    """Run ``tasks`` in ``order`` on up to ``jobs`` worker processes that live for the run.

    ``how`` is (scale, device, threads); ``finish`` receives each task's index, record and
    judged claims as it ends, in the order they end. A worker that dies errors only its own
    task's claims, and a new one takes the next task.
    """
    scale, device, threads = how
    pending = list(order)
    workers = _Workers(jobs)
    try:
        while pending or workers.busy:
            while pending and workers.can_take():
                i = pending.pop(0)
                workers.send(i, _Order.of(tasks[i], how))
                if on_experiment is not None:
                    on_experiment(tasks[i].exp)
            for i, got, exitcode in workers.results():
                rec, results = got if got is not None else _died(tasks[i], exitcode, scale,
                                                                  device, threads)
                finish(i, rec, results)
    finally:
        workers.close()


def run_tasks(tasks: Sequence[Task], scale: Scale, device: str | torch.device = "cpu",
              on_experiment: Callable[[Experiment], None] | None = None, *, jobs: int = 1,
              threads: int | None = None,
              on_done: Callable[[ExperimentRecord, list[ClaimResult]], None] | None = None,
              seconds: dict[str, float] | None = None, cluster: Any = None,
              ) -> list[tuple[ExperimentRecord, list[ClaimResult]]]:
    """Run each task (an experiment at a seed and budget) and judge its claims.

    With ``jobs > 1`` the tasks run on that many worker processes that live for the
    run, each with ``threads`` torch threads (default: the cores shared out), the longest
    expected first (:func:`longest_first`, from ``seconds`` of a previous run or the declared
    costs); a worker that dies marks its task's claims ``error`` and the others complete.
    With ``jobs == 1`` they run here, one after another, in the given order. Given (seed,
    device, threads, budget) the values do not depend on ``jobs`` or the order. The results
    come back in the tasks' order. ``on_experiment`` is called as each task starts and
    ``on_done`` as it finishes. ``cluster`` (the ``ray`` module of an open
    :func:`iclr25._cluster.ray_session`) runs every task as a Ray task instead, asking for
    ``threads`` CPUs each; ``jobs`` is then the cluster's business.
    """
    scale = Scale(scale)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    threads = default_threads(jobs) if threads is None else threads
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
    for t in tasks:
        check_budget(t.budget)
    device = str(torch.device(device))
    done: dict[int, tuple[ExperimentRecord, list[ClaimResult]]] = {}

    def finish(i: int, rec: ExperimentRecord, results: list[ClaimResult]) -> None:
        done[i] = rec, results
        if on_done is not None:
            on_done(rec, results)

    if cluster is not None:
        from iclr25._cluster import run_on_ray

        run_on_ray(cluster, tasks, (scale, device, threads), on_experiment, finish,
                   longest_first(tasks, scale, seconds),
                   lambda t, why: _failed(t, why, scale, device, threads))
    elif jobs == 1:
        with torch_threads(threads):
            for i, t in enumerate(tasks):
                if on_experiment is not None:
                    on_experiment(t.exp)
                rec, ev = run_experiment(t.exp, scale, t.seed, device, t.figure_dir, t.budget)
                finish(i, rec, [judge(c, ev, rec) for c in t.claims])
    else:
        _run_in_workers(tasks, jobs, (scale, device, threads), on_experiment, finish,
                        longest_first(tasks, scale, seconds))
    return [done[i] for i in range(len(tasks))]


def run(selected: Sequence[Claim], scale: Scale, seed: int, figure_dir: Path,
        device: str | torch.device = "cpu",
        on_experiment: Callable[[Experiment], None] | None = None,
        *, jobs: int = 1, threads: int | None = None, budget: float = 1.0,
        on_done: Callable[[ExperimentRecord, list[ClaimResult]], None] | None = None,
        seconds: dict[str, float] | None = None, cluster: Any = None,
        ) -> tuple[list[ExperimentRecord], list[ClaimResult]]:
    """Run each experiment the claims need once, at ``budget``, then judge every claim.

    See :func:`run_tasks` for ``jobs``, ``threads``, ``seconds``, ``cluster``,
    ``on_experiment`` and ``on_done``.
    """
    budget = check_budget(budget)
    tasks = [Task(exp, tuple(cs), seed, budget, Path(figure_dir))
             for exp, cs in _grouped(selected).values()]
    done = run_tasks(tasks, scale, device, on_experiment, jobs=jobs, threads=threads,
                     on_done=on_done, seconds=seconds, cluster=cluster)
    by_id = {r.claim_id: r for _, rs in done for r in rs}
    return [rec for rec, _ in done], [by_id[c.id] for c in selected]
