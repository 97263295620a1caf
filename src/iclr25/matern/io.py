"""Oriented point clouds in and meshes out: .ply/.xyz/.txt/.npz readers, .ply/.obj/.stl writer."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from iclr25._checks import ArrayLike
from iclr25._contract import checked
from iclr25._io import check_readable, read_matrix, read_npz
from iclr25._optional import require

trimesh = require("trimesh", "3d")

POINT_SUFFIXES = (".ply", ".xyz", ".txt", ".npz")
MESH_SUFFIXES = (".ply", ".obj", ".stl")


def _read_ply(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        obj = trimesh.load(path, process=False)
    except Exception as exc:  # trimesh raises many kinds on malformed files
        raise ValueError(f"path: cannot read {path} as PLY ({exc})") from None
    if not hasattr(obj, "vertices") or len(obj.vertices) == 0:
        raise ValueError(f"path: {path} holds no vertices")
    props = {}
    meta = getattr(obj, "metadata", {}) or {}
    ply = meta.get("_ply_raw", {}).get("vertex", {}).get("data")
    names = (ply.keys() if isinstance(ply, dict)
             else (ply.dtype.names or ()) if hasattr(ply, "dtype") else ())
    if {"nx", "ny", "nz"} <= set(names):
        props = {k: np.asarray(ply[k], dtype=np.float64).reshape(-1) for k in ("nx", "ny", "nz")}
    if props:
        normals = np.stack([props["nx"], props["ny"], props["nz"]], 1)
    elif isinstance(obj, trimesh.Trimesh) and len(obj.faces):
        normals = np.asarray(obj.vertex_normals, dtype=np.float64)   # from a mesh's faces
    else:
        raise ValueError(f"path: {path} has no per-vertex normals (nx ny nz); oriented "
                         f"points are needed")
    return np.asarray(obj.vertices, dtype=np.float64), normals


@checked
def read_point_cloud(path: str | os.PathLike) -> tuple[torch.Tensor, torch.Tensor]:
    """Read an oriented point cloud: (points, normals) as float64 tensors.

    Formats: ``.ply`` with ``x y z nx ny nz`` vertex properties (or a mesh, whose vertex
    normals are used), read by trimesh; ``.xyz``/``.txt`` with 6 whitespace-separated
    columns; ``.npz`` with arrays ``points`` and ``normals``.

    Args:
        path: the file.

    Returns:
        (n, 3) points and (n, 3) normals, float64.

    Raises:
        ValueError: unknown suffix, missing or unreadable file, no normals, wrong columns.
    """
    p = Path(path)
    if p.suffix.lower() not in POINT_SUFFIXES:
        raise ValueError(f"path must end in {', '.join(POINT_SUFFIXES)}, got {p.name!r}")
    if not p.exists():
        raise ValueError(f"path: no such file {p}")
    check_readable(p, "path")  # a folder, or permission denied
    suffix = p.suffix.lower()
    if suffix == ".ply":
        pts, nrm = _read_ply(p)
    elif suffix == ".npz":
        z = read_npz(p, "path", ("points", "normals"))
        pts, nrm = z["points"], z["normals"]
    else:
        data = read_matrix(p, "path", suffixes=(".xyz", ".txt"))
        if data.shape[1] != 6:
            raise ValueError(f"path: {p} must have 6 columns (x y z nx ny nz), got "
                             f"{data.shape[1]}")
        pts, nrm = data[:, :3], data[:, 3:]
    for arr, what in ((pts, "points"), (nrm, "normals")):
        if arr.ndim != 2 or arr.shape[1] != 3:
            raise ValueError(f"path: {p} {what} must be (n, 3), got {arr.shape}")
    return (torch.from_numpy(np.array(pts, dtype=np.float64)),
            torch.from_numpy(np.array(nrm, dtype=np.float64)))


@checked
def write_mesh(path: str | os.PathLike, verts: ArrayLike, faces: ArrayLike) -> Path:
    """Write a triangle mesh with trimesh: ``.ply``, ``.obj`` or ``.stl``.

    Args:
        path: output file; its suffix picks the format.
        verts: (V, 3) float vertices.
        faces: (F, 3) integer vertex indices.

    Returns:
        The path written.

    Raises:
        ValueError: unknown suffix, bad shapes, face indices out of range.
    """
    p = Path(path)
    if p.suffix.lower() not in MESH_SUFFIXES:
        raise ValueError(f"path must end in {', '.join(MESH_SUFFIXES)}, got {p.name!r}")
    v = np.asarray(verts.detach().cpu() if isinstance(verts, torch.Tensor) else verts)
    f = np.asarray(faces.detach().cpu() if isinstance(faces, torch.Tensor) else faces)
    if v.ndim != 2 or v.shape[1] != 3 or not np.issubdtype(v.dtype, np.floating):
        raise ValueError(f"verts must be a float (V, 3) array, got {v.dtype} {v.shape}")
    if f.ndim != 2 or f.shape[1] != 3 or not np.issubdtype(f.dtype, np.integer):
        raise ValueError(f"faces must be an integer (F, 3) array, got {f.dtype} {f.shape}")
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise ValueError(f"faces index vertices out of range [0, {len(v)})")
    trimesh.Trimesh(vertices=v, faces=f, process=False).export(p)
    return p
