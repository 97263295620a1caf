"""The structure panel of the claims and benchmark, and a naive port of the official code."""

from __future__ import annotations

import numpy as np
import torch
from scipy.spatial import ConvexHull

from iclr25.datasets.molecules import conformers

__all__ = ["PANEL_SMILES", "ASPIRIN", "clouds", "molecule_panel", "official_port"]

ASPIRIN = "CC(=O)OC1=CC=CC=C1C(=O)O"

# 40 fixed molecules; the first ten (the quick panel) hold the degenerate ones: a centroid
# atom (methane, SF6, CO2), collinear (CO2, acetylene, HCN), planar (benzene, ethylene)
PANEL_SMILES = (
    "C", "FS(F)(F)(F)(F)F", "O=C=O", "C#C", "c1ccccc1", "C#N", "C=C", "CCO", ASPIRIN,
    "c1ccc2ccccc2c1",
    "O", "N", "CC", "CCC", "CC(C)C", "C1CCCCC1", "CC(=O)O", "OCC(O)CO", "CC(=O)C", "CN(C)C",
    "c1ccncc1", "c1ccoc1", "c1ccsc1", "Cc1ccccc1", "Oc1ccccc1", "Nc1ccccc1", "OC(=O)c1ccccc1O",
    "O=CC=O", "O=C1C=CC(=O)C=C1", "CC(C)(C)O", "C1CC1", "C1CCC1", "C1CCOC1", "CCOCC",
    "CC(N)C(=O)O", "NCC(=O)O", "O=c1cc[nH]c(=O)[nH]1", "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
    "CC(C)Cc1ccc(cc1)C(C)C(=O)O", "ClC(Cl)(Cl)Cl",
)


def molecule_panel(n_smiles: int, n_conf: int, seed: int = 0) -> list[tuple[str, torch.Tensor]]:
    """``(label, pos (N, 3) float64)`` for ``n_conf`` conformers of the first ``n_smiles``."""
    out = []
    for s in PANEL_SMILES[:n_smiles]:
        c = conformers(s, n_conf, seed=seed)
        out += [(s, c.pos[k]) for k in range(n_conf)]
    return out


def clouds(n: int, seed: int = 0, low: int = 4, high: int = 1000
           ) -> list[tuple[str, torch.Tensor]]:
    """``n`` random clouds cycling Gaussian, ball and planar; N log-uniform in [low, high].

    Scaled to a molecule's density (about 0.1 atoms per Å^3 in a ball) so cutoffs in Å
    compare with the molecules'.
    """
    g = torch.Generator().manual_seed(seed)
    out = []
    for k in range(n):
        m = int(torch.exp(torch.empty(1).uniform_(np.log(low), np.log(high + 1),
                                                  generator=g)).item())
        m = max(low, min(high, m))
        radius = (m / (4.0 / 3.0 * np.pi * 0.1)) ** (1 / 3)
        kind = ("gaussian", "ball", "planar")[k % 3]
        if kind == "gaussian":
            x = torch.randn(m, 3, generator=g, dtype=torch.float64) * radius / 2
        elif kind == "ball":
            d = torch.randn(m, 3, generator=g, dtype=torch.float64)
            d = d / d.norm(dim=1, keepdim=True)
            x = d * radius * torch.rand(m, 1, generator=g, dtype=torch.float64) ** (1 / 3)
        else:
            rr = np.sqrt(m / (np.pi * 0.3))
            t = torch.rand(m, generator=g, dtype=torch.float64) * 2 * np.pi
            a = rr * torch.rand(m, generator=g, dtype=torch.float64).sqrt()
            x = torch.stack([a * torch.cos(t), a * torch.sin(t), torch.zeros(m,
                                                                        dtype=torch.float64)], 1)
        out.append((f"{kind}-{m}", x))
    return out


def official_port(pos: torch.Tensor, tol: float = 1e-2) -> torch.Tensor:
    """A naive port of the official SCHull preprocessing (per-atom Python dicts).

    As the official ``get_schull``: centre, drop atoms within ``tol`` of the centroid, merge
    only exactly equal directions, ``ConvexHull(QJ)`` for four or more directions, then link
    every atom on a direction to every atom on each neighbouring direction. Dropped atoms stay
    isolated here (the official code removes them from the structure). Returns (2, E) int64.
    """
    x = pos.detach().cpu().double().numpy()
    x = x - x.mean(0)
    keep = [i for i in range(len(x)) if np.linalg.norm(x[i]) > tol]
    u = {i: tuple(x[i] / np.linalg.norm(x[i])) for i in keep}
    dirs: dict[tuple, list[int]] = {}
    for i in keep:
        dirs.setdefault(u[i], []).append(i)
    keys = list(dirs)
    adj: dict[int, set[int]] = {k: set() for k in range(len(keys))}
    if len(keys) == 2:
        adj[0].add(1)
        adj[1].add(0)
    elif len(keys) == 3:
        for a in range(3):
            adj[a].update(b for b in range(3) if b != a)
    elif len(keys) >= 4:
        hull = ConvexHull(np.array(keys), qhull_options="QJ")
        for s in hull.simplices:
            for a in s:
                adj[int(a)].update(int(b) for b in s if b != a)
    edges = []
    for k, nbs in adj.items():
        for a in dirs[keys[k]]:
            for nb in nbs:
                for b in dirs[keys[nb]]:
                    edges.append((a, b))
    if not edges:
        return torch.zeros(2, 0, dtype=torch.int64)
    return torch.tensor(edges, dtype=torch.int64).T
