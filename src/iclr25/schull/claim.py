"""SCHull's claims at laptop scale: connected and sparse, rigid, and a better short-cutoff GNN.

Panel: conformers of fixed SMILES (degenerate ones first: centroid atoms, collinear,
planar) plus random clouds; the same structures for SCHull, the naive official port, radius
graphs and kNN. The learning test is MD17-like: 600 training conformers of aspirin with MMFF94
energies and forces, trained on energy + 100 × force MAE as the official MD17 recipe trains
(the testbed chosen by issue 72's pilot, :mod:`iclr25.schull.pilot`, training SchNet alone);
energy (``schull.energy_mae``) and forces (``schull.force_mae``) are each a claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from iclr25._engine import EngineOptions, Unpack
from iclr25._train import fit_minibatch, seeded_init
from iclr25.claims import (
    Comparison,
    Context,
    Evidence,
    Setting,
    Table,
    claim,
    experiment,
    scalar,
)
from iclr25.datasets.molecules import conformers
from iclr25.schull.graph import schull_graph
from iclr25.schull.metrics import is_connected, is_rigid, num_undirected_edges
from iclr25.schull.model import SchNetCHA
from iclr25.schull.neighbors import knn_graph, radius_graph
from iclr25.schull.testbed import ASPIRIN, clouds, molecule_panel, official_port

KINDS = ("schull", "official port", "radius 2 Å", "radius 2.5 Å", "radius 5 Å", "kNN-6",
         "spanning tree")


def _spanning_tree(pos: torch.Tensor) -> torch.Tensor:
    """The Euclidean minimum spanning tree of the atoms: connected with N-1 edges by
    construction, the trivial arm of ``schull.connected_sparse``."""
    from scipy.sparse.csgraph import minimum_spanning_tree

    d = torch.cdist(pos, pos).double().cpu().numpy()
    # csgraph reads a zero entry as no edge: coincident atoms get the smallest positive length
    d[d == 0] = np.finfo(np.float64).tiny
    np.fill_diagonal(d, 0.0)
    t = minimum_spanning_tree(d).tocoo()
    ei = torch.as_tensor(np.stack([t.row, t.col]), dtype=torch.long, device=pos.device)
    return torch.cat([ei, ei.flip(0)], dim=1)


def _graph(kind: str, pos: torch.Tensor) -> torch.Tensor:
    if kind == "schull":
        return schull_graph(pos).edge_index
    if kind == "official port":
        return official_port(pos)
    if kind == "kNN-6":
        return knn_graph(pos, 6)
    if kind == "spanning tree":
        return _spanning_tree(pos)
    r = float(kind.split()[1])
    return radius_graph(pos, r, max_num_neighbors=10**6)


# --- 1 and 2: structure panel -----------------------------------------------------------------

@dataclass(frozen=True)
class Panel(Setting):
    # budget: nothing trains: graph properties of fixed structures
    budget_fields: ClassVar[tuple[str, ...]] = ()
    n_smiles: int        # molecules (the first ten hold every degenerate case)
    n_conf: int          # conformers of each (ETKDGv3, seed + 1)
    n_clouds: int        # random clouds, Gaussian/ball/planar, N log-uniform in [4, 1000]
    rigid_max_n: int     # rigidity SVD only on clouds this small (cost (3N)^3)
    planar_sv: float     # non-planar: least singular value of centred coordinates >= this (Å)


@dataclass
class PanelEvidence(Evidence):
    connected_sparse: float = scalar("fraction", "SCHull: connected and E <= 3N-6")
    rigid: float = scalar("fraction", "SCHull: rigidity rank 3N-6 on non-planar structures")
    tree_connected_sparse: float = scalar(
        "fraction", "minimum spanning tree of the same atoms: connected and E <= 3N-6")
    knn_rigid: float = scalar("fraction", "kNN-6: rigidity rank 3N-6 on non-planar structures")
    n_structures: int = scalar("structures")
    n_rigid_eligible: int = scalar("structures")
    by_kind: Table | None = None
    failures: Table | None = None


_PANEL = ("RDKit conformers of fixed SMILES and random clouds, not the paper's QM9/MD17/"
          "protein structures: offline; rigidity checked only up to 300 atoms ((3N)³ SVD)",)


def _plot_panel(ctx: Context, sizes: list[int], stats: dict, rows: list[tuple]) -> None:
    """Edges per atom against N, and the disconnected and rigid fractions of each graph."""
    fig = ctx.figure("edges_per_node", figsize=(10, 4))
    ax, bx = fig.subplots(1, 2)
    for kind in ("schull", "radius 2 Å", "radius 5 Å", "kNN-6"):
        ax.scatter(sizes, stats[kind]["epn"], s=8, label=kind)
    ax.axhline(3, color="k", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("atoms N")
    ax.set_ylabel("undirected edges / N")
    ax.legend(fontsize=7)
    bx.bar(range(len(KINDS)), [1 - r[2] for r in rows])
    bx.set_xticks(range(len(KINDS)), KINDS, rotation=30, fontsize=7)
    bx.set_ylabel("fraction disconnected")
    fig.tight_layout()
    fig2 = ctx.figure("rigid_fraction")
    cx = fig2.subplots()
    cx.bar(range(len(KINDS)), [r[5] for r in rows])
    cx.set_xticks(range(len(KINDS)), KINDS, rotation=30, fontsize=7)
    cx.set_ylabel("fraction rigid (rank 3N-6), non-planar structures")
    fig2.tight_layout()


@experiment(quick=Panel(n_smiles=10, n_conf=5, n_clouds=20, rigid_max_n=300, planar_sv=0.1,
                        deviations=("smoke test: the ten degenerate molecules, 20 clouds",
                                    *_PANEL)),
            full=Panel(n_smiles=40, n_conf=5, n_clouds=100, rigid_max_n=300, planar_sv=0.1,
                       deviations=_PANEL),
            random=("conformers of the fixed SMILES", "random clouds"),
            cost=(2.2, 7.8))
def panel(setting: Panel, ctx: Context) -> PanelEvidence:
    mols = molecule_panel(setting.n_smiles, setting.n_conf, seed=ctx.seed)
    cl = clouds(setting.n_clouds, seed=ctx.seed)
    # graphs are built on the device asked for (qhull and the metrics copy to the CPU)
    items = [(lab, pos.to(ctx.device), is_cloud)
             for group, is_cloud in ((mols, False), (cl, True)) for lab, pos in group]
    stats = {k: {"ok": [], "conn": [], "epn": [], "rigid": []} for k in KINDS}
    sizes, eligible, fails = [], [], []
    for label, pos, is_cloud in items:
        n = len(pos)
        sv = float(torch.linalg.svdvals(pos - pos.mean(0))[-1])
        elig = sv >= setting.planar_sv and not (is_cloud and n > setting.rigid_max_n)
        sizes.append(n)
        eligible.append(elig)
        for kind in KINDS:
            ei = _graph(kind, pos)
            e = num_undirected_edges(ei, n)
            conn = is_connected(ei, n)
            ok = conn and (e <= 3 * n - 6 if n >= 3 else True)
            s = stats[kind]
            s["ok"].append(ok)
            s["conn"].append(conn)
            s["epn"].append(e / n)
            s["rigid"].append(is_rigid(pos, ei) if elig else None)
            if kind == "schull" and not ok:
                fails.append((label, n, e, conn))
    rows = []
    for kind in KINDS:
        s = stats[kind]
        rig = [r for r in s["rigid"] if r is not None]
        rows.append((kind, float(np.mean(s["ok"])), float(np.mean(s["conn"])),
                     float(np.mean(s["epn"])), float(np.max(s["epn"])),
                     float(np.mean(rig)) if rig else float("nan")))

    _plot_panel(ctx, sizes, stats, rows)

    return PanelEvidence(
        connected_sparse=rows[0][1], rigid=rows[0][5],
        tree_connected_sparse=rows[KINDS.index("spanning tree")][1],
        knn_rigid=rows[KINDS.index("kNN-6")][5], n_structures=len(items),
        n_rigid_eligible=int(sum(eligible)),
        by_kind=Table("graphs on the same panel",
                      ("graph", "connected & E<=3N-6", "connected", "mean E/N", "max E/N",
                       "rigid"), rows),
        failures=Table("SCHull failures", ("structure", "N", "E", "connected"),
                       fails or [("none", 0, 0, True)]))


@claim("schull.connected_sparse", experiment=panel,
       sentence="SCHull graphs are connected with at most 3N-6 edges on every structure, "
                "degenerate molecules (centroid atom, collinear, planar) included.",
       metric="fraction of the panel connected with E_undirected <= 3N-6", unit="fraction",
       paper_figure="abstract; Fig. 1 (always connected, < 3 edges per node)",
       threshold=1.0, direction=">=",
       trivial=lambda ev: ev.tree_connected_sparse,
       trivial_doc="the minimum spanning tree of the same atoms, connected with N-1 edges by "
                   "construction")
def connected_sparse(ev: PanelEvidence) -> float:
    return ev.connected_sparse


@claim("schull.rigid", experiment=panel,
       sentence="Edge lengths of the SCHull graph determine the geometry (infinitesimally "
                "rigid) on non-planar structures, at < 3 edges per node.",
       metric="fraction of non-planar panel structures with rigidity rank 3N-6", unit="fraction",
       paper_figure="abstract; rigidity of triangulated convex polyhedra (Cauchy/Gluck), §3",
       threshold=0.95, direction=">=",
       trivial=lambda ev: ev.knn_rigid,
       trivial_doc="kNN-6 graphs of the same structures")
def rigid(ev: PanelEvidence) -> float:
    return ev.rigid


# --- 3: energy learning -----------------------------------------------------------------------

@dataclass(frozen=True)
class Learn(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("epochs",)  # epochs of both networks
    n_conf: int          # aspirin conformers (MD17-like; MMFF94 labels)
    n_train: int         # the rest is the test split
    epochs: int
    force_weight: float  # loss = energy MAE + this × force MAE (official 100)
    batch: int
    lr: float            # Adam, cosine to 0
    cutoff: float        # short cutoff: long-range terms are out of the radius graph
    hidden_cha: int      # SchNetCHA width; SchNet's is matched in parameters (±5%)
    layers: int
    seeds: tuple[int, ...]
    smiles: str = ASPIRIN  # the molecule (MD17's aspirin; the pilot tries smaller ones)


CONTROL_MARGIN = 0.75  # SchNet learned: test MAE <= this x the trivial predictor's and its init's
OFFICIAL_FORCE_WEIGHT = 100.0  # official main_md17.py (--p 100): loss = energy + 100 x force MAE


@dataclass
class LearnEvidence(Evidence):
    gain: float = scalar("fraction", "1 - MAE(CHA)/MAE(SchNet), seed means")
    mae_schnet: float = scalar("kcal/mol", "test energy MAE, SchNet (radius graph only)")
    mae_cha: float = scalar("kcal/mol", "test energy MAE, SchNetCHA (radius + SCHull)")
    mae_median: float = scalar("kcal/mol", "test energy MAE of the training median")
    mae_schnet_init: float = scalar("kcal/mol", "test energy MAE, SchNet untrained (its init)")
    force_mae_schnet: float = scalar("kcal/mol/Å", "test force MAE, SchNet")
    force_mae_cha: float = scalar("kcal/mol/Å", "test force MAE, SchNetCHA")
    force_mae_schnet_init: float = scalar("kcal/mol/Å", "test force MAE, SchNet untrained")
    force_mae_zero: float = scalar("kcal/mol/Å", "test force MAE of predicting zero forces")
    force_gain: float = scalar("fraction", "1 - force MAE(CHA)/force MAE(SchNet), seed means")
    params_schnet: int = scalar("parameters")
    params_cha: int = scalar("parameters")
    per_seed: Table | None = None


def _matched_hidden(hidden_cha: int, layers: int, cutoff: float) -> int:
    target = sum(p.numel() for p in SchNetCHA(hidden_cha, layers, cutoff, 0.5).parameters())
    best = min(range(8, 4 * hidden_cha),
               key=lambda h: abs(sum(p.numel() for p in SchNetCHA(h, layers, cutoff, 1.0)
                                     .parameters()) - target))
    return best


@dataclass
class _Molecules:
    """One seed's conformers of the molecule: SCHull edges, the split and the energy scale."""

    z: torch.Tensor
    pos: torch.Tensor
    y: torch.Tensor
    forces: torch.Tensor
    hull: list
    tr: torch.Tensor
    te: torch.Tensor
    mean: float
    std: float
    mae_median: float  # test energy MAE of predicting the training median


def _molecules(setting: Learn, seed: int, device: torch.device) -> _Molecules:
    c = conformers(setting.smiles, setting.n_conf, seed=seed)
    pos, y = c.pos.float().to(device), c.energy.float().to(device)
    n_atoms = pos.shape[1]
    batch_all = torch.arange(setting.n_conf, device=device).repeat_interleave(n_atoms)
    g_all = schull_graph(pos.reshape(-1, 3), batch_all).edge_index
    owner = batch_all[g_all[0]]
    hull = [g_all[:, owner == k] - k * n_atoms for k in range(setting.n_conf)]
    split = torch.randperm(setting.n_conf, generator=torch.Generator().manual_seed(seed))
    tr, te = split[:setting.n_train].to(device), split[setting.n_train:].to(device)
    return _Molecules(c.z.to(device), pos, y, c.forces.float().to(device), hull, tr, te,
                    float(y[tr].mean()), float(y[tr].std()),
                    float((y[te] - y[tr].median()).abs().mean()))


def _energy_forces(model, d: _Molecules, idx: torch.Tensor, train: bool):
    n = d.pos.shape[1]
    p = d.pos[idx].reshape(-1, 3).requires_grad_(True)
    b = torch.arange(len(idx), device=p.device).repeat_interleave(n)
    e = torch.cat([d.hull[int(c)] + k * n for k, c in enumerate(idx)], dim=1)
    out = model(d.z.repeat(len(idx)), p, b, e)
    return out, -torch.autograd.grad(out.sum(), p, create_graph=train)[0]


class _EnergyForceStep(nn.Module):
    """Conformer indices (b,) -> energy MAE + ``force_weight`` x force MAE of ``model`` on
    them, on standardised energies (forces in units of the energy std, so the weighting is
    the official one up to a 1/std scale)."""

    def __init__(self, model: SchNetCHA, d: _Molecules, force_weight: float) -> None:
        super().__init__()
        self.model, self.d, self.force_weight = model, d, force_weight

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        d = self.d
        if len(idx) == 0:   # a DDP process with no rows of a short batch: a zero, on the graph
            return sum(p.sum() for p in self.model.parameters()) * 0.0
        out, f = _energy_forces(self.model, d, idx, True)
        return ((out - (d.y[idx] - d.mean) / d.std).abs().mean()
                + self.force_weight * (f - d.forces[idx].reshape(-1, 3) / d.std).abs().mean())


def _train(model, d: _Molecules, setting: Learn, force_weight: float, seed: int,
           **engine: Unpack[EngineOptions]) -> list[float]:
    """Adam with cosine decay on :class:`_EnergyForceStep`'s loss, shuffled batches of the
    training conformers, on the package's loop (:func:`iclr25._train.fit_minibatch`).
    ``**engine`` (:class:`iclr25._engine.EngineOptions`): under DDP each process takes its
    share of every batch (the MAEs are means over conformers, and over atoms of the same
    count). Returns each step's loss."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=setting.lr)
    steps = setting.epochs * math.ceil(len(d.tr) / setting.batch)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1))
    # y: the training energies, so a checkpoint's data fingerprint names the molecules too
    return fit_minibatch(_EnergyForceStep(model, d, force_weight), lambda loss, _: loss,
                         d.tr, d.y[d.tr], epochs=setting.epochs, batch_size=setting.batch,
                         optimizer=opt, seed=g, scheduler=sched, interval="step",
                         progress="SCHull energy/force training", **engine)


def _test_mae(model, d: _Molecules) -> tuple[float, float]:
    """Test energy MAE (kcal/mol) and force MAE (kcal/mol/Å)."""
    err, ferr = [], []
    for s in range(0, len(d.te), 100):
        idx = d.te[s:s + 100]
        out, f = _energy_forces(model, d, idx, False)
        err.append((out.detach() * d.std + d.mean - d.y[idx]).abs())
        ferr.append((f.detach() * d.std - d.forces[idx].reshape(-1, 3)).abs())
    return float(torch.cat(err).mean()), float(torch.cat(ferr).mean())


_LEARN = ("MMFF94 energies and forces of RDKit conformers, not MD17's DFT trajectory: offline",
          "SchNet 3 layers, hidden 64, cutoff 2.5 Å, batch 32, Adam 3e-3 with cosine decay "
          "(official MD17: LEFTNet-CHA, cutoff 8 Å, batch 4, 1200 epochs): CPU budget",
          "no direct force head (the official LEFTNet adds one): forces are -dE/dpos only",
          "issue 53's force-weight pilot (SchNet alone, seed 101; weight: energy / force MAE "
          "100: 1.96 / 6.00, 30: 2.00 / 6.41, 10: 2.14 / 7.51, 3: 2.33 / 8.44, 1: 2.21 / "
          "10.03; median 2.47) had an unreachable rule (<= 0.6 x the median) and its fallback "
          "took weight 1, the worst energy in its table; replaced by issue 72's pilot",
          "testbed (issue 72): rule fixed before a pilot (iclr25.schull.pilot) that trains "
          "plain SchNet ALONE on held-apart seeds 101, 102, 103 at the full setting with the "
          "official force weight 100 (main_md17.py --p 100): candidates in order aspirin, "
          "salicylic acid, uracil (21, 16, 12 atoms; MD17 molecules) x 300, 600 training "
          "conformers (aspirin 300 first); the first where on every seed SchNet's test energy "
          "MAE <= 0.75 x min(median predictor, untrained SchNet) and its force MAE <= 0.75 x "
          "min(zero forces, untrained SchNet), with mean SchNet CPU time <= 2x aspirin 300's; "
          "with none, the in-time one with the smallest worst-seed energy ratio. Pilot "
          "(seed: energy MAE / min(median, untrained), force MAE / min(zero, untrained), "
          "SchNet CPU s): aspirin 300: 101: 1.96/2.47 = 0.79, 6.00/15.1 = 0.40, 11.9 s; "
          "102: 2.00/2.42 = 0.83, 0.40, 10.5 s; 103: 1.69/2.28 = 0.74, 0.40, 12.5 s: fails "
          "(two seeds above 0.75); aspirin 600: 101: 1.09/2.63 = 0.42, 0.27, 23.2 s; 102: "
          "1.05/2.53 = 0.42, 0.25, 19.7 s; 103: 1.04/2.44 = 0.43, 0.25, 20.4 s: passes "
          "(CPU 1.81x aspirin 300's), chosen: 600 training conformers of aspirin, force "
          "weight 100; the rest not run (the pilot stops at the first pass)",
          "schull.force_mae declared with the testbed (issue 72), its threshold (>= 0: CHA's "
          "forces at least as accurate as SchNet's) fixed before any run from the paper's "
          "qualitative statement (SCHull edges improve the base GNNs on MD17 energies and "
          "forces; the table's numbers are not retrievable here)")


@experiment(quick=Learn(n_conf=140, n_train=100, epochs=3, force_weight=OFFICIAL_FORCE_WEIGHT,
                        batch=32,
                        lr=3e-3, cutoff=2.5, hidden_cha=64, layers=3, seeds=(0,),
                        deviations=("smoke test: 100 training conformers, 3 epochs, one "
                                    "seed", *_LEARN)),
            full=Learn(n_conf=700, n_train=600, epochs=15, force_weight=OFFICIAL_FORCE_WEIGHT,
                       batch=32, lr=3e-3, cutoff=2.5, hidden_cha=64, layers=3,
                       seeds=(0, 1, 2),
                       deviations=("600 training conformers (issue 72's pilot; was 300), 15 "
                                   "epochs (official MD17: 1000 and 1200): CPU budget, forces "
                                   "cost a double backward", *_LEARN)),
            random=("conformers of the molecule and their split", "initialisations and batches"),
            per_draw=("seeds",),
            cost=(5.3, 290))  # full: 2x the 300-conformer run's 143 s (pilot: 1.81x)
def energy(setting: Learn, ctx: Context) -> LearnEvidence:
    d = _molecules(setting, ctx.seed, ctx.device)
    n_atoms = d.pos.shape[1]
    h_s = _matched_hidden(setting.hidden_cha, setting.layers, setting.cutoff)
    rows = []
    for s in setting.seeds:
        out, init = {}, None
        for name, hid, rate in (("SchNet", h_s, 1.0), ("SchNetCHA", setting.hidden_cha, 0.5)):
            with seeded_init(1000 * ctx.seed + s):
                model = SchNetCHA(hid, setting.layers, setting.cutoff, rate).to(ctx.device)
            if name == "SchNet":  # the baseline's own untrained self
                init = _test_mae(model, d)
            _train(model, d, setting, setting.force_weight, 1000 * ctx.seed + s)
            out[name] = _test_mae(model, d)
        rows.append((s, out["SchNet"][0], out["SchNetCHA"][0],
                     1 - out["SchNetCHA"][0] / out["SchNet"][0], out["SchNet"][1],
                     out["SchNetCHA"][1], init[0], init[1]))

    def mean(col: int) -> float:
        return float(np.mean([r[col] for r in rows]))

    params = [sum(p.numel() for p in SchNetCHA(h, setting.layers, setting.cutoff, r).parameters())
              for h, r in ((h_s, 1.0), (setting.hidden_cha, 0.5))]
    e_r = num_undirected_edges(radius_graph(d.pos[0].cpu(), setting.cutoff), n_atoms) / n_atoms
    e_h = num_undirected_edges(d.hull[0].cpu(), n_atoms) / n_atoms
    fig = ctx.figure("mae_per_seed", figsize=(9, 3.8))
    ax, bx = fig.subplots(1, 2)
    for a, col, lab in ((ax, 1, "energy MAE (kcal/mol)"), (bx, 4, "force MAE (kcal/mol/Å)")):
        a.scatter([e_r] * len(rows), [r[col] for r in rows], label=f"SchNet {setting.cutoff} Å")
        a.scatter([e_r + e_h] * len(rows), [r[col + 1] for r in rows],
                  label="SchNetCHA (radius + hull)")
        a.set_xlabel("undirected edges per node")
        a.set_ylabel(f"test {lab}")
    ax.axhline(d.mae_median, color="k", ls="--", lw=0.8, label="median predictor")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return LearnEvidence(
        gain=1 - mean(2) / mean(1), mae_schnet=mean(1), mae_cha=mean(2),
        mae_median=d.mae_median, mae_schnet_init=mean(6),
        force_mae_schnet=mean(4), force_mae_cha=mean(5), force_mae_schnet_init=mean(7),
        force_mae_zero=float(d.forces[d.te].abs().mean()),
        force_gain=1 - mean(5) / mean(4), params_schnet=params[0], params_cha=params[1],
        per_seed=Table("test MAE per seed (energy kcal/mol, forces kcal/mol/Å)",
                       ("seed", "SchNet E", "SchNetCHA E", "gain", "SchNet F", "SchNetCHA F",
                        "untrained SchNet E", "untrained SchNet F"), rows))


@claim("schull.energy_mae", experiment=energy,
       sentence="Adding SCHull edges makes a short-cutoff SchNet more accurate on MD17-like "
                "energies (aspirin, MMFF94; energy + force training), parameter-matched.",
       metric="1 - MAE(SchNetCHA)/MAE(SchNet), test energy MAE, seed means",
       unit="fraction",
       paper_figure="MD17/QM9 tables (SchNet vs SchNetCHA); numbers not retrievable here "
                    "(checked: the paper body is not stored, only its abstract)",
       threshold=0.10, direction=">=", baseline="SchNet (radius graph only, parameter-matched)",
       control=lambda ev: ev.mae_schnet <= CONTROL_MARGIN * min(ev.mae_median,
                                                                ev.mae_schnet_init),
       control_doc=f"plain SchNet learned the energy: its test MAE is at most {CONTROL_MARGIN:g} "
                   f"x that of predicting the training median and of its own untrained self")
def energy_mae(ev: LearnEvidence) -> Comparison:
    return Comparison(ours=ev.mae_cha, baseline=ev.mae_schnet, value=ev.gain)


@claim("schull.force_mae", experiment=energy,
       sentence="Adding SCHull edges makes a short-cutoff SchNet at least as accurate on "
                "MD17-like forces (the same energy + force training), parameter-matched.",
       metric="1 - force MAE(SchNetCHA)/force MAE(SchNet), test forces, seed means",
       unit="fraction",
       paper_figure="MD17 energy and force tables (base GNN vs its CHA variant); numbers not "
                    "retrievable here: threshold 0 from the paper's statement that SCHull "
                    "edges improve the base GNNs",
       threshold=0.0, direction=">=", baseline="SchNet (radius graph only, parameter-matched)",
       control=lambda ev: ev.force_mae_schnet <= CONTROL_MARGIN * min(ev.force_mae_zero,
                                                                      ev.force_mae_schnet_init),
       control_doc=f"plain SchNet learned the forces: its test force MAE is at most "
                   f"{CONTROL_MARGIN:g} x that of predicting zero forces and of its own "
                   f"untrained self")
def force_mae(ev: LearnEvidence) -> Comparison:
    return Comparison(ours=ev.force_mae_cha, baseline=ev.force_mae_schnet, value=ev.force_gain)
