"""Command line: ``iclr25 list | reproduce | ladder | report``, and each method's own verbs.

A method's verbs live in its ``cli`` module (a typer ``app``) and are mounted as
``iclr25 <method> ...``. They are found through the static table ``METHOD_COMMANDS`` (a test
checks it against the packages), so that ``iclr25 --help`` imports no method, nor torch, and
``iclr25 <method> ...`` imports that method only. Bad arguments print one line on stderr and
exit with status 2 before any work starts.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import inspect
import re
import types
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from iclr25._cli import check_seed, fail
from iclr25._scale import Scale

# method -> its cli app's help; tests/core/test_cli.py checks this against the packages
METHOD_COMMANDS = {
    "comm": "CoMM: multimodal contrastive embeddings (ICLR 2025).",
    "cox": "COX: out-of-modal generalisation from few or no pairs (ICLR 2025).",
    "dbtsw": "Db-TSW: distance-based tree-sliced Wasserstein distance (ICLR 2025).",
    "dcpt": "DCPT: degradation-classification pre-training for image restorers (ICLR 2025).",
    "gsd": "GSD: diverse policies that generalise beyond the demos (ICLR 2025).",
    "kmeans": "Consistent online k-means: few centre changes on a stream (ICLR 2025).",
    "locodl": "LoCoDL: federated logistic regression with local steps and a compressed uplink "
              "(ICLR 2025).",
    "lowlight": "Zero-reference low-light denoising and enhancement (ICLR 2025).",
    "lsdt": "LSDT: one decision transformer for long and short dependencies (ICLR 2025).",
    "matern": "Matérn kernels: watertight surfaces from oriented points (ICLR 2025).",
    "mother": "MoTHer: recover model family trees from weights (ICLR 2025).",
    "oft": "OFT: min-cost flow by OFT-Sinkhorn matrix iterations (ICLR 2025).",
    "schull": "SCHull: sparse, connected, rigid graphs of molecules (ICLR 2025).",
    "toss": "ToSS: mean and input-dependent covariance of a vector target (ICLR 2025).",
    "urlost": "URLOST: tokens and representations for data with no known topology "
              "(ICLR 2025).",
    "v3": "V3: content codebook and style vectors of sequences (ICLR 2025).",
}


class _Deferred(types.ModuleType):
    """A method package whose ``__init__`` (which imports torch) has not run yet: it runs at
    the first attribute the package lacks. Its submodules import meanwhile, so help, which
    needs only the ``cli`` module (light at the top), imports no torch."""

    def __getattr__(self, name: str) -> Any:
        self.__class__ = types.ModuleType  # once: the package is an ordinary one from now
        self.__spec__.loader.exec_module(self)
        return getattr(self, name)


def _method_app(name: str, args: list[str]) -> Any:
    """The typer app of ``iclr25.<name>.cli``; for a help request (``--help``, or no
    arguments) the package's ``__init__`` is deferred (:class:`_Deferred`)."""
    import sys

    package = f"iclr25.{name}"
    if (not args or "--help" in args) and package not in sys.modules:
        import iclr25

        module = importlib.util.module_from_spec(importlib.util.find_spec(package))
        module.__class__ = _Deferred
        sys.modules[package] = module
        setattr(iclr25, name, module)  # as the import system binds a subpackage
    return importlib.import_module(f"{package}.cli").app


#: a paragraph whose lines must stay as written: click's keep-as-is mark, indented (code) or
#: list lines
_AS_WRITTEN = re.compile(r"^\x08|\n(\s|[-*] |\d+\. )")
#: a bracketed word that rich reads as a markup tag and drops (``[default: 1]``); the
#: pattern of rich.markup's tags, not preceded by an escape
_TAG = re.compile(r"(?<!\\)\[(?=[a-z#/@][^[]*?\])")
#: a Sphinx cross-reference role (``:meth:`~pkg.Class.fit```, ``:func:`title <target>```),
#: which help prints as its text
_ROLE = re.compile(r":(?:py:)?[a-z]+:`([~!]?)([^`<]*?)\s*(?:<([^`>]*)>)?`")


def _role_text(m: re.Match) -> str:
    """A role as Sphinx shows it: its title, else its target (``~``: the last name)."""
    mark, title, target = m.groups()
    if target is not None and title:
        return title
    name = target if target is not None else title
    return name.rsplit(".", 1)[-1] if mark == "~" else name


def _paragraphs(text: str | None) -> str | None:
    """A docstring as help prints it: each paragraph's lines joined, blank lines between
    paragraphs, Sphinx roles as their text, tag-like brackets escaped. Typer's rich help kept
    the source's line breaks, so a wrapped help broke mid-sentence where the docstring did."""
    if not text:
        return text
    paragraphs = _ROLE.sub(_role_text, inspect.cleandoc(text)).split("\n\n")
    joined = "\n\n".join(p if _AS_WRITTEN.search(p) else " ".join(p.split())
                          for p in paragraphs)
    return _TAG.sub(r"\\[", joined)


def _readable(command: Any) -> Any:
    """``command`` and its sub-commands with every help text as :func:`_paragraphs` makes it
    (done once, where the root and each method's app are built: every verb alike)."""
    command.help = _paragraphs(command.help)
    command.epilog = _paragraphs(command.epilog)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = _paragraphs(param.help)
    for sub in getattr(command, "commands", {}).values():
        _readable(sub)
    return command


class _MethodCommand(TyperCommand):
    """A method's sub-command as listed in help; its module is imported when it is used."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name, help=METHOD_COMMANDS[name])

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        # mounted as add_typer would, so a one-verb app stays a group (`kmeans stream`)
        holder = typer.Typer()
        holder.add_typer(_method_app(self.name, args), name=self.name)
        real = _readable(typer.main.get_command(holder).commands[self.name])
        return real.make_context(info_name, args, parent=parent, **extra)


#: click's UsageError as typer raises it (newer typers vendor click as ``typer._click``, older
#: ones use click itself): found from typer's public ``BadParameter``
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _usage_line(exc: Any) -> None:
    """Click's and typer's own usage errors (a missing option or argument, an unknown option
    or command, a value of the wrong type) as every other refusal of the command line: one
    line on stderr naming the verb's help, exit 2; not typer's framed box. A group called
    with no verb still shows its help."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        raise exc
    message = " ".join(exc.format_message().split()).rstrip(".")
    where = f"; see `{exc.ctx.command_path} --help`" if exc.ctx is not None else ""
    fail(f"{message}{where}")


class _Root(TyperGroup):
    """The top-level group: its own commands, then the methods' from the static table."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _readable(self)

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *METHOD_COMMANDS]

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except _UsageError as exc:
            _usage_line(exc)

    def invoke(self, ctx: Any) -> Any:
        # the last line of defence: a library's refusal (ValueError names the argument) is
        # bad usage, printed as one line with exit 2, never a traceback
        try:
            return super().invoke(ctx)
        except _UsageError as exc:  # a verb's parsing (missing option, no such command)
            _usage_line(exc)
        except ValueError as exc:
            from iclr25._cli import fail

            fail(exc)
        except PermissionError as exc:  # a file read deep inside a verb (issue 56)
            from iclr25._cli import fail

            fail(f"{exc.filename or 'a file'}: permission denied")

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in METHOD_COMMANDS:
            return _MethodCommand(cmd_name)
        from iclr25._catalog import PAPERS

        if cmd_name in {row[0] for row in PAPERS}:  # listed by `iclr25 list`, API only
            fail(f"{cmd_name} has no command line: use its Python API (`from iclr25 import "
                 f"{cmd_name}`; its user guide shows how)")
        return super().get_command(ctx, cmd_name)


app = typer.Typer(help="Methods of 19 ICLR 2025 papers, and offline reproductions of their claims.",
                  no_args_is_help=True, add_completion=False, cls=_Root)


@app.command("list")
def list_claims() -> None:
    """List the methods and their claims, one line each."""
    from iclr25._catalog import listing  # the registry's copy: no method, no torch imported

    for line in listing():
        typer.echo(line)


def _device(name: str) -> str:
    import torch

    if name not in ("cpu", "cuda"):
        fail(f"--device must be 'cpu' or 'cuda', got {name!r}")
    if name == "cuda" and not torch.cuda.is_available():
        fail("--device cuda was asked for but torch sees no CUDA device")
    return name


def _budget(text: str) -> float:
    """``--budget``'s value: a positive number, else exit 2 naming the option."""
    try:
        value = float(text)
    except ValueError:
        fail(f"--budget must be a positive number, got {text!r}")
    if not (value > 0 and value != float("inf")):
        fail(f"--budget must be a positive number, got {text!r}")
    return value


def _draws(text: str | None, scale: Scale) -> int:
    """``--draws``' value: a whole number from 1 to ``MAX_DRAWS`` (default 3 at full scale, 1
    at quick), else exit 2 naming the option."""
    from iclr25._scale import MAX_DRAWS

    if text is None:
        return scale.default_draws
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_DRAWS:
        fail(f"--draws must be a whole number from 1 to {MAX_DRAWS}, got {text!r}")
    return value


_DRAWS_HELP = ("Independent draws of each experiment (seeds, testbeds, data): a claim is "
               "judged on their mean and its standard error [default: 3 at full scale, 1 at "
               "quick].")


def _trends(path: Path | None) -> dict[str, str] | None:
    """``--ladder``'s trends by claim id (None without it), else exit 2 naming the option."""
    if path is None:
        return None
    from iclr25.ladder import read_ladder

    if not path.is_file():
        fail(f"--ladder {path} is not a file")
    try:
        return read_ladder(path)
    except ValueError as exc:
        fail(f"--ladder: {exc}")


def _cluster(text: str | None, jobs: int | None) -> tuple[str | None, int]:
    """``--cluster`` checked against ``--jobs``: (address or None for local Ray, jobs)."""
    if text is None:
        return None, 1 if jobs is None else jobs
    from iclr25._cluster import parse_cluster

    if jobs is not None:
        fail("--cluster and --jobs go apart: on a cluster Ray runs as many experiments at once "
             "as its CPUs allow (each asks for --threads)")
    try:
        return parse_cluster(text), 1
    except ValueError as exc:
        fail(exc)


@contextlib.contextmanager
def _session(cluster: str | None, address: str | None) -> Any:
    """The Ray module for the block when ``--cluster`` was given (exit 2 if unreachable)."""
    if cluster is None:
        yield None
        return
    from iclr25._cluster import ray_session

    with contextlib.ExitStack() as stack:
        try:
            ray = stack.enter_context(ray_session(address))
        except (ImportError, ValueError) as exc:
            fail(exc)
        yield ray


def _lost(lost: bool) -> None:
    """End the run with one line (exit 1) when the engine lost tasks (a lost cluster)."""
    from iclr25.runner import LOST

    if lost:
        typer.echo(f"error: {LOST}; the finished experiments are in the report", err=True)
        raise typer.Exit(1)


_CLUSTER_HELP = ("Run each experiment as a task on Ray: 'ray' starts a local instance, "
                 "'ray://HOST:PORT' joins a cluster (pip install 'iclr25[cluster]').")


def _checked_run(names: list[str] | None, out: Path, seed: int, device: str, jobs: int,
                 threads: int | None) -> tuple[list, str, int]:
    """``reproduce``'s arguments checked (exit 2 on the first bad one): the selected claims,
    the device and the threads per experiment."""
    import os

    from iclr25 import _forkserver

    if not 0 <= seed < 2**32:
        fail(f"--seed must lie in [0, 2**32), got {seed}")
    cores = os.cpu_count() or 1
    if not 1 <= jobs <= cores:
        fail(f"--jobs must be between 1 and the {cores} cores of this machine, got {jobs}")
    if threads is not None and threads < 1:
        fail(f"--threads must be >= 1, got {threads}")
    if jobs > 1:
        _forkserver.start()  # its imports run beside this process's, before torch's
    from iclr25 import claims
    from iclr25._checks import check_writable_dir
    from iclr25.runner import default_threads

    threads = default_threads(jobs) if threads is None else threads
    device = _device(device)
    registry = claims.discover()
    if not registry:
        fail("no claims are registered: no method package provides a claim module")
    try:
        selected = claims.select(names or [], registry)
    except KeyError as exc:
        fail(f"unknown claim or method name(s): {', '.join(exc.args[0])}; "
             f"see `iclr25 list`")
    try:
        check_writable_dir(out, "--out")
    except ValueError as exc:
        fail(str(exc))
    return selected, device, threads


def _progress_line(r: Any, scale: Scale, at: str) -> str:
    """A judged claim as ``iclr25 reproduce`` prints it."""
    from iclr25._format import num

    verdict = f"smoke:{r.status}" if scale == Scale.quick else r.status
    return (f"{verdict:>13}  {r.claim_id}  {num(r.measured)} ({r.direction} "
            f"{num(r.threshold, 6)} {r.unit}){at}").rstrip()


def _with_progress(total: int, scale: Scale, work: Any, draws: int = 1,
                   ) -> tuple[Any, float, bool]:
    """``work(started, finished)`` under a progress bar on a terminal, a line per judged
    claim; its value, the wall time and whether the engine lost any task."""
    import time

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    start = time.perf_counter()
    lost = []
    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                  console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("experiments", total=total)
        names_running: list[str] = []

        def started(exp: Any) -> None:
            names_running.append(exp.id)
            progress.update(task, description=", ".join(names_running))

        def finished(outcome: Any) -> None:
            rec = outcome.record
            lost.append(outcome.lost)
            names_running.remove(rec.id)
            progress.update(task, advance=1, description=", ".join(names_running))
            at = f" (budget x{rec.budget:g})" if rec.budget != 1 else ""
            at += f" (draw {rec.draw}, seed {rec.seed})" if rec.draw or draws > 1 else ""
            for r in outcome.results:
                typer.echo(_progress_line(r, scale, at))

        value = work(started, finished)
    return value, time.perf_counter() - start, any(lost)


def _summary(results: list, scale: Scale, draws: int, path: Path) -> None:
    """The run's end: each claim over its draws (when there were several), the count line and
    where the report is."""
    from iclr25.verdicts import count_line

    if draws > 1:
        for r in results:
            typer.echo(_progress_line(r, scale, f" (mean of {draws} draws)"))
    typer.echo(count_line([r.status for r in results])
               + (" (quick scale: a smoke test, not evidence)" if scale == Scale.quick else ""))
    typer.echo(f"Report: {path}")


@app.command()
def reproduce(
    names: list[str] = typer.Argument(None, help="Claim ids or method names (default: all)."),
    scale: Scale = typer.Option(Scale.quick, "--scale",
                                help="quick (seconds; a smoke test of each pipeline) or full "
                                     "(minutes; the evidence)."),
    out: Path = typer.Option(Path("reproduction"), "--out", help="Report directory."),
    seed: int = typer.Option(0, "--seed", callback=check_seed,
                             help="Seed of every experiment (>= 0)."),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    jobs: int = typer.Option(None, "--jobs", help="Experiments run at once, each in its own "
                                                  "process (1 .. number of cores) [default: 1]."),
    threads: int = typer.Option(None, "--threads", help="Torch threads per experiment "
                                                        "[default: cores // jobs]."),
    budget: str = typer.Option("1", "--budget",
                               help="Multiply every experiment's training budget (steps, "
                                    "epochs, ...) by this, every arm and control alike (> 0)."),
    draws: str = typer.Option(None, "--draws", help=_DRAWS_HELP),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 unless every claim holds."),
    cluster: str = typer.Option(None, "--cluster", help=_CLUSTER_HELP),
    ladder_file: Path = typer.Option(None, "--ladder",
                                     help="A ladder.json from `iclr25 ladder`: each claim's "
                                          "trend joins its why in the report."),
) -> None:
    """Run the claims and write REPORT.md, results.json and figures to --out.

    A run is reproducible given (seed, device, threads per experiment, budget, draws); --jobs
    only changes how many experiments run at once.
    """
    from iclr25 import claims, runner
    from iclr25.report import environment, previous_seconds, write_report

    k = _budget(budget)
    n_draws = _draws(draws, scale)
    trends = _trends(ladder_file)
    address, jobs = _cluster(cluster, jobs)
    threads = 1 if cluster is not None and threads is None else threads
    selected, device, threads = _checked_run(names, out, seed, device, jobs, threads)
    seconds = previous_seconds(out / "results.json", scale.value)  # longest first
    with _session(cluster, address) as ray:
        (records, results), wall, lost = _with_progress(
            len({c.experiment.id for c in selected}) * n_draws, scale,
            lambda started, finished: runner.run(
                selected, scale, seed, out / "figures", device=device, on_experiment=started,
                on_done=finished, jobs=jobs, threads=threads, budget=k, draws=n_draws,
                seconds=seconds, cluster=ray), n_draws)

    papers = claims.papers()
    env = environment(seed, scale.value, device, jobs=jobs, threads=threads, budget=k,
                      draws=n_draws, cluster=cluster, wall_seconds=wall,
                      experiment_seconds=sum(r.seconds for r in records
                                             if r.seconds == r.seconds))
    path = write_report(records, results, out, env,
                        {m: p for m, p in papers.items() if any(r.method == m for r in results)},
                        trends)
    _summary(results, scale, n_draws, path)
    _lost(lost)
    if strict and not all(r.holds for r in results):
        raise typer.Exit(1)


@app.command()
def ladder(
    names: list[str] = typer.Argument(None, help="Claim ids or method names (default: all)."),
    budgets: str = typer.Option("0.5,1,2,4", "--budgets",
                                help="Training budgets, comma-separated multiples of each "
                                     "Setting's (on a GPU: 1,4,16,64)."),
    scale: Scale = typer.Option(Scale.full, "--scale", help="quick or full."),
    out: Path = typer.Option(Path("ladder"), "--out", help="Ladder directory."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed of every rung (>= 0)."),
    draws: str = typer.Option(None, "--draws", help=_DRAWS_HELP + " Each rung's standard "
                                                                   "error is the spread a "
                                                                   "trend must exceed."),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    jobs: int = typer.Option(None, "--jobs", help="Runs at once, each in its own process "
                                                  "[default: 1]."),
    threads: int = typer.Option(None, "--threads", help="Torch threads per run "
                                                        "[default: cores // jobs]."),
    cluster: str = typer.Option(None, "--cluster", help=_CLUSTER_HELP),
) -> None:
    """Run each experiment at every budget and write LADDER.md, ladder.json and a figure per
    claim: would more compute close the gap?"""
    from iclr25.ladder import ladder_tasks, parse_budgets, run_ladder, write_ladder
    from iclr25.report import environment
    from iclr25.runner import RunSpec

    try:
        ks = parse_budgets(budgets)
    except ValueError as exc:
        fail(exc)
    n_draws = _draws(draws, scale)
    address, jobs = _cluster(cluster, jobs)
    threads = 1 if cluster is not None and threads is None else threads
    selected, device, threads = _checked_run(names, out, seed, device, jobs, threads)
    n_tasks = len(ladder_tasks(selected, ks, seed, out,
                               RunSpec(scale, device, threads, draws=n_draws)))
    with _session(cluster, address) as ray:
        result, wall, lost = _with_progress(
            n_tasks, scale,
            lambda started, finished: run_ladder(
                selected, ks, scale, seed, out, device, jobs=jobs, threads=threads,
                draws=n_draws, on_experiment=started, on_done=finished,
                cluster=ray), n_draws)
    env = environment(seed, scale.value, device, jobs=jobs, threads=threads, cluster=cluster,
                      wall_seconds=wall)
    path = write_ladder(result, out, env)
    for cid, lc in result["claims"].items():
        typer.echo(f"{cid}: {lc['trend']}")
    typer.echo(f"Ladder: {path}")
    _lost(lost)


@app.command()
def report(
    results: Path = typer.Argument(..., help="A results.json written by `iclr25 reproduce`."),
    out: Path = typer.Option(None, "--out", help="Directory (default: the file's own)."),
    ladder_file: Path = typer.Option(None, "--ladder",
                                     help="A ladder.json from `iclr25 ladder`: each claim's "
                                          "trend joins its why."),
) -> None:
    """Re-render REPORT.md (and the summary chart) from a results.json."""
    from iclr25._checks import check_writable_dir
    from iclr25.report import read_results, write_report

    if not results.is_file():
        fail(f"RESULTS {results} is not a file")
    trends = _trends(ladder_file)
    try:
        env, records, claim_results, papers = read_results(results)
    except (ValueError, KeyError, TypeError) as exc:
        fail(f"RESULTS: {exc}")
    out = out if out is not None else results.parent
    try:
        check_writable_dir(out, "--out")
    except ValueError as exc:
        fail(str(exc))
    # figures are stored relative to the results file; make them absolute before moving
    for rec in records:
        rec.figures = [str((results.parent / f).resolve()) for f in rec.figures]
    typer.echo(f"Report: {write_report(records, claim_results, out, env, papers, trends)}")


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """A warning at the command line: ``warning: message`` on stderr, without the file path
    and source line Python shows by default (they named site-packages, meaningless to a user
    of the command). Not :func:`~iclr25._cli.api_warnings`' policy (``-W error`` printed): the
    workers of ``reproduce --jobs N`` inherit ``-W error`` and raise, so an inline run that
    printed would give other verdicts than the same run on workers."""
    import sys

    print(f"warning: {message}", file=file or sys.stderr)


def main() -> None:
    import warnings

    warnings.showwarning = _one_line_warning
    try:
        app()
    finally:
        # the exit's garbage collections then skip torch's and the methods' objects (1-2 s)
        gc.freeze()
