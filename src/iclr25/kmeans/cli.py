"""``iclr25 kmeans stream FILE.{csv,npy}``: cluster a file's rows as a stream."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import typer

from iclr25._cli import check_seed, output_path
from iclr25._io import column_names, read_matrix

app = typer.Typer(help="Consistent online k-means: few centre changes on a stream (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


@app.command()
def stream(
    file: Path = typer.Argument(..., help="Points, one row each: .csv (numbers) or .npy."),
    k: int = typer.Option(10, "--k", help="Number of centres."),
    eps: float = typer.Option(0.2, "--eps", help="Slack ε before re-solving (> 0)."),
    z: float = typer.Option(2.0, "--z", help="Distance power: 2 k-means, 1 k-median."),
    shuffle: int = typer.Option(None, "--shuffle", help="Stream the rows in an order "
                                "shuffled with this seed (default: file order)."),
    seed: int = typer.Option(0, "--seed", callback=check_seed,
                             help="Seed of the offline solver."),
    out: Path = typer.Option(None, "--out", help="Write the final centres (.csv: slot, then "
                             "FILE's column names, x0.. for an array or a headerless table)."),
    log: Path = typer.Option(None, "--log", help="Write the change log t,slot,kind (.csv)."),
    compare: bool = typer.Option(False, "--compare", help="Also re-run KMeans at every "
                                 "arrival and report its changes and cost (slow: n fits)."),
) -> None:
    """Stream FILE's rows through ConsistentKMeans; print changes (beside k ln n),
    reclusterings and cost.

    Small real input: sklearn's 1,797 digits (64 columns) with --k 10 take seconds."""
    from iclr25.kmeans.consistent import ConsistentKMeans

    try:
        output_path(out, suffixes=(".csv",))
        output_path(log, "--log", suffixes=(".csv",))
        if shuffle is not None and shuffle < 0:
            raise ValueError(f"--shuffle must be >= 0, got {shuffle}")
        model = ConsistentKMeans(k, eps=eps, z=z, seed=seed)
        model._check_params()
        X = read_matrix(file, "FILE", suffixes=(".csv", ".npy"))
    except (ValueError, TypeError) as exc:
        typer.echo(f"error: {str(exc).replace('n_clusters', '--k')}", err=True)
        raise typer.Exit(2) from None
    if len(X) < k:  # every point becomes a centre: say so rather than print fewer centres
        typer.echo(f"warning: FILE has {len(X)} rows, fewer than --k {k}: every point is a "
                   f"centre", err=True)
    if shuffle is not None:
        X = X[np.random.default_rng(shuffle).permutation(len(X))]
    model.fit(X)
    typer.echo(f"points: {model.n_samples_seen_}  centres: {len(model.cluster_centers_)}")
    n = model.n_samples_seen_
    typer.echo(f"changes: {model.n_center_changes_} (k ln n = {k} x ln {n} = "
               f"{k * np.log(max(n, 1)):.1f}; the paper bounds changes by O(k polylog n))  "
               f"reclusterings: {model.n_reclusterings_}  cost: {model.cost_:.6g}")
    if compare:
        from sklearn.cluster import KMeans

        from iclr25.kmeans.testbed import rerun_kmeans_changes

        changes = rerun_kmeans_changes(X, k, seed=seed)
        inertia = KMeans(k, n_init=5, random_state=seed).fit(X).inertia_
        typer.echo(f"KMeans re-run each step: changes: {int(changes[-1])}  cost: "
                   f"{inertia:.6g}  (ratio {model.cost_ / inertia:.4f})")
    _write(model, file, out, log)


def _write(model: object, file: Path, out: Path | None, log: Path | None) -> None:
    """The final centres (slot, then FILE's column names) and the change log, where asked."""
    if out is not None:
        C = model.cluster_centers_
        np.savetxt(out, np.column_stack([np.arange(len(C)), C]), delimiter=",",
                   fmt=["%d"] + ["%.10g"] * C.shape[1], comments="",
                   header=",".join(["slot", *column_names(file, C.shape[1])]))
        typer.echo(f"wrote {out}")
    if log is not None:
        with log.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(("t", "slot", "kind"))
            w.writerows(model.change_log_)
        typer.echo(f"wrote {log}")
