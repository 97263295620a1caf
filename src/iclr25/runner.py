"""The runner: experiments run as tasks on an engine, and their claims judged.

A :class:`Task` is one experiment with the claims that read it, at a seed, run as its
:class:`RunSpec` says (scale, device, threads, budget, draws). An :class:`Engine` runs tasks
and reports each one's :class:`Outcome` as it ends; there are three:

- :class:`Inline`: here, one after another, in the tasks' order (``--jobs 1``);
- :class:`Pool`: on worker processes forked from :mod:`iclr25._forkserver` that live for the
  run, the longest expected first (``--jobs N``);
- :class:`Ray`: one Ray task each, on a session opened by :func:`iclr25._cluster.ray_session`
  (``--cluster``).

:func:`engine_for` picks one from ``jobs`` and ``cluster``; a new engine is a class here with
``concurrent`` and ``run``, and a line there. Given (seed, device, threads, budget) the values
do not depend on the engine or the order.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
import random
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait as _wait_any
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from iclr25 import _forkserver, claims
from iclr25._scale import Scale
from iclr25._threads import torch_threads
from iclr25.claims import Claim, Context, Evidence, Experiment, Setting, check_budget, from_fields
from iclr25.verdicts import ClaimResult, judge

__all__ = ["LOST", "Engine", "ExperimentRecord", "Inline", "Outcome", "Pool", "Ray", "RunSpec",
           "Task", "default_threads", "engine_for", "longest_first", "run", "run_experiment",
           "run_tasks"]

#: the error of every task a :class:`Ray` engine had not finished when its connection died
LOST = "the connection to the Ray cluster was lost"


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
        d = from_fields(cls, data)
        d["scalars"] = [tuple(s) for s in d["scalars"]]
        return cls(**d)


def _setting_dict(s: Setting) -> dict[str, Any]:
    return {f.name: (list(v) if isinstance(v := getattr(s, f.name), tuple) else v)
            for f in dataclasses.fields(s) if f.name != "deviations"}


def _save_figures(ctx: Context, exp: Experiment, figure_dir: Path, record: ExperimentRecord,
                  ) -> None:
    if ctx.figures:
        figure_dir = Path(figure_dir)
        figure_dir.mkdir(parents=True, exist_ok=True)
        for name, fig in ctx.figures.items():
            path = figure_dir / f"{exp.id}.{name}.png"
            fig.savefig(path, dpi=110, bbox_inches="tight")
            record.figures.append(str(path))


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
    _save_figures(ctx, exp, figure_dir, record)
    return record, ev


# --- tasks ------------------------------------------------------------------------------------

def default_threads(jobs: int) -> int:
    """Torch threads per experiment when ``jobs`` run at once: the cores shared out."""
    return max(1, (os.cpu_count() or 1) // jobs)


@dataclass(frozen=True)
class RunSpec:
    """How an experiment runs: what, besides its seed, its values depend on.

    ``scale`` picks the Setting; ``device`` is a torch device name; ``threads`` the torch
    threads it runs on; ``budget`` multiplies the Setting's budget fields
    (:meth:`iclr25.claims.Setting.scaled`); ``draws`` is how many times the experiment is
    drawn (seeds ``seed, seed + 1, ...``); this runner draws once.

    Raises:
        ValueError: naming the field, for a value out of its range.
    """

    scale: Scale
    device: str = "cpu"
    threads: int = 1
    budget: float = 1.0
    draws: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", Scale(self.scale))
        object.__setattr__(self, "device", str(torch.device(self.device)))
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise ValueError(f"threads must be an integer >= 1, got {self.threads!r}")
        object.__setattr__(self, "budget", check_budget(self.budget))
        if self.draws != 1 or isinstance(self.draws, bool):
            raise ValueError(f"draws must be 1 (one run per seed), got {self.draws!r}")


@dataclass(frozen=True)
class Task:
    """One experiment to run at one seed as ``spec`` says, with the claims that read it; its
    figures go to ``figure_dir``."""

    exp: Experiment
    claims: tuple[Claim, ...]
    seed: int
    figure_dir: Path
    spec: RunSpec


@dataclass(frozen=True)
class Outcome:
    """What became of a task: its record and judged claims.

    ``lost`` is True when the engine lost the task before it reported (a lost connection to
    the cluster): it may never have run, its claims are errors saying so, and the command
    line ends the run with exit 1 after writing the report. A task that ran and raised, or
    whose worker died, is not lost: its claims are errors with the cause.
    """

    record: ExperimentRecord
    results: list[ClaimResult]
    lost: bool = False


def _grouped(selected: Sequence[Claim]) -> dict[str, tuple[Experiment, list[Claim]]]:
    groups: dict[str, tuple[Experiment, list[Claim]]] = {}
    for c in selected:
        groups.setdefault(c.experiment.id, (c.experiment, []))[1].append(c)
    return groups


@dataclass(frozen=True)
class _Order:
    """A task as a worker process or a Ray task receives it: the experiment and claims by id,
    with the modules that register them (registered objects do not pickle)."""

    modules: tuple[str, ...]
    experiment: str
    claims: tuple[str, ...]
    seed: int
    figure_dir: str
    spec: RunSpec

    @classmethod
    def of(cls, t: Task) -> _Order:
        modules = dict.fromkeys([t.exp.fn.__module__, *(c.read.__module__ for c in t.claims)])
        return cls(tuple(modules), t.exp.id, tuple(c.id for c in t.claims), t.seed,
                   str(t.figure_dir), t.spec)


def _perform(order: _Order) -> Outcome:
    """What a worker (a process of ``--jobs``, or a Ray task) does with an order: import the
    modules, run the experiment on the order's threads, judge its claims."""
    for m in order.modules:
        importlib.import_module(m)
    s = order.spec
    with torch_threads(s.threads):  # an experiment that changes the count leaves it here
        rec, ev = run_experiment(claims._EXPERIMENTS[order.experiment], s.scale, order.seed,
                                 s.device, Path(order.figure_dir), s.budget)
    return Outcome(rec, [judge(claims._CLAIMS[cid], ev, rec) for cid in order.claims])


def _failed(task: Task, why: str, lost: bool = False) -> Outcome:
    """The outcome of a task that could not report: every claim an error, saying ``why``."""
    s = task.spec
    setting = task.exp.setting(s.scale).scaled(s.budget)
    rec = ExperimentRecord(task.exp.id, task.exp.method, s.scale.value, task.seed, s.device,
                           float("nan"), _setting_dict(setting), error=why,
                           deviations=list(setting.deviations), threads=s.threads,
                           budget=s.budget)
    return Outcome(rec, [judge(c, None, rec) for c in task.claims], lost)


def _died(task: Task, exitcode: int | None) -> Outcome:
    if exitcode is not None and exitcode < 0:
        try:
            why = f"killed by {signal.Signals(-exitcode).name} (out of memory, or killed)"
        except ValueError:
            why = f"killed by signal {-exitcode}"
    else:
        why = f"exited with status {exitcode} before reporting"
    return _failed(task, f"worker process {why}")


def longest_first(tasks: Sequence[Task], seconds: dict[str, float] | None = None) -> list[int]:
    """Task indices, the longest expected first (stable among equals).

    The expected time is ``seconds[experiment id]`` (a previous run's), else the experiment's
    declared cost at the task's scale; a task with neither goes first, in registry order,
    since it may be long. A task's time is assumed to grow in proportion to its budget.
    """
    def expected(i: int) -> float:
        t = tasks[i]
        base = (seconds or {}).get(t.exp.id, t.exp.expected_seconds(t.spec.scale))
        return math.inf if base is None or not math.isfinite(base) else base * t.spec.budget

    return sorted(range(len(tasks)), key=lambda i: -expected(i))


# --- engines ----------------------------------------------------------------------------------

Started = Callable[[int], None]
Finish = Callable[[int, Outcome], None]


class Engine(Protocol):
    """Runs tasks and reports each one's outcome as it ends."""

    #: whether tasks run at once; then :func:`run_tasks` hands them over longest first
    concurrent: bool

    def run(self, tasks: Sequence[Task], order: Sequence[int], started: Started,
            finish: Finish) -> None:
        """Run ``tasks[i]`` for each ``i`` of ``order``: ``started(i)`` as it is handed over,
        ``finish(i, outcome)`` as it ends (in any order), every task exactly once, even when
        it fails (an error outcome); an interrupt may stop the run early."""


class Inline:
    """Here, one after another, in the given order (``--jobs 1``)."""

    concurrent = False

    def run(self, tasks: Sequence[Task], order: Sequence[int], started: Started,
            finish: Finish) -> None:
        for i in order:
            t = tasks[i]
            started(i)
            with torch_threads(t.spec.threads):
                rec, ev = run_experiment(t.exp, t.spec.scale, t.seed, t.spec.device,
                                         t.figure_dir, t.spec.budget)
            finish(i, Outcome(rec, [judge(c, ev, rec) for c in t.claims]))


def _serve(conn: Any) -> None:
    """A worker that lives for the run: performs the orders it is sent, one at a time."""
    while (order := conn.recv()) is not None:
        conn.send(_perform(order))
    conn.close()


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

    def results(self) -> Iterator[tuple[int, Outcome | None, int | None]]:
        """``(task index, outcome or None, exit code)`` for each task that ends."""
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


class Pool:
    """On up to ``jobs`` worker processes that live for the run (``--jobs N``).

    The workers are forked from :mod:`iclr25._forkserver`, which imported torch and the claim
    modules once. A worker that dies errors only its own task's claims (with the signal or
    exit status), and a new one takes the next task.
    """

    concurrent = True

    def __init__(self, jobs: int) -> None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
        self.jobs = jobs

    def run(self, tasks: Sequence[Task], order: Sequence[int], started: Started,
            finish: Finish) -> None:
        pending = list(order)
        workers = _Workers(self.jobs)
        try:
            while pending or workers.busy:
                while pending and workers.can_take():
                    i = pending.pop(0)
                    workers.send(i, _Order.of(tasks[i]))
                    started(i)
                for i, got, exitcode in workers.results():
                    finish(i, got if got is not None else _died(tasks[i], exitcode))
        finally:
            workers.close()


def _ray_task(order: _Order) -> tuple[Outcome, dict[str, bytes]]:
    """What a Ray worker runs: the order (:func:`_perform`), and the figures' bytes, since
    the worker's disk is not the driver's."""
    with tempfile.TemporaryDirectory() as figs:
        out = _perform(dataclasses.replace(order, figure_dir=figs))
        pngs = {Path(f).name: Path(f).read_bytes() for f in out.record.figures}
    return out, pngs


def _landed(out: Outcome, pngs: dict[str, bytes], figure_dir: Path) -> Outcome:
    """A Ray task's outcome with its figures written where a local run writes them."""
    figure_dir = Path(figure_dir)
    figure_dir.mkdir(parents=True, exist_ok=True)
    out.record.figures = []
    for name, data in pngs.items():
        (figure_dir / name).write_bytes(data)
        out.record.figures.append(str(figure_dir / name))
    return out


class Ray:
    """One Ray task per experiment task, on the ``ray`` module of an open
    :func:`iclr25._cluster.ray_session` (``--cluster``).

    Each asks for its spec's threads as CPUs (and one GPU on a CUDA device); how many run at
    once is the cluster's business. A task whose worker or node dies errors only its own
    claims, with Ray's cause; a lost connection to the cluster finishes every task that had
    not reported as a ``lost`` outcome with :data:`LOST` (the finished ones are kept).
    """

    concurrent = True

    def __init__(self, ray: Any) -> None:
        self.ray = ray

    def _next(self, refs: dict[Any, int]) -> tuple[Any, Any]:
        """The next task to end: its ref, and its value or the exception its task raised."""
        from ray import exceptions as rx

        (ref,), _ = self.ray.wait(list(refs), num_returns=1)
        try:
            return ref, self.ray.get(ref)
        except (rx.WorkerCrashedError, rx.NodeDiedError, rx.OutOfMemoryError,
                rx.TaskCancelledError, rx.RayTaskError, rx.ObjectLostError) as exc:
            return ref, exc

    def run(self, tasks: Sequence[Task], order: Sequence[int], started: Started,
            finish: Finish) -> None:
        from ray import exceptions as rx

        remote = self.ray.remote(_ray_task)
        refs: dict[Any, int] = {}
        for i in order:
            s = tasks[i].spec
            refs[remote.options(num_cpus=s.threads, max_retries=0,
                                num_gpus=1 if s.device.startswith("cuda") else 0,
                                ).remote(_Order.of(tasks[i]))] = i
            started(i)
        lost = None
        while refs:
            try:
                ref, got = self._next(refs)
            except (ConnectionError, rx.RaySystemError) as exc:
                lost = exc
                break
            i = refs.pop(ref)
            if isinstance(got, Exception):
                finish(i, _failed(tasks[i], f"Ray task failed: {type(got).__name__}: "
                                            f"{str(got).strip().splitlines()[0][:300]}"))
            else:
                finish(i, _landed(*got, tasks[i].figure_dir))
        for i in refs.values():
            finish(i, _failed(tasks[i], f"{LOST} ({type(lost).__name__})", lost=True))


def engine_for(jobs: int = 1, cluster: Any = None) -> Engine:
    """The engine of a run: :class:`Ray` on ``cluster`` (the ``ray`` module of an open
    :func:`iclr25._cluster.ray_session`), else :class:`Inline` for one job and :class:`Pool`
    for more.

    Raises:
        ValueError: ``jobs`` is not an integer >= 1.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if cluster is not None:
        return Ray(cluster)
    return Inline() if jobs == 1 else Pool(jobs)


# --- running ----------------------------------------------------------------------------------

def run_tasks(tasks: Sequence[Task], engine: Engine,
              on_experiment: Callable[[Experiment], None] | None = None, *,
              on_done: Callable[[Outcome], None] | None = None,
              seconds: dict[str, float] | None = None) -> list[Outcome]:
    """Run each task on ``engine`` and judge its claims; the outcomes in the tasks' order.

    A concurrent engine receives the longest expected first (:func:`longest_first`, from
    ``seconds`` of a previous run or the declared costs), an inline one the tasks' order.
    ``on_experiment`` is called with each task's experiment as it starts and ``on_done``
    with each outcome as it ends.
    """
    done: dict[int, Outcome] = {}

    def started(i: int) -> None:
        if on_experiment is not None:
            on_experiment(tasks[i].exp)

    def finish(i: int, outcome: Outcome) -> None:
        done[i] = outcome
        if on_done is not None:
            on_done(outcome)

    order = longest_first(tasks, seconds) if engine.concurrent else range(len(tasks))
    engine.run(tasks, list(order), started, finish)
    return [done[i] for i in range(len(tasks))]


def run(selected: Sequence[Claim], scale: Scale, seed: int, figure_dir: Path,
        device: str | torch.device = "cpu",
        on_experiment: Callable[[Experiment], None] | None = None,
        *, jobs: int = 1, threads: int | None = None, budget: float = 1.0,
        on_done: Callable[[Outcome], None] | None = None,
        seconds: dict[str, float] | None = None, cluster: Any = None,
        ) -> tuple[list[ExperimentRecord], list[ClaimResult]]:
    """Run each experiment the claims need once, at ``budget``, then judge every claim.

    ``jobs`` and ``cluster`` pick the engine (:func:`engine_for`); each experiment runs on
    ``threads`` torch threads (default: the cores shared out among ``jobs``). See
    :func:`run_tasks` for ``seconds``, ``on_experiment`` and ``on_done``. Returns the records
    in the experiments' first-claim order and the results in the order of ``selected``.
    """
    engine = engine_for(jobs, cluster)
    spec = RunSpec(scale, str(torch.device(device)),
                   default_threads(jobs) if threads is None else threads, budget)
    tasks = [Task(exp, tuple(cs), seed, Path(figure_dir), spec)
             for exp, cs in _grouped(selected).values()]
    done = run_tasks(tasks, engine, on_experiment, on_done=on_done, seconds=seconds)
    by_id = {r.claim_id: r for o in done for r in o.results}
    return [o.record for o in done], [by_id[c.id] for c in selected]
