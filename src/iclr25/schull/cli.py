"""``iclr25 schull graph FILE`` : SCHull (and radius) graph statistics of .xyz/.sdf/.npy files."""

from __future__ import annotations

from pathlib import Path

import typer

from iclr25._cli import fail as _fail
from iclr25._cli import output_path
from iclr25._io import read_npy

app = typer.Typer(help="SCHull: sparse, connected, rigid graphs of molecules (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


@app.callback()
def _group() -> None:
    """SCHull graphs of molecules and point clouds."""


@app.command()
def graph(
    file: Path = typer.Argument(..., help="Structures: .xyz (multi-frame), .sdf, or .npy "
                                          "positions (N, 3) or (C, N, 3)."),
    radius: float = typer.Option(5.0, "--radius", help="Radius graph cutoff to compare (Å)."),
    out: Path = typer.Option(None, "--out", help="Write SCHull edges: .npz (edge_index_<k>, "
                                                 "names) or .csv (structure,source,target; "
                                                 "structure: its name as printed)."),
) -> None:
    """Print N, E, E/N, connected and rigid for SCHull and the radius graph of each structure.

    Structures are named by their SDF ``_Name`` (the molblock's title line) or their .xyz
    comment line, or numbered from 0 when it is empty and for .npy files.
    """
    from iclr25._progress import track
    from iclr25.schull.graph import schull_graph
    from iclr25.schull.metrics import is_connected, is_rigid, num_undirected_edges
    from iclr25.schull.neighbors import radius_graph

    if file.suffix not in (".xyz", ".sdf", ".npy"):
        _fail(f"FILE must end in .xyz, .sdf or .npy, got {file.name}")
    if not radius > 0:
        _fail(f"--radius must be > 0, got {radius}")
    output_path(out, suffixes=(".npz", ".csv"))
    if not file.is_file():
        _fail(f"no such file: {file}")
    try:
        structs, names = _read_structures(file)
        graphs = [schull_graph(p).edge_index for p in track(structs, "SCHull graphs")]
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    names = names or [str(k) for k in range(len(structs))]
    typer.echo("structure  N  E  E/N  connected  rigid | radius E  E/N  connected  rigid")
    flat = False
    for k, (p, ei) in enumerate(track(list(zip(structs, graphs, strict=True)),
                                      "graph statistics")):
        n = len(p)
        kind, off = _flatness(p)                  # the structure's, for both graphs
        rows = []
        for e in (ei, radius_graph(p, radius, max_num_neighbors=10**6)):
            m = num_undirected_edges(e, n)
            rig = is_rigid(p, e) if n <= 1000 else "n/a"
            if kind and isinstance(rig, bool):
                # a numerical rank of 3N-6 there comes from the departure alone (benzene's
                # conformer: 9e-05 Å off its plane; ethyne's 0.004 Å off its line), so say so
                rig = f"False ({kind})" if rig is False else f"True (nearly {kind}: {off:.2g} Å)"
                flat = True
            rows.append(f"{m}  {m / n:.2f}  {is_connected(e, n)}  {rig}")
        typer.echo(f"{names[k]}  {n}  {rows[0]} | radius {radius:g} Å: {rows[1]}")
    if flat:
        typer.echo("planar: no graph of a planar structure of 4 or more atoms, nor of a "
                   "collinear one of 3 or more, is rigid in 3-D (its atoms can move off the "
                   f"plane or line); one within {PLANAR_SV:g} Å of a plane (a line) is rigid "
                   "only through that small departure (nearly planar, nearly collinear); "
                   "SCHull's rigidity is for non-planar ones")
    if out is not None:
        _write_edges(out, graphs, names)
        typer.echo(f"wrote {out}")


def _read_structures(file: Path) -> tuple[list, list[str]]:
    """The position tensors in ``file`` and, for an SDF or .xyz, their names (a blank title
    or comment line: the index; .npy: an empty list)."""
    import numpy as np
    import torch

    from iclr25.datasets.molecules import read_sdf, read_xyz

    if file.suffix == ".xyz":  # named by their comment lines, as an SDF by its titles
        frames = read_xyz(file, comments=True)
        return [p for _, p, _ in frames], [c or str(k) for k, (*_, c) in enumerate(frames)]
    if file.suffix == ".sdf":
        structs = [p for _, p in read_sdf(file)]
        return structs, [nm or str(k) for k, nm in enumerate(_sdf_names(file))]
    arr = read_npy(file, "FILE")
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[-1] != 3:
        raise ValueError(f"{file}: expected positions (N, 3) or (C, N, 3), got {arr.shape}")
    return [torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in arr], []


def _write_edges(out: Path, graphs: list, names: list[str]) -> None:
    """SCHull edge indices to ``out``: .npz (``edge_index_<k>`` and ``names``, the structures'
    names as printed) or .csv (structure,source,target; structure is the printed name)."""
    import csv

    import numpy as np

    if out.suffix == ".npz":
        np.savez(out, names=np.array(names, dtype=str),
                 **{f"edge_index_{k}": e.numpy() for k, e in enumerate(graphs)})
    else:
        with out.open("w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(("structure", "source", "target"))
            w.writerows((names[k], a, b) for k, e in enumerate(graphs) for a, b in e.T.tolist())


#: Å: a structure whose centred coordinates' least singular value is below this is planar
#: (the reproduction's ``Panel.planar_sv``, which leaves such structures out of its rigidity
#: claim).
PLANAR_SV = 0.1


def _flatness(pos) -> tuple[str, float]:
    """Whether ``pos`` (N, 3) lies near a line or a plane, and how far it departs from it.

    Returns ``("collinear", σ₂)`` where N >= 3 and the centred coordinates' second singular
    value σ₂ is below :data:`PLANAR_SV` (Å), else ``("planar", σ₃)`` where N >= 4 and the
    least one is, else ``("", inf)``: fewer atoms than a line or plane constrains, or neither.
    """
    import torch

    p = torch.as_tensor(pos, dtype=torch.float64)
    if len(p) < 3:
        return "", float("inf")
    sv = torch.linalg.svdvals(p - p.mean(0))
    if float(sv[1]) < PLANAR_SV:
        return "collinear", float(sv[1])
    if len(p) >= 4 and float(sv[-1]) < PLANAR_SV:
        return "planar", float(sv[-1])
    return "", float("inf")


def _sdf_names(file: Path) -> list[str]:
    """Each record's ``_Name`` (stripped; empty when the title line is blank)."""
    from rdkit import Chem

    return [m.GetProp("_Name").strip() if m is not None and m.HasProp("_Name") else ""
            for m in Chem.SDMolSupplier(str(file), removeHs=False, sanitize=False)]
