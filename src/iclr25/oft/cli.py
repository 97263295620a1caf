"""``iclr25 oft solve FILE``: min-cost flow of a DIMACS ``.min`` or ``.npz`` problem."""

from __future__ import annotations

from pathlib import Path

import typer

from iclr25._cli import api_warnings, output_path, print_notes
from iclr25._cli import fail as _fail
from iclr25._io import read_npz

app = typer.Typer(help="OFT: min-cost flow by OFT-Sinkhorn matrix iterations (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


@app.command()
def solve(
    file: Path = typer.Argument(..., help="DIMACS .min file, or .npz with s, C[, capacity]."),
    reg: float = typer.Option(1e-3, "--reg", help="Entropic reg relative to the largest cost."),
    log_domain: bool = typer.Option(False, "--log-domain",
                                    help="Log-domain iterations (stable for small reg)."),
    exact: bool = typer.Option(False, "--exact", help="Also solve exactly (HiGHS), print gap."),
    iters: int = typer.Option(20000, "--iters", help="Maximum number of iterations."),
    out: Path = typer.Option(
        None, "--out", help="Write the flow on every arc: .csv with header tail,head,flow,cost "
        "(cost per unit; nodes numbered as in FILE: from 1 for .min, from 0 for .npz), or .npy "
        "(a record array with those fields)."),
) -> None:
    """Route the supply of FILE to its demand; print cost, iterations and violations."""
    import numpy as np

    from iclr25.oft.flow import min_cost_flow, oft_sinkhorn
    from iclr25.oft.io import read_dimacs

    output_path(out, suffixes=(".csv", ".npy"))
    _check_options(reg, iters)
    if not file.is_file():
        _fail(f"FILE {str(file)!r} does not exist")
    if file.suffix not in (".min", ".npz"):
        _fail("FILE must end in .min (DIMACS) or .npz (arrays s, C[, capacity])")
    notes: list[str] = []
    try:
        if file.suffix == ".min":
            s, C, cap = read_dimacs(file)
        else:
            import torch

            z = read_npz(file, "FILE", ("s", "C"), ("capacity",))
            s, C = torch.as_tensor(z["s"]), torch.as_tensor(z["C"])
            cap = torch.as_tensor(z["capacity"]) if "capacity" in z else None
        with api_warnings((), notes, words=lambda m: _cli_text(m, iters)):
            F, lg = oft_sinkhorn(s, C, reg, capacity=cap, numItermax=iters, log=True,
                                 method="sinkhorn_log" if log_domain else "sinkhorn")
        opt = min_cost_flow(s, C, capacity=cap, log=True)[1]["cost"] if exact else None
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    print_notes(notes)
    typer.echo(f"cost                {lg['cost']:.10g}")
    typer.echo(f"iterations          {lg['n_iter']} (converged: {lg['converged']})")
    typer.echo(f"balance violation   {lg['balance_violation']:.3g}")
    typer.echo(f"capacity violation  {lg['capacity_violation']:.3g}")
    typer.echo(f"dropped edges       {lg['dropped_edges']}")
    if opt is not None:
        typer.echo(f"exact (HiGHS) cost  {opt:.10g}")
        typer.echo(f"relative gap        {(lg['cost'] - opt) / opt:.4g}")
    if out is not None:
        arcs = _arc_flows(F, C, cap, first=1 if file.suffix == ".min" else 0)
        if out.suffix == ".npy":
            np.save(out, arcs)
        else:
            np.savetxt(out, np.column_stack([arcs[k] for k in arcs.dtype.names]),
                       delimiter=",", fmt=["%d", "%d", "%.10g", "%.10g"],
                       header=",".join(arcs.dtype.names), comments="")
        typer.echo(f"wrote {out} ({len(arcs)} arcs)")


def _check_options(reg: float, iters: int) -> None:
    """Exit 2 on a bad ``--reg`` or ``--iters``, named as the command line spells them,
    before FILE is read (issue 68 walk 11: "reg must lie ...", "numItermax must lie ...")."""
    from iclr25._checks import check_int, check_range

    try:
        check_range(reg, "--reg", 0.0, low_open=True)
        check_int(iters, "--iters", 1)
    except (ValueError, TypeError) as exc:
        _fail(exc)


def _cli_text(message: object, iters: int) -> str:
    """The library's warning as the command line says it: the non-convergence warning
    pointed at ``log['balance_violation']`` (an API name) and not at the likeliest cause on a
    file with capacities, an infeasible network, which ``--exact`` names."""
    if "did not reach stopThr" not in str(message):
        return str(message)
    return (f"OFT-Sinkhorn did not converge in {iters} iterations: the flow is off balance "
            f"(below). Raise --iters or --reg; if the capacities cannot carry the supply to "
            f"the demand, no setting helps: --exact checks")


def _arc_flows(F, C, cap, first: int):
    """Record array (tail, head, flow, cost) over the problem's arcs (finite cost, positive
    capacity, off the diagonal), tails then heads in increasing order."""
    import numpy as np
    import torch

    Cn = C.detach().cpu().double().numpy()
    arc = np.isfinite(Cn) & ~np.eye(len(Cn), dtype=bool)
    if cap is not None:
        arc &= cap.detach().cpu().numpy() > 0
    tail, head = np.nonzero(arc)
    rec = np.empty(len(tail), dtype=[("tail", "i8"), ("head", "i8"), ("flow", "f8"),
                                     ("cost", "f8")])
    rec["tail"], rec["head"] = tail + first, head + first
    Fn = F.detach().cpu().double().numpy()
    # the entropic plan is positive on every arc; a flow below the plan's dtype resolution
    # of the total flow is zero at that precision (it was written as 3.0e-145)
    flow = Fn[tail, head]
    flow[flow <= torch.finfo(F.dtype).eps * Fn.sum()] = 0.0
    rec["flow"] = flow
    rec["cost"] = Cn[tail, head]
    return rec
