"""``iclr25 locodl fit DATA``: logistic regression over clients with LoCoDL.

DATA is a .csv with a header (``--label COL``), a .npz with X, y[, clients], or a LibSVM /
svmlight file (any other name, e.g. LIBSVM's ``a9a``), read sparse.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Literal

import numpy as np
import typer

from iclr25._choices import Engine
from iclr25._cli import check_seed, choice, cli_words, fail, output_path
from iclr25._io import read_npz, read_table

#: the method run beside LoCoDL to the same accuracy ("none": no baseline)
Baseline = Literal["gd", "diana", "none"]
#: how `fit` scales DATA before fitting ("global": divided by its ClientLogistic.data_scale)
DataScale = Literal["global", "none"]

app = typer.Typer(help="LoCoDL: federated logistic regression with local steps and a "
                  "compressed uplink (ICLR 2025).", no_args_is_help=True, add_completion=False)


def read_libsvm(path: Path):
    """(X scipy CSR, y) of a two-class LibSVM/svmlight file.

    Raises:
        ValueError: unreadable file, or labels that are not exactly two classes.
    """
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path))
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"DATA {path} is not .csv/.npz nor a readable LibSVM file "
                         f"({exc})") from None
    _two_classes(y, f"DATA {path}: LibSVM labels")
    return X, (y.astype(np.int64) if np.all(y == np.round(y)) else y)


def _two_classes(y: np.ndarray, what: str) -> None:
    """Refuse labels that are not two classes, naming ``what`` and showing a few values."""
    classes = np.unique(y)
    if len(classes) != 2:
        shown = ", ".join(f"{c:g}" for c in classes[:6]) + (", ..." if len(classes) > 6 else "")
        raise ValueError(f"{what} must be two classes (binary logistic regression), found "
                         f"{len(classes)} distinct values: {shown}")


def read_data(path: Path, label: str | None, client_column: str | None):
    """(X, y, clients or None) from a .csv with a header, a .npz with X, y[, clients], or a
    LibSVM file (X then a scipy CSR matrix).

    Raises:
        ValueError: missing file/columns/arrays, non-numeric cells, non-binary LibSVM labels.
    """
    if not path.is_file():
        raise ValueError(f"DATA {path} does not exist")
    if path.suffix not in (".npz", ".csv"):
        for name, opt in (("--label", label), ("--client-column", client_column)):
            if opt is not None:
                raise ValueError(f"{name} is for a .csv DATA; a LibSVM file's label is the "
                                 f"first field of each line")
        X, y = read_libsvm(path)
        return X, y, None
    if path.suffix == ".npz":
        z = read_npz(path, "DATA", ("X", "y"), ("clients",))
        _two_classes(z["y"], f"DATA {path.name}: y")
        return z["X"], z["y"], z.get("clients")
    if label is None:
        raise ValueError("--label is required for a .csv DATA")
    header, data = read_table(path, "DATA")
    for name, col in (("--label", label), ("--client-column", client_column)):
        if col is not None and col not in header:
            raise ValueError(f"{name}: column {col!r} is not in DATA's header {header}")
    li = header.index(label)
    ci = header.index(client_column) if client_column else None
    feats = [i for i in range(len(header)) if i not in (li, ci)]
    y = data[:, li]
    _two_classes(y, f"--label {label!r}: the column's values")
    y = y.astype(np.int64) if np.all(y == np.round(y)) else y
    return data[:, feats], y, (data[:, ci].astype(np.int64) if ci is not None else None)


@app.command()
def fit(
    data: Path = typer.Argument(..., help=".csv with a header, .npz with X, y[, clients], or a "
                                "LibSVM/svmlight file (any other name; read sparse, labels "
                                "must be two classes)."),
    label: str = typer.Option(None, "--label", help="Label column of a .csv."),
    client_column: str = typer.Option(None, "--client-column", help="Client id column."),
    clients: int = typer.Option(10, "--clients", help="Clients (contiguous equal blocks) "
                                "when no client column is given."),
    compressor: str = typer.Option("auto", "--compressor", help="auto: rand-k with k = "
                                   "ceil(d/10), a tenth of the d features (LoCoDL's rounds "
                                   "grow with d/k); or rand-k, natural, rand-k+natural, none."),
    alpha: float = typer.Option(1e-3, "--alpha", help="ℓ2 weight α > 0 (on DATA/c)."),
    rescale: DataScale = typer.Option(
        "global", "--rescale", parser=choice(DataScale, "--rescale"), help=(
        "global: fit DATA/c, c (printed) = √(max_i n·λ_max(AᵢᵀAᵢ)/N), n clients, N rows: "
        "DATA's units do not set the iterations. none: DATA as it is.")),
    engine: Engine = typer.Option("simulated", "--engine", parser=choice(Engine, "--engine"),
                                  help="In this process, or in gloo processes (torchrun)."),
    nproc: int = typer.Option(2, "--nproc", help="Processes of the gloo engine."),
    # 10x the estimator's: a file runs to --tol (issue 68, walks 6/7 needed 4.7e5 and 1.8e5)
    max_iter: int = typer.Option(1_000_000, "--max-iter", help="Iterations at most (the fit "
                                 "stops at --tol first); stopping at the cap prints a "
                                 "warning with the iterations it needs."),
    tol: float = typer.Option(1e-10, "--tol", help="Stop at a change between rounds below this."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    out: Path = typer.Option(None, "--out", help="Write the coefficients (.npy, DATA's units)."),
    baseline: Baseline = typer.Option("gd", "--baseline", parser=choice(Baseline, "--baseline"),
                                      help="Also run gd or diana (same data, clients, "
                                      "compressor for diana) to LoCoDL's final distance to "
                                      "the optimum; print its uplink bits. none: skip it."),
) -> None:
    """Fit ℓ2 logistic regression over clients; print rounds, uplink bits (beside a GD or
    DIANA baseline's for the same accuracy) and accuracy. On a terminal a progress bar shows
    the iterations, rounds and last change.

    Small real input: breast cancer (569 x 30, scaled) over 10 clients takes seconds."""
    from iclr25.locodl.estimator import LoCoDLClassifier, cap_message

    try:
        output_path(out, suffixes=(".npy",))
        clf = LoCoDLClassifier(alpha=alpha, n_clients=clients, compressor=compressor,
                               max_iter=max_iter, tol=tol, seed=seed)
        X, y, cid = read_data(data, label, client_column)
        name, fitted, Xc, c = _setup(clf, X, y, cid, engine, nproc, rescale)
    except (ValueError, TypeError) as exc:
        fail(cli_words(exc, _NAMES))
    objective = fitted[-1]
    coef_c, rounds, bits, last = _train(clf, Xc, engine, nproc, name, fitted)
    coef = coef_c / c  # (X/c) @ w = X @ (w/c): the fitted model in DATA's units
    acc = float(np.mean((X @ coef > 0) == (np.asarray(y) == objective.classes.max().item())))
    typer.echo(f"clients: {objective.n_clients}  compressor: {name}  scale: "
               f"{f'DATA/{c:.4g}' if rescale == 'global' else rescale}  rounds: {rounds}  "
               f"uplink bits per client: {bits:.6g}  train accuracy: {acc:.4f}")
    spread = _units_note(X, rescale, alpha * c * c)
    if last is not None:
        said = cap_message(X.shape[1], name, max_iter, rounds, tol, last[0], cli=True,
                           spread=spread, needed=last[1], data_scale=objective.data_scale)
        typer.echo(f"warning: {said}", err=True)
    if baseline != "none":  # as long as LoCoDL's fit or longer: say what runs
        typer.echo(f"running the {baseline.upper()} baseline to the same accuracy "
                   "(--baseline none skips it)...", err=True)
        typer.echo(_baseline_line(objective, baseline, coef_c, bits, name, clf, c))
    if out is not None:
        np.save(out, coef)
        typer.echo(f"wrote {out}")


def _units_note(X, scale: str, weight: float) -> float:
    """DATA's :func:`~iclr25._checks.column_spread`, after printing the note ``fit --rescale
    global`` gives where it is over ``SPREAD_HINT``: one c keeps the columns' ratios, so the
    ℓ2 weight (``weight`` = α·c² on DATA) shrinks the small-unit columns' coefficients most
    (issue 68 walk 9: scikit-learn's wine, proline ~1e3 beside hue ~1, train accuracy 0.921
    against 0.994 standardised)."""
    from iclr25._checks import SPREAD_HINT, column_spread

    spread = column_spread(X)
    if scale == "global" and spread > SPREAD_HINT:
        typer.echo(f"note: DATA's columns' scales differ {spread:.3g}-fold; DATA/c keeps their "
                   f"ratios, so the ℓ2 weight (α·c² = {weight:.3g} on DATA) falls hardest on "
                   "the small-unit columns: standardise them first (e.g. sklearn's "
                   "StandardScaler) to weigh every column alike", err=True)
    return spread


# the estimator's parameter names as `fit` spells them (its refusals lead with the name)
_NAMES = {"alpha": "--alpha", "max_iter": "--max-iter", "tol": "--tol", "n_clients": "--clients"}


def _setup(clf, X, y, cid, engine: str, nproc: int, scale: str):
    """(compressor name, what the estimator fits X/c on (its checked X/c, y, the client of
    each row and the objective, last), X/c, c) of a fit, checked before any work; c
    is DATA's objective's ``data_scale`` for ``scale="global"`` (1 for "none" or an all-zero
    X); X/c is float64 for an integer X, as the estimator fits one, float32 for a float32 X;
    without client ids, ``clf.n_clients`` contiguous equal blocks of rows. The client blocks'
    eigendecomposition is computed once for c (DATA's) and once for X/c's objective, whose
    condition check and fit share it (X/c's own, not DATA's divided by c², so that the fit
    is the estimator's to the last digit)."""
    from iclr25.locodl.algorithms import RESCALE_HINT, check_condition
    from iclr25.locodl.objectives import ClientLogistic, is_sparse

    clf._check_params(X.shape[0])
    if X.shape[1] < 1:   # else the compressor's check: "--d must lie in [1, inf], got 0"
        raise ValueError("DATA has no feature columns (a .csv's: those besides --label and "
                         "--client-column)")
    try:
        name = clf._compressor_name(X.shape[1])
    except ValueError as exc:
        raise ValueError(f"--{exc}") from None  # "--compressor 'rand-9' does not fit..."
    clients = clf.n_clients
    if cid is None and clients > X.shape[0]:  # would be clamped to one client per row
        raise ValueError(f"--clients must be <= the {X.shape[0]} rows of DATA, got {clients}")
    if cid is None:
        cid = np.arange(X.shape[0]) * clients // max(X.shape[0], 1)
    if not is_sparse(X) and X.dtype.kind in "biu":   # as the estimator fits it (not float32)
        X = X.astype(np.float64)
    try:   # DATA checked once (its magnitude included), by the first objective built on it
        c = ClientLogistic(X, y, cid, clf.alpha).data_scale if scale == "global" else 1.0
        Xc, c = (X / c, c) if c > 0 and c != 1.0 else (X, 1.0)
        fitted = clf._objective(Xc, y, cid)   # as fit builds it; its L computed once below
    except (ValueError, TypeError) as exc:    # DATA's refusals in DATA's words (the API's X)
        raise type(exc)(re.sub(r"\bX\b", "DATA", str(exc))) from None
    objective = fitted[-1]
    try:   # here, not in the fit: gloo's processes would raise it as a traceback
        check_condition(objective)
    except ValueError as exc:   # the remedy in the command line's words
        raise ValueError(str(exc).replace(RESCALE_HINT, "raise --alpha or, with --rescale "
                                          "none, drop it (the default divides DATA by c)")
                         ) from None
    if not 1 <= nproc <= objective.n_clients:
        raise ValueError(f"--nproc must lie in [1, {objective.n_clients}], got {nproc}")
    if engine == "gloo" and is_sparse(X):
        raise ValueError("--engine gloo needs dense DATA (.csv/.npz); a LibSVM file runs "
                         "with --engine simulated")
    return name, fitted, Xc, c


def _train(clf, X, engine: str, nproc: int, compressor: str, fitted: tuple
           ) -> tuple[np.ndarray, int, float, tuple[float, float] | None]:
    """(coefficients, rounds, uplink bits per client, (last change, the iteration its trend
    reaches tol) if it stopped at the cap else None) of clf's LoCoDL fit on X, in this
    process (on ``fitted``, what ``clf._objective`` returned for X) or in ``nproc`` gloo
    processes (torchrun, on X and ``fitted``'s labels and clients), with ``compressor``
    ("auto" resolved); the cap's ConvergenceWarning is silenced (`fit` says it in the CLI's
    words)."""
    import torch
    from sklearn.exceptions import ConvergenceWarning

    from iclr25.locodl.estimator import cap_state

    def capped(history, converged: bool) -> tuple[float, float] | None:
        return None if converged else cap_state(history, clf.tol)

    if engine == "simulated":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf._fit(X, *fitted)
        return (clf.coef_[0], clf.n_rounds_, clf.uplink_bits_,
                capped(clf.history_, clf.converged_))
    _, y, cid, _ = fitted
    with tempfile.TemporaryDirectory() as tmp:
        spec = dict(kind="logistic", X=torch.as_tensor(X, dtype=torch.float64),
                    y=torch.as_tensor(y), clients=torch.as_tensor(cid), alpha=clf.alpha)
        job = dict(algorithm="locodl", compressor=compressor, max_iter=clf.max_iter,
                   tol=clf.tol, seed=clf.seed)
        src, dst = Path(tmp) / "in.pt", Path(tmp) / "out.pt"
        torch.save(dict(spec=spec, jobs=[job]), src)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc_per_node={nproc}", "-m", "iclr25.locodl.launch", str(src), str(dst)]
        subprocess.run(cmd, check=True)
        res = torch.load(dst, weights_only=False)[0]
    return (res["x"].numpy(), res["rounds"], res["uplink_bits"],
            capped(res["history"], res["converged"]))


def _baseline_line(objective, name: str, coef, bits: float, compressor: str, clf,
                   c: float) -> str:
    """The baseline's uplink bits to reach LoCoDL's final distance to the optimum x* of
    ``objective`` (DATA/c's; ``coef`` its coefficients), within ``clf``'s max_iter and seed;
    the distance printed in DATA's units, as the coefficients written (it is c times that)."""
    import torch
    from sklearn.exceptions import ConvergenceWarning

    from iclr25.locodl.algorithms import diana, gd

    x_star = objective.solve()
    err = float(torch.linalg.vector_norm(torch.as_tensor(coef, dtype=x_star.dtype) - x_star))
    with warnings.catch_warnings():  # said on the line, "not reached"
        warnings.simplefilter("ignore", ConvergenceWarning)
        kw = dict(max_iter=clf.max_iter, tol=err, x_star=x_star, seed=clf.seed, verbose=None)
        run = gd(objective, **kw) if name == "gd" else diana(objective, compressor, **kw)
    label = "GD (uncompressed)" if name == "gd" else f"DIANA ({compressor})"
    reached = "" if run.converged else f", not reached in {clf.max_iter} rounds"
    return (f"{label} to the same |x - x*| = {err / c:.3g}: uplink bits per client "
            f"{run.uplink_bits:.6g}{reached} ({versus(run.uplink_bits, bits)})")


def versus(baseline_bits: float, bits: float) -> str:
    """The baseline's bits as a multiple of LoCoDL's; none when LoCoDL sent none (a ratio
    to zero bits is no figure: it printed "9.6e+302x")."""
    if bits <= 0:
        return "no ratio: LoCoDL sent no bits, it stopped before its first round"
    return f"{baseline_bits / bits:.3g}x LoCoDL's"
