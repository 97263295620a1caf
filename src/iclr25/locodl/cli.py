"""``iclr25 locodl fit DATA --label COL``: logistic regression over clients with LoCoDL."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import typer

app = typer.Typer(help="LoCoDL: federated logistic regression with local steps and a "
                  "compressed uplink (ICLR 2025).", no_args_is_help=True, add_completion=False)


def read_table(path: Path, label: str | None, client_column: str | None):
    """(X, y, clients or None) from a .csv with a header or a .npz with X, y[, clients].

    Raises:
        ValueError: missing file/columns/arrays, non-numeric cells.
    """
    if not path.is_file():
        raise ValueError(f"DATA {path} does not exist")
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as z:
            for key in ("X", "y"):
                if key not in z:
                    raise ValueError(f"DATA {path} must hold arrays X and y (missing {key})")
            return z["X"], z["y"], (z["clients"] if "clients" in z else None)
    if path.suffix != ".csv":
        raise ValueError(f"DATA must end in .csv or .npz, got {path.name}")
    if label is None:
        raise ValueError("--label is required for a .csv DATA")
    header = path.open().readline().strip().split(",")
    for name, col in (("--label", label), ("--client-column", client_column)):
        if col is not None and col not in header:
            raise ValueError(f"{name}: column {col!r} is not in DATA's header {header}")
    try:
        data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"DATA {path} has a non-numeric cell ({exc})") from None
    li = header.index(label)
    ci = header.index(client_column) if client_column else None
    feats = [i for i in range(len(header)) if i not in (li, ci)]
    y = data[:, li]
    y = y.astype(np.int64) if np.all(y == np.round(y)) else y
    return data[:, feats], y, (data[:, ci].astype(np.int64) if ci is not None else None)


@app.command()
def fit(
    data: Path = typer.Argument(..., help=".csv with a header, or .npz with X, y[, clients]."),
    label: str = typer.Option(None, "--label", help="Label column of a .csv."),
    client_column: str = typer.Option(None, "--client-column", help="Client id column."),
    clients: int = typer.Option(10, "--clients", help="Clients (contiguous equal blocks) "
                                "when no client column is given."),
    compressor: str = typer.Option("rand-1", "--compressor", help="rand-k, natural, "
                                   "rand-k+natural or none."),
    alpha: float = typer.Option(1e-3, "--alpha", help="ℓ2 weight α > 0."),
    engine: str = typer.Option("simulated", "--engine", help="simulated or gloo (torchrun)."),
    nproc: int = typer.Option(2, "--nproc", help="Processes of the gloo engine."),
    max_iter: int = typer.Option(100_000, "--max-iter"),
    tol: float = typer.Option(1e-10, "--tol"),
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(None, "--out", help="Write the coefficients (.npy)."),
) -> None:
    """Fit ℓ2 logistic regression over clients; print rounds, uplink bits and accuracy."""
    import torch

    from iclr25.locodl.estimator import LoCoDLClassifier
    from iclr25.locodl.objectives import ClientLogistic

    try:
        if engine not in ("simulated", "gloo"):
            raise ValueError(f"--engine must be 'simulated' or 'gloo', got {engine!r}")
        if out is not None and out.suffix != ".npy":
            raise ValueError(f"--out must end in .npy, got {out.name}")
        clf = LoCoDLClassifier(alpha=alpha, n_clients=clients, compressor=compressor,
                               max_iter=max_iter, tol=tol, seed=seed)
        X, y, cid = read_table(data, label, client_column)
        clf._check_params(len(X))
        if cid is None:
            cid = np.arange(len(X)) * clients // max(len(X), 1)
        objective = ClientLogistic(X, y, cid, alpha)
        if not 1 <= nproc <= objective.n_clients:
            raise ValueError(f"--nproc must lie in [1, {objective.n_clients}], got {nproc}")
    except (ValueError, TypeError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if engine == "simulated":
        clf.fit(X, y, client_ids=cid)
        coef, rounds, bits = clf.coef_[0], clf.n_rounds_, clf.uplink_bits_
    else:
        with tempfile.TemporaryDirectory() as tmp:
            spec = dict(kind="logistic", X=torch.as_tensor(X, dtype=torch.float64),
                        y=torch.as_tensor(y), clients=torch.as_tensor(cid), alpha=alpha)
            job = dict(algorithm="locodl", compressor=compressor, max_iter=max_iter, tol=tol,
                       seed=seed)
            src, dst = Path(tmp) / "in.pt", Path(tmp) / "out.pt"
            torch.save(dict(spec=spec, jobs=[job]), src)
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   f"--nproc_per_node={nproc}", "-m", "iclr25.locodl.launch", str(src), str(dst)]
            subprocess.run(cmd, check=True)
            res = torch.load(dst, weights_only=False)[0]
        coef, rounds, bits = res["x"].numpy(), res["rounds"], res["uplink_bits"]
    acc = float(np.mean((X @ coef > 0) == (np.asarray(y) == objective.classes.max().item())))
    typer.echo(f"clients: {objective.n_clients}  rounds: {rounds}  uplink bits per client: "
               f"{bits:.6g}  train accuracy: {acc:.4f}")
    if out is not None:
        np.save(out, coef)
        typer.echo(f"wrote {out}")
