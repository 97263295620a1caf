"""Command line: ``iclr25 list | reproduce | report``, and each method's own verbs.

A method package that has a ``cli`` module with a typer ``app`` gets it mounted as
``iclr25 <method> ...``; this module knows no method by name. Bad arguments print one line
on stderr and exit with status 2 before any work starts.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from iclr25 import claims
from iclr25._checks import check_writable_dir
from iclr25._cli import fail
from iclr25.claims import Scale

app = typer.Typer(help="Methods of 19 ICLR 2025 papers, and offline reproductions of their claims.",
                  no_args_is_help=True, add_completion=False)


@app.command("list")
def list_claims() -> None:
    """List the methods and their claims, one line each."""
    registry = claims.discover()
    for name, p in claims.papers().items():
        typer.echo(f"{p.number:>2}. {name}: {p.title}")
        for c in registry.values():
            if c.method == name:
                typer.echo(f"      {c.id}  [{c.metric} {c.direction} {c.threshold:g} {c.unit}]")
    for name, why in claims.unavailable_methods().items():
        typer.echo(f"    {name}: not importable ({why})")


def _device(name: str) -> str:
    import torch

    if name not in ("cpu", "cuda"):
        fail(f"--device must be 'cpu' or 'cuda', got {name!r}")
    if name == "cuda" and not torch.cuda.is_available():
        fail("--device cuda was asked for but torch sees no CUDA device")
    return name


@app.command()
def reproduce(
    names: list[str] = typer.Argument(None, help="Claim ids or method names (default: all)."),
    scale: Scale = typer.Option(Scale.quick, "--scale",
                                help="quick (seconds; a smoke test of each pipeline) or full "
                                     "(minutes; the evidence)."),
    out: Path = typer.Option(Path("reproduction"), "--out", help="Report directory."),
    seed: int = typer.Option(0, "--seed", help="Seed of every experiment (>= 0)."),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    jobs: int = typer.Option(1, "--jobs", help="Experiments run at once, each in its own "
                                               "process (1 .. number of cores)."),
    threads: int = typer.Option(None, "--threads", help="Torch threads per experiment "
                                                        "[default: cores // jobs]."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 unless every claim holds."),
) -> None:
    """Run the claims and write REPORT.md, results.json and figures to --out.

    A run is reproducible given (seed, device, threads per experiment); --jobs only changes
    how many experiments run at once.
    """
    import os
    import time

    from iclr25.report import environment, write_report

    if seed < 0:
        fail(f"--seed must be >= 0, got {seed}")
    cores = os.cpu_count() or 1
    if not 1 <= jobs <= cores:
        fail(f"--jobs must be between 1 and the {cores} cores of this machine, got {jobs}")
    if threads is not None and threads < 1:
        fail(f"--threads must be >= 1, got {threads}")
    threads = claims.default_threads(jobs) if threads is None else threads
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

    console = Console(stderr=True)
    n_experiments = len({c.experiment.id for c in selected})
    start = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                  console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("experiments", total=n_experiments)
        names_running: list[str] = []

        def started(exp: claims.Experiment) -> None:
            names_running.append(exp.id)
            progress.update(task, description=", ".join(names_running))

        def finished(rec: claims.ExperimentRecord, results: list[claims.ClaimResult]) -> None:
            names_running.remove(rec.id)
            progress.update(task, advance=1, description=", ".join(names_running))
            for r in results:
                measured = "-" if r.measured is None else f"{r.measured:.4g}"
                verdict = f"smoke:{r.status}" if scale == Scale.quick else r.status
                typer.echo(f"{verdict:>12}  {r.claim_id}  {measured} ({r.direction} "
                           f"{r.threshold:g} {r.unit})".rstrip())

        records, results = claims.run(selected, scale, seed, out / "figures", device=device,
                                      on_experiment=started, on_done=finished, jobs=jobs,
                                      threads=threads)
    wall = time.perf_counter() - start

    papers = claims.papers()
    env = environment(seed, scale.value, device, jobs=jobs, threads=threads,
                      wall_seconds=wall,
                      experiment_seconds=sum(r.seconds for r in records
                                             if r.seconds == r.seconds))
    path = write_report(records, results, out, env,
                        {m: p for m, p in papers.items() if any(r.method == m for r in results)})
    count = {k: sum(r.status == k for r in results)
             for k in ("holds", "fails", "inconclusive", "error")}
    typer.echo(f"{count['holds']} hold, {count['fails']} fail, {count['inconclusive']} "
               f"inconclusive, {count['error']} errored"
               + (" (quick scale: a smoke test, not evidence)" if scale == Scale.quick else ""))
    typer.echo(f"Report: {path}")
    if strict and any(r.status != "holds" for r in results):
        raise typer.Exit(1)


@app.command()
def report(
    results: Path = typer.Argument(..., help="A results.json written by `iclr25 reproduce`."),
    out: Path = typer.Option(None, "--out", help="Directory (default: the file's own)."),
) -> None:
    """Re-render REPORT.md (and the summary chart) from a results.json."""
    from iclr25.report import read_results, write_report

    if not results.is_file():
        fail(f"RESULTS {results} is not a file")
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
    typer.echo(f"Report: {write_report(records, claim_results, out, env, papers)}")


def _mount_method_commands() -> None:
    for name in claims.method_packages():
        try:
            module = importlib.import_module(f"iclr25.{name}.cli")
        except ModuleNotFoundError as exc:
            if exc.name == f"iclr25.{name}.cli":
                continue
            raise
        sub = getattr(module, "app", None)
        if isinstance(sub, typer.Typer):
            app.add_typer(sub, name=name)


_mount_method_commands()


def main() -> None:
    app()
