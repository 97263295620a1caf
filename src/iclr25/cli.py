"""Command line: ``iclr25 list``, ``iclr25 reproduce [NAMES]``, and each method's own verbs.

A method package that has a ``cli`` module with a typer ``app`` gets it mounted as
``iclr25 <method> ...``; this module knows no method by name.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from iclr25 import claims
from iclr25.claims import Scale

app = typer.Typer(help="Methods of 19 ICLR 2025 papers, and offline reproductions of their claims.",
                  no_args_is_help=True, add_completion=False)


@app.command("list")
def list_claims() -> None:
    """List the registered claims, one line each."""
    registry = claims.discover()
    if not registry:
        typer.echo("No claims are registered yet.")
        return
    for c in registry.values():
        typer.echo(f"{c.id}  [{c.metric} {c.direction} {c.threshold:g}]  {c.sentence}")


@app.command()
def reproduce(
    names: list[str] = typer.Argument(None, help="Claim ids or method names (default: all)."),
    scale: Scale = typer.Option(Scale.quick, "--scale", help="quick (seconds) or full (minutes)."),
    out: Path = typer.Option(Path("reproduction"), "--out", help="Report directory."),
    seed: int = typer.Option(0, "--seed", help="Seed passed to every claim."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 if any claim fails or errors."),
) -> None:
    """Run the claims and write REPORT.md, results.json and figures to --out."""
    from iclr25.report import environment, write_report

    registry = claims.discover()
    if not registry:
        typer.echo("No claims are registered yet: no method package provides a claim module, "
                   "so there is nothing to reproduce.")
        return
    try:
        selected = claims.select(names or [], registry)
    except KeyError as exc:
        typer.echo(f"Unknown claim name(s): {', '.join(exc.args[0])}.", err=True)
        typer.echo("Known claims: " + ", ".join(registry), err=True)
        raise typer.Exit(2) from None

    console = Console(stderr=True)
    results = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
                  "{task.total}"), TimeElapsedColumn(), console=console,
                  disable=not console.is_terminal) as progress:
        task = progress.add_task("claims", total=len(selected))
        for c in selected:
            progress.update(task, description=c.id)
            results.append(claims.run(c, scale, seed, out / "figures"))
            progress.advance(task)

    path = write_report(results, out, environment(seed, scale.value))
    for r in results:
        typer.echo(f"{r.status:>5}  {r.claim_id}  {r.metric} = "
                   f"{'-' if r.measured is None else f'{r.measured:.4g}'} "
                   f"({r.direction} {r.threshold:g})  {r.seconds:.1f}s")
    typer.echo(f"Report: {path}")
    if strict and any(r.status != "holds" for r in results):
        raise typer.Exit(1)


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
