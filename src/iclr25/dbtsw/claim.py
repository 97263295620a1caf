"""Db-TSW reproduction: gradient flows at an equal projection budget (paper §6.1).

A cloud of N = 100 points starts at N(0, 0.25² I) and follows Adam on a distance to a fixed
target cloud; the metric is how fast it approaches the target, as AUC = mean over checkpoints
(every 50 steps) of log10 W2² (``ot.emd2``, squared Euclidean cost). Equal budget L = 100: SW is
POT's sliced Wasserstein with 100 directions (``ot.wasserstein_1d`` on the projections, which
is what ``ot.sliced_wasserstein_distance`` computes, batched over flows); TSW-SL is 25 trees × 4
lines with uniform splitting (δ = 0); Db-TSW is the same trees with δ = 10. p = 1, roots
N(target mean, 0.1²), fresh draws every step, one independent draw per flow.

Uninformative if every flow sat at the optimiser's noise floor (gap ~0) or if an lr were bad
for one method only. Hence the 20-D target (official ``gaussian_20d_small_v``: the transient
lasts hundreds of steps) and, at full scale, a per-method lr chosen from {0.03, 0.1, 0.3} on
seeds 0-1 by the same AUC and evaluated on seeds 2-6. The 2-D 25-Gaussians flow runs with the
same protocol on 3 seeds and is gated too (``dbtsw.flow_2d``, Db-TSW at least as close as SW).
Gradients flow through the splitting weights, as in the official code. Before issue 39 the
float32 distance to a line cancelled every digit near a line, which stalled the 2-D Db-TSW flow
near log10 W2² = -1.3 (the panel read -1.38 vs SW's -4.23); that panel was reported, not gated.

Each claim's control reads the baseline only: its flow must have moved, its last checkpoint at
least one decade of W2² below the starting cloud's (mean over eval seeds); a baseline that did
not move (a bad lr) would make any gap meaningless.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from iclr25._optional import require
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
from iclr25.dbtsw.distance import db_tsw, sample_trees
from iclr25.dbtsw.testbed import gaussian_20d, gaussians_25, log10_w2sq, start_cloud

METHODS = ("SW", "TSW-SL", "Db-TSW")


@dataclass(frozen=True)
class Flow(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("steps",)  # Adam steps per flow, every method alike
    n: int  # points per cloud (official N = 100)
    steps: int  # Adam steps per flow
    every: int  # checkpoint spacing of the AUC
    budget: int  # L: SW directions = trees x lines
    lines: int  # k lines per tree (official 4)
    delta: float  # Db-TSW splitting sharpness (paper: 10)
    lrs: tuple[float, ...]  # lr grid; one value: no selection
    select_seeds: tuple[int, ...]  # seeds that pick each method's lr (empty: no selection)
    eval_seeds: tuple[int, ...]  # seeds the claim is measured on
    eval_seeds_2d: tuple[int, ...]  # 2-D 25-Gaussians panel (claim dbtsw.flow_2d)


@dataclass
class FlowEvidence(Evidence):
    auc_sw: float = scalar("log10 W2²", "AUC of SW, 20-D")
    auc_tswsl: float = scalar("log10 W2²", "AUC of TSW-SL, 20-D")
    auc_dbtsw: float = scalar("log10 W2²", "AUC of Db-TSW, 20-D")
    auc_sw_2d: float = scalar("log10 W2²", "AUC of SW, 2-D")
    auc_tswsl_2d: float = scalar("log10 W2²", "AUC of TSW-SL, 2-D, reported")
    auc_dbtsw_2d: float = scalar("log10 W2²", "AUC of Db-TSW, 2-D")
    drop_sw: float = scalar("decades", "SW: start minus last-checkpoint log10 W2², 20-D")
    drop_tswsl: float = scalar("decades", "TSW-SL: start minus last checkpoint, 20-D")
    drop_sw_2d: float = scalar("decades", "SW: start minus last checkpoint, 2-D")
    auc: Table | None = None
    per_seed: Table | None = None
    selection: Table | None = None


def _argsort0(x: torch.Tensor) -> torch.Tensor:
    """``torch.sort(x, dim=0).indices``, 4-5x faster on CPU: NumPy's sort of each column, which
    is the same permutation wherever a column has no tied values (the order is then unique);
    columns with ties are sorted by torch itself, so ties fall exactly as torch puts them."""
    if x.device.type != "cpu":
        return torch.sort(x, dim=0).indices
    a = x.detach().T.contiguous().numpy()
    order = np.argsort(a, axis=-1)
    s = np.take_along_axis(a, order, -1)
    tied = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(-1))
    if len(tied):
        order[tied] = torch.sort(x.detach()[:, tied], dim=0).indices.T.numpy()
    return torch.from_numpy(order.T.copy())


def _wasserstein_1d(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """POT's ``ot.wasserstein_1d(u, v, p=1)`` (uniform weights, (n, C) and (m, C) columns),
    bit for bit in value and gradient (a test checks): the same operations in the same
    layout, with two shortcuts that do not change a bit. The sort uses ``_argsort0``, and
    the cumulative weights, their merged sort and the quantile indices, identical in every
    column when weights are uniform, are computed on one column and broadcast."""
    n, m, dt, dev = u.shape[0], v.shape[0], u.dtype, u.device
    u = torch.gather(u, 0, _argsort0(u))
    v = torch.gather(v, 0, _argsort0(v))
    ucw = torch.cumsum(torch.full((n, 1), 1.0 / n, dtype=dt, device=dev), 0)
    vcw = torch.cumsum(torch.full((m, 1), 1.0 / m, dtype=dt, device=dev), 0)
    qs = torch.sort(torch.cat((ucw, vcw), 0), dim=0).values
    iu = torch.searchsorted(ucw.T.contiguous(), qs.T.contiguous()).T.clamp(0, n - 1)
    iv = torch.searchsorted(vcw.T.contiguous(), qs.T.contiguous()).T.clamp(0, m - 1)
    diff = torch.abs(torch.gather(u, 0, iu.expand(-1, u.shape[1]))
                     - torch.gather(v, 0, iv.expand(-1, v.shape[1])))
    qs = torch.nn.functional.pad(qs, (0, 0, 1, 0))
    return torch.sum((qs[1:] - qs[:-1]) * diff, 0)


def _sw_loss(Y: torch.Tensor, X: torch.Tensor, L: int, gen: torch.Generator) -> torch.Tensor:
    """Sum over flows of POT's SW_1 with L fresh directions each (batched as columns)."""
    B, _, d = Y.shape
    P = torch.randn(B, d, L, generator=gen, dtype=Y.dtype, device=Y.device)
    P = P / P.norm(dim=1, keepdim=True)
    u = (Y @ P).permute(1, 0, 2).reshape(Y.shape[1], B * L)
    v = (X @ P).permute(1, 0, 2).reshape(X.shape[1], B * L)
    return _wasserstein_1d(u, v).reshape(B, L).mean(-1).sum()


def _flows(method: str, X: torch.Tensor, lrs: list[float], starts: list[int],
           setting: Flow, seed: int) -> torch.Tensor:
    """Run B flows towards targets X (B, n, d) from the start clouds of ``starts`` with
    per-flow lr (Adam, torch's defaults, written out so one tensor holds every flow);
    returns (B, checkpoints) log10 W2²."""
    B, n, d = X.shape
    gen = torch.Generator(device=X.device).manual_seed(seed)
    Y = torch.stack([start_cloud(n, d, s, dtype=X.dtype, device=X.device) for s in starts])
    Y.requires_grad_()
    lr = torch.tensor(lrs, dtype=X.dtype, device=X.device).view(B, 1, 1)
    m1, m2 = torch.zeros_like(Y), torch.zeros_like(Y)
    b1, b2, eps = 0.9, 0.999, 1e-8
    k = setting.lines
    T = setting.budget // k
    mean = X.mean(1)  # roots ~ N(target mean, 0.1²)
    curves = []
    for step in range(1, setting.steps + 1):
        if method == "SW":
            loss = _sw_loss(Y, X, setting.budget, gen)
        else:
            theta = sample_trees(B * T, k, d, mean=0.0, std=0.0, seed=gen, device=X.device,
                                 dtype=X.dtype)[0].unflatten(0, (B, T))
            roots = mean[:, None, :] + 0.1 * torch.randn(B, T, d, generator=gen,
                                                         dtype=X.dtype, device=X.device)
            delta = 0.0 if method == "TSW-SL" else setting.delta
            loss = db_tsw(Y, X, trees=(theta, roots), delta=delta, p=1).sum()
        (g,) = torch.autograd.grad(loss, Y)
        with torch.no_grad():
            m1.mul_(b1).add_(g, alpha=1 - b1)
            m2.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (m2 / (1 - b2 ** step)).sqrt_().add_(eps)
            Y.sub_(lr * (m1 / (1 - b1 ** step)) / denom)
        if step % setting.every == 0:
            curves.append([log10_w2sq(Y[i], X[i]) for i in range(B)])
    return torch.tensor(curves).T  # (B, checkpoints)


def _panel(panel: tuple[Callable, str, tuple[int, ...]], setting: Flow, ctx: Context,
           ax, tables) -> tuple[dict, dict]:
    """Select lrs (if asked), run the eval seeds; return ({method: AUC}, {method: drop}), the
    drop being the start cloud's log10 W2² minus the last checkpoint's (mean over seeds).
    ``panel`` is (target sampler, its name, the eval seeds)."""
    target, dim_name, eval_seeds = panel
    dev = ctx.device
    seeds = [s + ctx.seed for s in eval_seeds]
    start = sum(log10_w2sq(start_cloud(setting.n, target(setting.n, s).shape[1], s),
                           target(setting.n, s)) for s in seeds) / len(seeds)
    aucs, drops, curves = {}, {}, {}
    for mi, method in enumerate(METHODS):
        lr = setting.lrs[0]
        if len(setting.lrs) > 1 and setting.select_seeds:
            sel = [s + ctx.seed for s in setting.select_seeds]
            X = torch.stack([target(setting.n, s, device=dev) for _ in setting.lrs for s in sel])
            lrs = [lr for lr in setting.lrs for _ in sel]
            starts = [s for _ in setting.lrs for s in sel]
            c = _flows(method, X, lrs, starts, setting, seed=7919 * (mi + 1) + ctx.seed)
            per_lr = c.mean(1).view(len(setting.lrs), len(sel)).mean(1)
            lr = setting.lrs[int(per_lr.argmin())]
            tables["selection"] += [(dim_name, method, float(v), float(a))
                                    for v, a in zip(setting.lrs, per_lr, strict=True)]
        X = torch.stack([target(setting.n, s, device=dev) for s in seeds])
        c = _flows(method, X, [lr] * len(seeds), seeds, setting,
                   seed=104729 * (mi + 1) + ctx.seed)
        curves[method] = c
        aucs[method] = float(c.mean())
        drops[method] = start - float(c[:, -1].mean())
        tables["auc"].append((dim_name, method, lr, aucs[method],
                              float(c.mean(1).std()) if len(seeds) > 1 else 0.0))
        tables["per_seed"] += [(dim_name, method, s, float(c[i].mean()), float(c[i, -1]))
                               for i, s in enumerate(seeds)]
    steps = [setting.every * (i + 1) for i in range(curves[METHODS[0]].shape[1])]
    for method, c in curves.items():
        mu = c.mean(0)
        line, = ax.plot(steps, mu.tolist(), label=method)
        if c.shape[0] > 1:
            ax.fill_between(steps, c.min(0).values.tolist(), c.max(0).values.tolist(),
                            color=line.get_color(), alpha=0.2)
    ax.set_xlabel("step")
    ax.set_ylabel("log10 W2²")
    ax.set_title(f"{dim_name} (seeds {seeds[0]}-{seeds[-1]}, band: min-max)")
    ax.legend()
    return aucs, drops


@experiment(
    # quick: the issue's <= 20 s setting: lr 0.1 for all, one seed, 300 steps, both panels
    quick=Flow(n=100, steps=300, every=50, budget=100, lines=4, delta=10.0, lrs=(0.1,),
               select_seeds=(), eval_seeds=(2,), eval_seeds_2d=(2,),
               deviations=("smoke test: one eval seed per panel, 300 steps, lr 0.1 for every "
                           "method (no lr selection)",
                           "p = 1 (the paper's definition); the official flow scripts use p = 2",
                           "metric: AUC of log10 W2² over checkpoints every 50 steps, not the "
                           "paper's W2 at fixed iterations")),
    # full: lr per method from {0.03, 0.1, 0.3} on seeds 0-1, evaluated on seeds 2-6
    full=Flow(n=100, steps=1000, every=50, budget=100, lines=4, delta=10.0,
              lrs=(0.03, 0.1, 0.3), select_seeds=(0, 1), eval_seeds=(2, 3, 4, 5, 6),
              eval_seeds_2d=(2, 3, 4),
              deviations=("1000 Adam steps per flow and 5 (20-D) / 3 (2-D) eval seeds: CPU "
                          "budget",
                          "lr chosen per method from {0.03, 0.1, 0.3} on seeds 0-1 (the paper "
                          "reports each method at its own lr)",
                          "p = 1 (the paper's definition); the official flow scripts use p = 2",
                          "metric: AUC of log10 W2² over checkpoints every 50 steps, not the "
                          "paper's W2 at fixed iterations")),
    cost=(8.3, 47),
)
def gradient_flow(setting: Flow, ctx: Context) -> FlowEvidence:
    require("ot", "ot")  # the W2 checkpoints (ot.emd2)
    fig = ctx.figure("flows", figsize=(11 if setting.eval_seeds_2d else 6, 4))
    axes = fig.subplots(1, 2 if setting.eval_seeds_2d else 1, squeeze=False)[0]
    tables = {"auc": [], "per_seed": [], "selection": []}
    a20, d20 = _panel((gaussian_20d, "20-D Gaussian", setting.eval_seeds), setting, ctx,
                      axes[0], tables)
    nan = {m: float("nan") for m in METHODS}
    a2, d2 = (_panel((gaussians_25, "2-D 25 Gaussians", setting.eval_seeds_2d), setting,
                     ctx, axes[1], tables) if setting.eval_seeds_2d else (nan, nan))
    return FlowEvidence(
        auc_sw=a20["SW"], auc_tswsl=a20["TSW-SL"], auc_dbtsw=a20["Db-TSW"],
        auc_sw_2d=a2["SW"], auc_tswsl_2d=a2["TSW-SL"], auc_dbtsw_2d=a2["Db-TSW"],
        drop_sw=d20["SW"], drop_tswsl=d20["TSW-SL"], drop_sw_2d=d2["SW"],
        auc=Table("AUC = mean log10 W2² over checkpoints (lower is closer)",
                  ("target", "method", "lr", "AUC", "std over seeds"), tables["auc"]),
        per_seed=Table("per eval seed", ("target", "method", "seed", "AUC", "final log10 W2²"),
                       tables["per_seed"]),
        selection=Table("lr selection (mean AUC on the selection seeds)",
                        ("target", "method", "lr", "AUC"), tables["selection"] or
                        [("-", "-", setting.lrs[0], float("nan"))]),
    )


_MOVED = 1.0  # decades of W2² the baseline's flow must gain over its start (control)
_PAPER_NOTE = ("checked once: the stored paper text and official README give no table values")


def _auc_gap(baseline: str) -> str:
    """The metric of a claim against ``baseline``."""
    return f"AUC({baseline}) - AUC(Db-TSW), AUC = mean log10 W2² over checkpoints"


def _moved(flow: str) -> str:
    """The control sentence: ``flow`` (the baseline's) moved towards its target."""
    return (f"{flow} flow moved: its last checkpoint is at least one decade of W2² below the "
            "starting cloud's.")


@claim("dbtsw.flow_vs_sw", experiment=gradient_flow,
       sentence="At equal projection budget (L = 100), a Db-TSW gradient flow approaches the "
                "20-D target faster than an SW flow.",
       metric=_auc_gap("SW"), unit="log10 W2²",
       paper_figure="unverified: §6.1 gradient-flow figures/tables (Db-TSW below SW at every "
                    f"iteration); {_PAPER_NOTE}",
       threshold=0.2, direction=">=", baseline="SW",
       control=lambda ev: ev.drop_sw >= _MOVED,
       control_doc=_moved("SW's 20-D"))
def flow_vs_sw(ev: FlowEvidence) -> Comparison:
    return Comparison(ours=ev.auc_dbtsw, baseline=ev.auc_sw, value=ev.auc_sw - ev.auc_dbtsw)


@claim("dbtsw.splitting_vs_tswsl", experiment=gradient_flow,
       sentence="Distance-based splitting beats uniform splitting (TSW-SL) on the same trees "
                "in a 20-D gradient flow.",
       metric=_auc_gap("TSW-SL"), unit="log10 W2²",
       paper_figure="unverified: §6.1 gradient-flow figures/tables (Db-TSW below TSW-SL); "
                    f"{_PAPER_NOTE}",
       threshold=0.2, direction=">=", baseline="TSW-SL",
       control=lambda ev: ev.drop_tswsl >= _MOVED,
       control_doc=_moved("TSW-SL's 20-D"))
def splitting_vs_tswsl(ev: FlowEvidence) -> Comparison:
    return Comparison(ours=ev.auc_dbtsw, baseline=ev.auc_tswsl,
                      value=ev.auc_tswsl - ev.auc_dbtsw)


@claim("dbtsw.flow_2d", experiment=gradient_flow,
       sentence="In 2-D (25 Gaussians), a Db-TSW gradient flow approaches the target at least "
                "as fast as an SW flow at equal budget.",
       metric=_auc_gap("SW"), unit="log10 W2²",
       paper_figure="unverified: §6.1 25-Gaussians gradient flow (Db-TSW below SW); "
                    f"{_PAPER_NOTE}",
       threshold=0.0, direction=">=", baseline="SW",
       control=lambda ev: ev.drop_sw_2d >= _MOVED,
       control_doc=_moved("SW's 2-D"))
def flow_2d(ev: FlowEvidence) -> Comparison:
    return Comparison(ours=ev.auc_dbtsw_2d, baseline=ev.auc_sw_2d,
                      value=ev.auc_sw_2d - ev.auc_dbtsw_2d)
