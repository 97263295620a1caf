"""Reproduction: uplink bits to reach ‖y − x*‖ ≤ tol on logistic regression (Condat et al.).

Data: ``load_breast_cancer`` standardised (569 × 30), n = 10 clients split by sorted label
(heterogeneous: most clients hold one class), α set so that κ = L/μ_f = 10³; x* by L-BFGS-B
plus Newton polish. Every method uses its theorem's parameters and rand-1 where it compresses
(bits counted as the paper: 32-bit values plus ⌈log2 d⌉-bit indices). Baselines stop at 3×
LoCoDL's bits, so a ratio against a baseline that did not get there is a bound (≤ 1/3).
Uninformative setting avoided: where μ does not bind (the notes' synthetic config 1, curvature
far above μ) LoCoDL, which sets p from the nominal κ, loses to DIANA; breast cancer's
covariance (condition number ≈ 10⁵) makes μ bind, the regime the paper's theory is about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from iclr25.claims import Comparison, Context, Evidence, Setting, Table, claim, experiment, scalar


@dataclass(frozen=True)
class Bits(Setting):
    # budget: every algorithm runs to the same tolerance: the figure is its cost
    budget_fields: ClassVar[tuple[str, ...]] = ()
    n_clients: int              # the 10 clients, split by sorted label
    kappa: float                # 10³: μ binds on breast cancer
    tol: float                  # stop at ‖y − x*‖ ≤ tol
    seeds: tuple[int, ...]      # coin and compressor streams
    cap: float                  # baselines stop at cap × LoCoDL's bits
    adiana_js: tuple[int, ...]  # ADIANA's step η·4^j, j in this range (tuned baseline)


@dataclass
class BitsEvidence(Evidence):
    ratio_vs_best: float = scalar("× best of GD/Scaffnew/DIANA",
                                  "LoCoDL bits / min(GD, Scaffnew, DIANA bits), seed mean")
    ratio_vs_adiana: float = scalar("× tuned ADIANA", "LoCoDL bits / best-step ADIANA bits, "
                                    "seed mean")
    locodl_kbits: float = scalar("kbit", "LoCoDL uplink bits per client, seed mean")
    best_kbits: float = scalar("kbit", "bits of the best of GD/Scaffnew/DIANA, seed mean "
                               "(capped runs count the cap)")
    adiana_kbits: float = scalar("kbit", "bits of ADIANA at its best step, seed mean")
    per_seed: Table | None = None
    adiana_steps: Table | None = None


def _bits(run, cap_bits: float) -> float:
    """Bits to tolerance, or the cap when the run stopped without reaching it."""
    return run.uplink_bits if run.converged else max(cap_bits, run.uplink_bits)


_DEVIATIONS = (
    "breast cancer (569 × 30) split over 10 clients stands in for the paper's LibSVM data "
    "sets (not bundled offline)",
    "baselines stop at 3× LoCoDL's bits, so a ratio against a capped baseline is a bound",
)


def _adiana_sweep(f, js: tuple[int, ...], eta0: float, seed: int, cap: float,
                  step_rows: list, kw: dict) -> tuple[float, int | None, object]:
    """ADIANA rand-1 at each step η0·4^j: the fewest bits to tolerance (inf when none got
    there), its j and its run; one row per step appended to step_rows."""
    from iclr25.locodl.algorithms import adiana

    best_adiana, best_j, best_run = math.inf, None, None
    for j in sorted(js, reverse=True):  # large steps first: cheap caps
        r = adiana(f, "rand-1", gamma=eta0 * 4.0**j, seed=seed,
                   max_bits=min(cap, best_adiana), **kw)
        b = r.uplink_bits if r.converged else math.inf
        step_rows.append((seed, j, eta0 * 4.0**j, r.converged, r.uplink_bits))
        if b < best_adiana:
            best_adiana, best_j, best_run = b, j, r
    return best_adiana, best_j, best_run


def _plot_error_vs_bits(setting: Bits, ctx: Context, curves: dict) -> None:
    """‖y − x*‖ against uplink bits, one line per run of the first seed."""
    fig = ctx.figure("error_vs_bits")
    ax = fig.subplots()
    for name, r in curves.items():
        h = r.history.cpu().numpy()
        ax.plot(np.maximum(h[:, 1], 1), h[:, 2], label=name, lw=1)
    ax.axhline(setting.tol, color="k", ls=":", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("uplink bits per client")
    ax.set_ylabel("‖y − x*‖")
    ax.set_title(f"breast cancer, n={setting.n_clients}, κ={setting.kappa:g}, seed {ctx.seed}")
    ax.legend(fontsize=7)


def _plot_bits_to_tolerance(setting: Bits, ctx: Context, rows: list, ours: list) -> None:
    """Bars of each method's bits to tolerance (seed mean), the baselines' cap dotted."""
    fig = ctx.figure("bits_to_tolerance")
    ax = fig.subplots()
    names = ("LoCoDL", "GD", "Scaffnew", "DIANA", "ADIANA thm", "ADIANA tuned")
    means = [float(np.mean([r[i] for r in rows])) for i in range(1, 7)]
    ax.bar(names, means, color=["C0"] + ["C7"] * 5)
    ax.axhline(setting.cap * float(np.mean(ours)), color="k", ls=":", lw=0.8,
               label=f"cap ({setting.cap:g}× LoCoDL)")
    ax.set_yscale("log")
    ax.set_ylabel(f"uplink bits per client to ‖y − x*‖ ≤ {setting.tol:g}")
    ax.tick_params(axis="x", labelrotation=30)
    ax.legend()


@experiment(
    quick=Bits(n_clients=10, kappa=1e3, tol=1e-4, seeds=(0,), cap=3.0,
               adiana_js=(0, 1, 2, 3, 4, 5, 6, 7, 8),
               deviations=(*_DEVIATIONS, "smoke test: tolerance 1e-4, 1 seed")),
    full=Bits(n_clients=10, kappa=1e3, tol=1e-6, seeds=(0, 1, 2), cap=3.0,
              adiana_js=(0, 1, 2, 3, 4, 5, 6, 7, 8), deviations=_DEVIATIONS),
    cost=(11, 45),
)
def bits(setting: Bits, ctx: Context) -> BitsEvidence:
    from iclr25.locodl.algorithms import adiana, adiana_params, diana, gd, locodl, scaffnew
    from iclr25.locodl.testbed import breast_cancer

    f = breast_cancer(setting.n_clients, setting.kappa, device=ctx.device)
    x_star = f.solve()
    kw = dict(x_star=x_star, tol=setting.tol, max_iter=10**6)
    eta0 = adiana_params(f.L + f.mu, 2 * f.mu, f.d - 1.0, f.n_clients)["eta"]
    rows, step_rows, r_best, r_adiana, ours, best_bits, adiana_bits = ([] for _ in range(7))
    curves = {}
    for s in setting.seeds:
        seed = s + ctx.seed
        lo = locodl(f, "rand-1", seed=seed, **kw)
        if not lo.converged:
            raise RuntimeError(f"LoCoDL did not reach tol={setting.tol} (seed {seed})")
        B = lo.uplink_bits
        cap = setting.cap * B
        runs = {"LoCoDL rand-1": lo,
                "GD": gd(f, seed=seed, max_bits=cap, **kw),
                "Scaffnew": scaffnew(f, seed=seed, max_bits=cap, **kw),
                "DIANA rand-1": diana(f, "rand-1", seed=seed, max_bits=cap, **kw),
                "ADIANA rand-1 (theorem)": adiana(f, "rand-1", seed=seed, max_bits=cap, **kw)}
        best_adiana, best_j, best_run = _adiana_sweep(f, setting.adiana_js, eta0, seed, cap,
                                                      step_rows, kw)
        if best_run is None:
            best_adiana = cap
        else:
            runs[f"ADIANA rand-1 (η×4^{best_j})"] = best_run
        base = {k: _bits(runs[k], cap) for k in ("GD", "Scaffnew", "DIANA rand-1")}
        r_best.append(B / min(base.values()))
        best_bits.append(min(base.values()))
        adiana_bits.append(best_adiana)
        r_adiana.append(B / best_adiana)
        ours.append(B)
        rows.append((seed, B, base["GD"], base["Scaffnew"], base["DIANA rand-1"],
                     _bits(runs["ADIANA rand-1 (theorem)"], cap), best_adiana,
                     -1 if best_j is None else best_j, r_best[-1], r_adiana[-1]))
        if not curves:
            curves = runs

    _plot_error_vs_bits(setting, ctx, curves)
    _plot_bits_to_tolerance(setting, ctx, rows, ours)

    return BitsEvidence(
        ratio_vs_best=float(np.mean(r_best)), ratio_vs_adiana=float(np.mean(r_adiana)),
        locodl_kbits=float(np.mean(ours)) / 1e3, best_kbits=float(np.mean(best_bits)) / 1e3,
        adiana_kbits=float(np.mean(adiana_bits)) / 1e3,
        per_seed=Table("uplink bits per client to tolerance (capped baselines show the cap)",
                       ("seed", "LoCoDL", "GD", "Scaffnew", "DIANA", "ADIANA theorem",
                        "ADIANA tuned", "tuned j", "LoCoDL / best of 3", "LoCoDL / ADIANA"),
                       tuple(rows)),
        adiana_steps=Table("ADIANA step sweep η = η_thm·4^j", ("seed", "j", "eta",
                                                               "converged", "bits"),
                           tuple(step_rows)),
    )


@claim("locodl.uplink_bits", experiment=bits,
       sentence="LoCoDL with rand-1 needs fewer uplink bits than GD, Scaffnew and DIANA.",
       metric="LoCoDL bits / min(GD, Scaffnew, DIANA rand-1 bits) to ‖y − x*‖ ≤ tol, "
              "theorem parameters, seed mean",
       unit="× best baseline",
       paper_figure="unverified: §4 curves of f − f* vs communicated bits (no table); "
                    "abstract: 'outperforming existing algorithms'; no bit ratio read",
       baseline="best of GD, Scaffnew, DIANA rand-1 (kbit)", threshold=0.5, direction="<=")
def uplink_bits(ev: BitsEvidence) -> Comparison:
    return Comparison(ours=ev.locodl_kbits, baseline=ev.best_kbits, value=ev.ratio_vs_best)


@claim("locodl.vs_adiana", experiment=bits,
       sentence="LoCoDL is at least as bit-efficient as ADIANA.",
       metric="untuned LoCoDL rand-1 bits / ADIANA rand-1 bits at its best step η_thm·4^j, "
              "j = 0..8, seed mean",
       unit="× tuned ADIANA",
       paper_figure="unverified: Fig. 7 compares LoCoDL and ADIANA (logistic regression, n=100, "
                    "d=10, Dirichlet α = 1, 10); curves only, no number read",
       baseline="ADIANA rand-1 at its best step (kbit)", threshold=1.0, direction="<=")
def vs_adiana(ev: BitsEvidence) -> Comparison:
    return Comparison(ours=ev.locodl_kbits, baseline=ev.adiana_kbits, value=ev.ratio_vs_adiana)
