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
A package is a method because its ``__init__`` defines ``PAPER``.

This module holds the declarations and their discovery; :mod:`iclr25.verdicts` judges a
claim's evidence, :mod:`iclr25.runner` runs experiments and :mod:`iclr25.report` writes what
they gave (``docs/architecture.rst`` follows a claim through all four).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import multiprocessing
import pkgutil
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import torch

from iclr25._scale import Scale
from iclr25._threads import torch_threads

__all__ = [
    "Claim", "Comparison", "Context", "Evidence", "Experiment", "Paper", "Scale", "Setting",
    "Table", "claim", "discover", "experiment", "papers", "scalar", "select", "torch_threads",
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


def _check_reader(name: str, fn: Any, doc: str | None, does: str, why: str) -> None:
    """A claim's optional reader (its control, its trivial arm) comes with its sentence."""
    if (fn is None) != (doc is None):
        raise ValueError(f"{name} and {name}_doc go together: {why}")
    if fn is not None and not callable(fn):
        raise TypeError(f"{name} must {does}")


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
    _check_reader("control", control, control_doc, "be a predicate over the experiment's evidence",
                  "a control needs the sentence saying what it checks")
    _check_reader("trivial", trivial, trivial_doc, "read the trivial arm's figure from the "
                  "evidence", "a trivial arm needs the sentence naming it")
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


def from_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of dataclass ``cls`` in ``data`` (a record read back from JSON);
    keys it does not know are dropped.

    Raises:
        ValueError: ``data`` lacks a field that has no default.
    """
    names = {f.name for f in dataclasses.fields(cls)}
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    missing = required - set(data)
    if missing:
        raise ValueError(f"{cls.__name__} data is missing fields: {sorted(missing)}")
    return {k: data[k] for k in names if k in data}
