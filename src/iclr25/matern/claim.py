"""Matérn's claims at laptop scale: beats the arc-cosine kernel, and h tunes detail.

Same data for every kernel: area-uniform oriented samples of a bumpy sphere
(r = 0.3 + 0.06 sin 6θ cos 6φ), the non-learned Neural-Splines protocol (x ± 0.005 n with
targets ±0.005, reg 1e-7, exact Cholesky). IoU is measured on uniform points in the
[-0.5, 0.5]³ box plus points at N(0, 0.02²) from the true surface. A smooth shape (every
kernel >= 0.993 IoU on a torus) or uniform test points alone (easy far points dominate)
would not separate the kernels: hence bumps of 20 % of the radius and near-surface points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch

from iclr25.claims import Comparison, Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.matern.metrics import chamfer_l1, iou
from iclr25.matern.shapes import make_shape
from iclr25.matern.surface import KernelSurface

NUS = (0.5, 1.5, 2.5, math.inf)
FRAC = {0.5: "1/2", 1.5: "3/2", 2.5: "5/2"}
CLAIM_NU, CLAIM_H = 1.5, 0.5          # claim 1: Matérn 3/2, h = 0.5
TUNE_NU, TUNE_SMALL, TUNE_LARGE = 0.5, 0.1, 2.0


@dataclass(frozen=True)
class Bumpy(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ()  # nothing trains: every fit is closed-form
    sizes: tuple[int, ...]        # oriented points per cloud (the paper uses 1000 per shape)
    seeds: tuple[int, ...]        # added to the run's seed
    n_uniform: int                # IoU test points uniform in the box
    n_near: int                   # IoU test points at N(0, near_std²) from the surface
    near_std: float
    sweep_nu: tuple[float, ...]   # smoothness values of the IoU-vs-h figure
    sweep_h: tuple[float, ...]    # bandwidths of the IoU-vs-h figure (smallest size only)
    reg: float
    offset: float
    chamfer_res: int              # marching-cubes grid for Chamfer-L1 (details only)


@dataclass
class BumpyEvidence(Evidence):
    beats_arccos: float = scalar("IoU", "mean IoU(Matérn 3/2, h=0.5) - mean IoU(arc-cosine)")
    tunable: float = scalar("IoU", "IoU(Matérn 1/2, h=0.1) - IoU(Matérn 1/2, h=2), smallest n")
    iou_matern: float = scalar("IoU", "mean over sizes and seeds")
    iou_arccos: float = scalar("IoU", "mean over sizes and seeds")
    iou_small_h: float = scalar("IoU", "Matérn 1/2, h=0.1, smallest n, seed mean")
    iou_large_h: float = scalar("IoU", "Matérn 1/2, h=2.0, smallest n, seed mean")
    per_run: Table | None = None
    sweep: Table | None = None
    chamfer: Table | None = None


def _test_points(n_uniform: int, n_near: int, std: float, seed: int):
    g = torch.Generator().manual_seed(10_000 + seed)
    uni = torch.rand(n_uniform, 3, generator=g, dtype=torch.float64) - 0.5
    surf, _, inside = make_shape("bumpy_sphere", n_near, seed=20_000 + seed)
    near = surf + std * torch.randn(n_near, 3, generator=g, dtype=torch.float64)
    Q = torch.cat([uni, near])
    return Q, inside(Q)


def _label(kernel: str, nu: float | None = None, h: float | None = None) -> str:
    if kernel == "arccos":
        return "arc-cosine"
    name = "Gaussian" if nu == math.inf else f"Matérn {FRAC[nu]}"
    return f"{name}, h={h:g}"


def _score(data: tuple, kernel: str, nu: float = 1.5,
           h: float = 0.5) -> tuple[float, KernelSurface]:
    setting, pts, nrm, Q, occ = data
    m = KernelSurface(kernel=kernel, nu=nu, length_scale=h, reg=setting.reg,
                      offset=setting.offset).fit(pts, nrm)
    return iou(m.predict(Q).cpu(), occ), m


_DEVIATIONS = (
    "a synthetic bumpy sphere with an exact inside test stands in for ShapeNet and SRB (not "
    "bundled offline); IoU is scored on sampled test points, not on extracted meshes",
)


@experiment(
    quick=Bumpy(sizes=(300,), seeds=(0,), n_uniform=12_000, n_near=8_000, near_std=0.02,
                sweep_nu=(0.5, 1.5), sweep_h=(0.1, 0.5, 2.0), reg=1e-7, offset=0.005,
                chamfer_res=32,
                deviations=(*_DEVIATIONS, "smoke test: 300 points, 1 seed, 20,000 test "
                            "points, 2 smoothness values and 3 bandwidths")),
    full=Bumpy(sizes=(300, 1000), seeds=(0, 1, 2), n_uniform=30_000, n_near=20_000,
               near_std=0.02, sweep_nu=NUS, sweep_h=(0.05, 0.1, 0.2, 0.5, 1.0, 2.0), reg=1e-7,
               offset=0.005, chamfer_res=64, deviations=_DEVIATIONS),
    random=("the point clouds sampled on the shape", "test points"),
    per_draw=("seeds",),
    cost=(22, 46),
)
def bumpy(setting: Bumpy, ctx: Context) -> BumpyEvidence:
    small = min(setting.sizes)
    runs = _Runs()
    for n in setting.sizes:
        for s in setting.seeds:
            _measure_cloud(setting, ctx.device, n, ctx.seed + s, s == setting.seeds[0], runs)
    evidence = _evidence(runs, small)
    _iou_vs_h_figure(ctx, setting, runs.sweep, small)
    _field_slices_figure(ctx, runs.fields)
    return evidence


@dataclass
class _Runs:
    """What the clouds give: IoU rows, the smallest size's (nu, h) sweep, Chamfer rows and the
    fitted models whose fields are drawn."""
    rows: list = field(default_factory=list)
    sweep: dict = field(default_factory=dict)
    chamfer: list = field(default_factory=list)
    fields: dict = field(default_factory=dict)


def _measure_cloud(setting: Bumpy, dev: torch.device, n: int, seed: int, first: bool,
                   runs: _Runs) -> None:
    """Both arms on one cloud; at the smallest size also the sweep, and on its first seed the
    Chamfer distances and the drawn fields."""
    pts, nrm, _ = make_shape("bumpy_sphere", n, seed=seed, device=dev)
    Q, occ = _test_points(setting.n_uniform, setting.n_near, setting.near_std, seed)
    data = (setting, pts, nrm, Q.to(dev), occ)
    models = {"arccos": _score(data, "arccos"),
              "claim": _score(data, "matern", CLAIM_NU, CLAIM_H)}
    row = [n, seed, models["arccos"][0], models["claim"][0]]
    if n == min(setting.sizes):
        row += _sweep(setting, data, models, runs.sweep)
        if first:
            _chamfer_and_fields(setting, data, n, seed, models, runs)
    else:
        row += [float("nan"), float("nan")]
    runs.rows.append(tuple(row))


def _sweep(setting: Bumpy, data: tuple, models: dict, sweep: dict) -> list[float]:
    """Add this cloud's IoU at every (nu, h) of the figure; return the tuning pair's IoUs."""
    for nu in setting.sweep_nu:
        for h in setting.sweep_h:
            key = (nu, h)
            val = (models["claim"][0] if key == (CLAIM_NU, CLAIM_H)
                   else _score(data, "matern", nu, h)[0])
            sweep.setdefault(key, []).append(val)
    sweep.setdefault(("arccos", 0.0), []).append(models["arccos"][0])
    return [sweep[(TUNE_NU, TUNE_SMALL)][-1], sweep[(TUNE_NU, TUNE_LARGE)][-1]]


def _chamfer_and_fields(setting: Bumpy, data: tuple, n: int, seed: int, models: dict,
                        runs: _Runs) -> None:
    """Chamfer-L1 of both arms' meshes (float64 grid) and the three fields to draw.

    The meshes are marching cubes' own (``weld=False``): the table predates the weld, whose
    merges (within 1e-4 of a grid step) would move the vertex means in their last digits."""
    surf = make_shape("bumpy_sphere", 20_000, seed=30_000 + seed)[0]
    claim_label = _label("matern", CLAIM_NU, CLAIM_H)
    for label, m in (("arc-cosine", models["arccos"][1]), (claim_label, models["claim"][1])):
        v, _ = m.extract_mesh(setting.chamfer_res, precision="double", weld=False)
        runs.chamfer.append((label, n, seed, setting.chamfer_res, chamfer_l1(v.cpu(), surf)))
    runs.fields = {"arc-cosine": models["arccos"][1], claim_label: models["claim"][1],
                   "Gaussian, h=0.1": _score(data, "matern", math.inf, 0.1)[1]}


def _evidence(runs: _Runs, small: int) -> BumpyEvidence:
    """The claims' means and the three tables."""
    arr = np.array([r[:4] for r in runs.rows], dtype=float)
    iou_arc, iou_mat = float(arr[:, 2].mean()), float(arr[:, 3].mean())
    small_h = float(np.mean(runs.sweep[(TUNE_NU, TUNE_SMALL)]))
    large_h = float(np.mean(runs.sweep[(TUNE_NU, TUNE_LARGE)]))
    return BumpyEvidence(
        beats_arccos=iou_mat - iou_arc, tunable=small_h - large_h, iou_matern=iou_mat,
        iou_arccos=iou_arc, iou_small_h=small_h, iou_large_h=large_h,
        per_run=Table("IoU per run", ("n", "seed", "arc-cosine", "Matérn 3/2 h=0.5",
                                      "Matérn 1/2 h=0.1", "Matérn 1/2 h=2"), runs.rows),
        sweep=Table(f"IoU vs h, {small} points, seed mean", ("kernel", "h", "IoU"),
                    [("arc-cosine", "-", float(np.mean(v))) if k[0] == "arccos"
                     else (_label("matern", k[0], k[1]), k[1], float(np.mean(v)))
                     for k, v in runs.sweep.items()]),
        chamfer=Table("Chamfer-L1 of the marching-cubes mesh vertices to 20k true samples",
                      ("kernel", "n", "seed", "grid", "Chamfer-L1"), runs.chamfer),
    )


def _iou_vs_h_figure(ctx: Context, setting: Bumpy, sweep: dict, small: int) -> None:
    """IoU against bandwidth per smoothness, the arc-cosine level dashed."""
    fig = ctx.figure("iou_vs_h")
    ax = fig.subplots()
    hs = list(setting.sweep_h)
    for nu in setting.sweep_nu:
        ax.plot(hs, [np.mean(sweep[(nu, h)]) for h in hs], "o-",
                label="Gaussian" if nu == math.inf else f"Matérn ν={FRAC[nu]}")
    ax.axhline(np.mean(sweep[("arccos", 0.0)]), color="k", ls="--", label="arc-cosine")
    ax.set_xscale("log")
    ax.set_xlabel("bandwidth h (normalised units)")
    ax.set_ylabel(f"IoU, bumpy sphere, {small} points")
    ax.legend(fontsize=7)
    fig.tight_layout()


def _field_slices_figure(ctx: Context, fields: dict) -> None:
    """Each drawn model's f on the plane x = 0, its zero set against the true surface."""
    fig2 = ctx.figure("field_slices", figsize=(12, 4))
    axes = fig2.subplots(1, 3)
    ax1 = torch.linspace(-0.5, 0.5, 160, dtype=torch.float64)
    gx, gy = torch.meshgrid(ax1, ax1, indexing="xy")
    # the x = 0 plane crosses the bumps (the equator z = 0 has none: sin 6θ = 0 there)
    plane = torch.stack([torch.zeros(gx.numel(), dtype=torch.float64), gx.reshape(-1),
                         gy.reshape(-1)], 1)
    _, _, inside = make_shape("bumpy_sphere", 1, seed=0)
    truth = inside(plane).reshape(gx.shape).double().numpy()
    for a, (label, m) in zip(axes, fields.items(), strict=True):
        f = m.decision_function(plane.to(ctx.device)).cpu().reshape(gx.shape).numpy()
        lim = float(np.abs(f).max()) or 1.0
        im = a.imshow(f, extent=(-0.5, 0.5, -0.5, 0.5), origin="lower", cmap="RdBu_r",
                      vmin=-lim, vmax=lim)
        a.contour(gx.numpy(), gy.numpy(), f, levels=[0.0], colors="k", linewidths=1)
        a.contour(gx.numpy(), gy.numpy(), truth, levels=[0.5], colors="lime",
                  linewidths=1, linestyles="--")
        a.set_title(f"{label}, plane x=0 (black: f=0, green: truth)", fontsize=8)
        fig2.colorbar(im, ax=a, fraction=0.046)
    fig2.tight_layout()


@claim("matern.beats_arccos", experiment=bumpy,
       sentence="Matérn kernels reconstruct surfaces more accurately than the arc-cosine "
                "kernel of Neural Splines.",
       metric="mean IoU(Matérn 3/2, h=0.5) - mean IoU(arc-cosine), bumpy sphere, over sizes "
              "and seeds, same points", unit="IoU",
       paper_figure="unverified: ShapeNet / SRB comparison with Neural Splines, NKF, SPSR (Table 1 "
                    "per the OpenReview reviews); numbers not read offline",
       baseline="arc-cosine kernel (Neural Splines)", threshold=0.005, direction=">=")
def beats_arccos(ev: BumpyEvidence) -> Comparison:
    return Comparison(ours=ev.iou_matern, baseline=ev.iou_arccos, value=ev.beats_arccos)


@claim("matern.tunable", experiment=bumpy,
       sentence="A smaller bandwidth recovers finer detail.",
       metric="IoU(Matérn 1/2, h=0.1) - IoU(Matérn 1/2, h=2.0), bumpy sphere, smallest size, "
              "seed mean", unit="IoU",
       paper_figure="unverified: bandwidth analysis in §4.1 (error bound in h and ν, threshold h*, "
                    "Eq. 13, per the OpenReview reviews); no number read",
       baseline="Matérn 1/2, h=2.0", threshold=0.01, direction=">=")
def tunable(ev: BumpyEvidence) -> Comparison:
    return Comparison(ours=ev.iou_small_h, baseline=ev.iou_large_h, value=ev.tunable)
