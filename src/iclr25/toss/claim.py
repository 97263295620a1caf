"""ToSS's claims at laptop scale: the W2 bound with (pseudo-)labels against the Gaussian NLL.

Data are TIC-TAC's samplers, so the true σ(x) and Σ(x) are known and the covariance itself
is gated (relative error on held-out points), not TAC: TAC ignores Σ's scale, and on this
sampler a homoscedastic average covariance scores as well as the oracle, so it cannot
separate the methods. TAC and test NLL are reported. Every method sees the same data, seed,
network (2 × 64 MLP; ELU for TIC, whose Hessian term vanishes under ReLU), optimiser (Adam),
batch size 32 and epochs. TIC (Taylor Induced Covariance, the paper's headline baseline) is
trained beside NLL in every experiment.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from iclr25.claims import Comparison, Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.toss.metrics import cov_error, gaussian_nll, tac
from iclr25.toss.model import HeteroscedasticRegressor
from iclr25.toss.pseudo import pseudo_covariance
from iclr25.toss.testbed import make_heteroscedastic, make_sinusoid

# --- 1: univariate sinusoid: epochs to learn σ(x) -----------------------------------------


@dataclass(frozen=True)
class Sinusoid(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("epochs",)  # epochs of every method
    n: int                  # training points (TIC-TAC's univariate set-up, x ~ U[-5, 5])
    n_test: int             # σ error measured on this many fresh points
    epochs: int             # few on purpose: the claim is about speed of learning σ
    lr: float
    seeds: tuple[int, ...]  # data and network seeds


@dataclass
class SinusoidEvidence(Evidence):
    ratio: float = scalar("ToSS/NLL", "σ error ratio, mean over seeds")
    ratio_tic: float = scalar("ToSS/TIC", "σ error ratio against TIC, mean over seeds")
    sigma_err_toss: float = scalar("fraction", "mean |σ̂-σ| / mean σ, ToSS")
    sigma_err_nll: float = scalar("fraction", "same, Gaussian NLL")
    sigma_err_tic: float = scalar("fraction", "same, TIC")
    sigma_err_beta_nll: float = scalar("fraction", "same, β-NLL (β = 0.5)")
    sigma_err_constant: float = scalar("fraction", "same, σ̂ = std(Y_train), a prediction "
                                                   "that ignores x")
    per_seed: Table | None = None
    by_epoch: Table | None = None


METHODS_1D = (("toss", "ToSS"), ("nll", "NLL"), ("tic", "TIC"), ("beta-nll", "β-NLL"))
_ARCH = ("one 2x64 MLP for mean and covariance, Adam at a fixed lr (TIC-TAC/ToSS: separate "
         "5-block residual ELU networks, AdamW + ReduceLROnPlateau): CPU budget",
         "TIC's trunk is ELU, every other arm's ReLU: TIC's Hessian term is 0 under ReLU "
         "(the official TIC network is ELU)")


# The stored text of arXiv 2502.10587 holds only its opening (issue 34); its figures were read
# from the images on the authors' project page (meghshukla/meghshukla.github.io, issue 72).
PAPER_FIGURE_1D = ("univariate sinusoids, ToSS vs NLL/TIC and others: Figure 10 (appendix; "
                   "y = |x| sin 2πx, (5 − |x|) sin 2πx, 5 sin 2πx, σ(x) = |x|)")
PAPER_FIGURE_MV = ("multivariate TIC-TAC sampler: Figure 5 (dim 8 and 24; MSE, 2-W and KL to "
                   "the true distribution over 100 epochs) and Table 1 (time and memory per "
                   "step); abstract: 'computationally cheaper yet accurate'")


def _cpu_or_cuda_clock(device: torch.device | str) -> float:
    """Seconds for timing arms against each other: process CPU time on CPU (robust to other
    jobs on a shared machine, one thread per experiment), synchronised wall time on CUDA."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        return time.perf_counter()
    return time.process_time()


def _sigma_err(reg: HeteroscedasticRegressor, X: torch.Tensor, sigma: torch.Tensor) -> float:
    s = reg.predict_cov(X)[:, 0, 0].clamp_min(0).sqrt()
    return float((s - sigma).abs().mean() / sigma.mean())


@experiment(quick=Sinusoid(n=2000, n_test=5000, epochs=2, lr=1e-3, seeds=(0,),
                           deviations=("smoke test: one seed, 2 epochs", *_ARCH)),
            full=Sinusoid(n=5000, n_test=5000, epochs=5, lr=1e-3, seeds=(0, 1, 2),
                          deviations=("5 epochs, 3 seeds: the claim is about the first "
                                      "epochs", *_ARCH)),
            random=("training and test data", "initialisation and shuffling"),
            per_draw=("seeds",),
            cost=(1.7, 10))
def sinusoid(setting: Sinusoid, ctx: Context) -> SinusoidEvidence:
    grid = torch.linspace(-5, 5, 401, dtype=torch.float64).unsqueeze(1)
    errs = {m: [] for m, _ in METHODS_1D}
    const_err = []
    curves: dict[str, list[list[float]]] = {m: [] for m, _ in METHODS_1D}
    snapshots: dict[tuple[str, int], np.ndarray] = {}
    for s in setting.seeds:
        seed = ctx.seed + s
        tr = make_sinusoid(setting.n, seed=seed, device=ctx.device)
        te = make_sinusoid(setting.n_test, seed=10_000 + seed, device=ctx.device)
        sig = te.cov[:, 0, 0].sqrt()
        const_err.append(float((tr.Y.std() - sig).abs().mean() / sig.mean()))
        for m, _ in METHODS_1D:
            curve: list[float] = []

            def hook(epoch: int, reg: HeteroscedasticRegressor, curve=curve, m=m,
                     first=(s == setting.seeds[0]), Xte=te.X, sig=sig) -> None:
                curve.append(_sigma_err(reg, Xte, sig))
                if first and epoch in (0, setting.epochs - 1):
                    g = reg.predict_cov(grid.to(ctx.device))[:, 0, 0].sqrt()
                    snapshots[(m, epoch)] = g.cpu().numpy()

            HeteroscedasticRegressor(loss=m, center="mean", epochs=setting.epochs,  # Alg. 1
                                     lr=setting.lr, device=ctx.device,
                                     seed=seed).fit(tr.X, tr.Y, on_epoch_end=hook)
            errs[m].append(curve[-1])
            curves[m].append(curve)
    ratios = [t / n for t, n in zip(errs["toss"], errs["nll"], strict=True)]
    ratios_tic = [t / n for t, n in zip(errs["toss"], errs["tic"], strict=True)]

    fig = ctx.figure("sigma_of_x", figsize=(10, 4))
    axes = fig.subplots(1, 2, sharey=True)
    for ax, ep in zip(axes, (0, setting.epochs - 1), strict=True):
        ax.plot(grid[:, 0], grid[:, 0].abs(), "k", lw=2, label="truth |x|")
        for m, label in METHODS_1D:
            ax.plot(grid[:, 0], snapshots[(m, ep)], label=label)
        ax.set_title(f"σ(x) after {ep + 1} epoch(s), seed {ctx.seed + setting.seeds[0]}")
        ax.set_xlabel("x")
    axes[0].set_ylabel("predicted σ(x)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()

    mean_curve = {m: np.mean(curves[m], axis=0) for m, _ in METHODS_1D}
    return SinusoidEvidence(
        ratio=float(np.mean(ratios)),
        ratio_tic=float(np.mean(ratios_tic)),
        sigma_err_toss=float(np.mean(errs["toss"])),
        sigma_err_nll=float(np.mean(errs["nll"])),
        sigma_err_tic=float(np.mean(errs["tic"])),
        sigma_err_beta_nll=float(np.mean(errs["beta-nll"])),
        sigma_err_constant=float(np.mean(const_err)),
        per_seed=Table("σ error per seed",
                       ("seed", "ToSS", "NLL", "TIC", "β-NLL", "ToSS/NLL", "ToSS/TIC"),
                       [(ctx.seed + s, errs["toss"][i], errs["nll"][i], errs["tic"][i],
                         errs["beta-nll"][i], ratios[i], ratios_tic[i])
                        for i, s in enumerate(setting.seeds)]),
        by_epoch=Table("σ error by epoch (mean over seeds)",
                       ("epoch", *(lab for _, lab in METHODS_1D)),
                       [(e + 1, *(float(mean_curve[m][e]) for m, _ in METHODS_1D))
                        for e in range(setting.epochs)]))


# Did the baseline learn? Its untrained self is the NLL optimum over predictions that ignore x
# (σ̂ = std(Y_train), Σ̂ = Cov(Y_train)): what a network that learned nothing of σ(x) or Σ(x)
# predicts. The baseline must be at least 10% below it, fixed before measuring: a baseline
# within 10% of an x-blind prediction has learned too little of σ(x)/Σ(x) for a ratio against
# it to say that the method estimates them better.
_LEARNED_MARGIN = 0.9


def _beats(baseline: float, constant: float) -> bool:
    return baseline <= _LEARNED_MARGIN * constant


_LEARNED_1D = ("NLL learned σ(x): its σ error is at most 0.9x that of σ̂ = std(Y_train), a "
               "prediction that ignores x.")


@claim("toss.univariate_epochs", experiment=sinusoid,
       sentence="Pseudo-label supervision with the W2 bound learns the variance in far fewer "
                "epochs than NLL.",
       metric="σ error (mean|σ̂−σ| / mean σ, 5000 test points) ToSS / NLL after 5 epochs "
              "(quick: 2), mean over seeds",
       unit="ratio", paper_figure=PAPER_FIGURE_1D, threshold=0.5, direction="<=",
       baseline="NLL", control=lambda ev: _beats(ev.sigma_err_nll, ev.sigma_err_constant),
       control_doc=_LEARNED_1D,
       competitors=lambda ev: {"TIC": ev.sigma_err_tic, "β-NLL": ev.sigma_err_beta_nll})
def univariate_epochs(ev: SinusoidEvidence) -> Comparison:
    return Comparison(ours=ev.sigma_err_toss, baseline=ev.sigma_err_nll, value=ev.ratio)


# --- 2 and 3: multivariate TIC-TAC sampler: Σ(x) with labels and with pseudo-labels ---------


@dataclass(frozen=True)
class Multivariate(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("epochs",)  # epochs of every method
    n: int                      # training points (TIC-TAC uses 1000·dim)
    n_test: int                 # held-out points, same draw (shared distribution parameters)
    dim: int                    # in = out dimension
    epochs: int
    lr: float                   # the 1e-3 (the bound's gain grows with lr: not tuned)
    seeds: tuple[int, ...]
    detail_dim: int | None      # also run ToSS/NLL/TIC at this dim (seed 0), reported only
    beta_nll: bool              # also train β-NLL (reported only); off in full, where it
                                # costs a fifth of the 5-minute budget


@dataclass
class MultivariateEvidence(Evidence):
    supervised_ratio: float = scalar("bound/NLL", "cov_error, W2 bound with true Σ / NLL")
    self_ratio: float = scalar("ToSS/NLL", "cov_error, W2 bound with pseudo-labels / NLL")
    tic_ratio: float = scalar("ToSS/TIC", "cov_error, ToSS / TIC, mean over seeds")
    supervised_tic_ratio: float = scalar("bound/TIC", "cov_error, bound with true Σ / TIC")
    cov_error_nll: float = scalar("fraction", "test cov_error of NLL, mean over seeds")
    cov_error_tic: float = scalar("fraction", "test cov_error of TIC, mean over seeds")
    cov_error_toss: float = scalar("fraction", "test cov_error of ToSS, mean over seeds")
    cov_error_bound: float = scalar("fraction", "test cov_error of the bound with true Σ")
    cov_error_constant: float = scalar("fraction", "test cov_error of Σ̂ = Cov(Y_train), "
                                                   "a prediction that ignores x")
    epoch_time_ratio: float = scalar("ToSS/TIC", "training time per epoch (median of epochs "
                                                 "2..E; CPU time on CPU), mean over seeds")
    epoch_time_toss: float = scalar("s", "ToSS training time per epoch")
    epoch_time_tic: float = scalar("s", "TIC training time per epoch")
    epoch_time_nll: float = scalar("s", "NLL training time per epoch")
    pseudo_label_time: float = scalar("s", "pseudo_covariance on the training set, once per fit")
    local_linear_ratio: float = scalar("ToSS-ll/NLL", "same, center='local_linear' labels")
    label_error: float = scalar("fraction", "cov_error of the default pseudo-labels (train)")
    label_error_local_linear: float = scalar("fraction", "same, local_linear labels")
    by_method: Table | None = None
    per_seed: Table | None = None
    by_epoch: Table | None = None
    detail: Table | None = None


METHODS = (("nll", "mean", "NLL"), ("tic", "mean", "TIC"), ("beta-nll", "mean", "β-NLL"),
           ("w2-labels", "mean", "W2 bound, true Σ"), ("toss", "mean", "ToSS"),
           ("toss", "local_linear", "ToSS local-linear"))


def _run(data, n: int, method: tuple[str, str], setting: Multivariate, seed: int,
         device: torch.device, curve: list[float] | None = None) -> dict[str, float]:
    """Fit one ``(loss, center)`` method on the first ``n`` rows at the setting's epochs and
    lr; score it on the rest (``curve``: the covariance error after each epoch)."""
    loss, center = method
    epochs, lr = setting.epochs, setting.lr
    tr, te = slice(0, n), slice(n, None)
    Xte, Yte, Cte = data.X[te], data.Y[te], data.cov[te]

    ticks: list[tuple[float, float]] = []     # (epoch end, hook end): hooks are not timed

    def hook(epoch: int, reg: HeteroscedasticRegressor) -> None:
        t0 = _cpu_or_cuda_clock(device)
        if curve is not None:
            curve.append(cov_error(reg.predict_cov(Xte), Cte))
        ticks.append((t0, _cpu_or_cuda_clock(device)))

    reg = HeteroscedasticRegressor(loss=loss, center=center, epochs=epochs, lr=lr,
                                   device=device, seed=seed)
    reg.fit(data.X[tr], data.Y[tr], data.cov[tr] if loss == "w2-labels" else None,
            on_epoch_end=hook)
    C, mu = reg.predict_cov(Xte), reg.predict(Xte)
    # epoch 1 also holds the pseudo-labels and set-up: the median of the later epochs
    per_epoch = [a - b[1] for a, b in zip([t[0] for t in ticks[1:]], ticks[:-1], strict=True)]
    return {"cov_error": cov_error(C, Cte), "tac": tac(mu, C, Yte),
            "nll": gaussian_nll(mu, C, Yte), "mse": float((mu - data.mean[te]).square().mean()),
            "epoch_time": float(np.median(per_epoch)) if per_epoch else float("nan")}


_MV = ("dim 8 only (the paper sweeps 4..20 in steps of 2), n = 1000·dim as TIC-TAC, 20 of "
       "the paper's 100 epochs: CPU budget",
       "pseudo-labels: Algorithm 1 (x among its own neighbours, softmax of the negative "
       "squared Mahalanobis distances); its k is not given: 64",
       "testbed kept as TIC-TAC's (het_scale 1) by the pilot of issue 72 (iclr25.toss.pilot, "
       "baselines, testbed and pseudo-labels only, seeds 60000-60002): no weight 1-16 of "
       "Σ(x)'s x-dependent term made the pseudo-labels nearer Σ(x) than the mean true Σ "
       "(labels 0.59-0.73 off, x-blind Σ̄ 0.08-0.31): the construction, not the testbed's "
       "heteroscedasticity, limits ToSS here")


@dataclass
class _SeedRuns:
    """Every arm's test metrics and cov_error curve per seed, and the pseudo-labels' own."""
    res: dict[str, list[dict[str, float]]]
    curves: dict[str, list[list[float]]]
    lab_err: list[float]
    lab_err_ll: list[float]
    const_err: list[float]
    label_time: list[float]


def _run_seeds(setting: Multivariate, ctx: Context, methods: list) -> _SeedRuns:
    """Draw each seed's data, score its pseudo-labels and the constant Σ̂, train every arm."""
    runs = _SeedRuns({lab: [] for *_, lab in methods}, {lab: [] for *_, lab in methods},
                     [], [], [], [])
    n = setting.n
    for s in setting.seeds:
        seed = ctx.seed + s
        data = make_heteroscedastic(n + setting.n_test, setting.dim, seed=seed,
                                    device=ctx.device)
        const = torch.cov(data.Y[:n].T).expand(setting.n_test, -1, -1)
        runs.const_err.append(cov_error(const, data.cov[n:]))
        for center, store in (("mean", runs.lab_err), ("local_linear", runs.lab_err_ll)):
            t0 = _cpu_or_cuda_clock(ctx.device)
            P = pseudo_covariance(data.X[:n], data.Y[:n], center=center)
            if center == "mean":
                runs.label_time.append(_cpu_or_cuda_clock(ctx.device) - t0)
            store.append(cov_error(P, data.cov[:n]))
        for loss, center, lab in methods:
            curve: list[float] = []
            runs.res[lab].append(_run(data, n, (loss, center), setting, seed, ctx.device,
                                      curve))
            runs.curves[lab].append(curve)
    return runs


def _detail_rows(setting: Multivariate, ctx: Context) -> list[tuple]:
    """ToSS/NLL/TIC at the lower detail_dim, first seed (a placeholder row without one)."""
    if setting.detail_dim is None:
        return [("none at this scale", 0, 0.0, 0.0)]
    n = setting.n
    seed = ctx.seed + setting.seeds[0]
    data = make_heteroscedastic(n + setting.n_test, setting.detail_dim, seed=seed,
                                device=ctx.device)
    d_res = {lab: _run(data, n, (loss, center), setting, seed, ctx.device)
             for loss, center, lab in METHODS if lab in ("NLL", "TIC", "ToSS",
                                                         "ToSS local-linear")}
    return [(lab, setting.detail_dim, r["cov_error"],
             r["cov_error"] / d_res["NLL"]["cov_error"]) for lab, r in d_res.items()]


def _plot_cov_curves(setting: Multivariate, ctx: Context, methods: list,
                     curves: dict[str, list[list[float]]]) -> None:
    """Test cov_error by epoch, one line per arm."""
    fig = ctx.figure("cov_error_by_epoch")
    ax = fig.subplots()
    epochs = np.arange(1, setting.epochs + 1)
    for *_, lab in methods:
        ax.plot(epochs, np.mean(curves[lab], axis=0), marker="o", ms=3, label=lab)
    ax.set_xlabel("epoch")
    ax.set_ylabel("cov_error ‖Σ̂−Σ‖_F/‖Σ‖_F (test, mean over seeds)")
    ax.set_yscale("log")
    ax.set_title(f"TIC-TAC sampler, dim {setting.dim}, n = {setting.n}")
    ax.legend(fontsize=8)
    fig.tight_layout()


@experiment(quick=Multivariate(n=2000, n_test=2000, dim=4, epochs=5, lr=1e-3, seeds=(0,),
                               detail_dim=None, beta_nll=True,
                               deviations=("smoke test: dim 4, n = 2000, 5 epochs, one seed",
                                           *_ARCH)),
            full=Multivariate(n=8000, n_test=2000, dim=8, epochs=20, lr=1e-3, seeds=(0, 1, 2),
                              detail_dim=4, beta_nll=False,
                              deviations=(*_MV, *_ARCH, "β-NLL not trained at full scale: a "
                                          "fifth of the budget, and no claim reads it")),
            random=("the distribution, training and test points", "initialisation and shuffling"),
            per_draw=("seeds",),
            cost=(7.2, 139))
def multivariate(setting: Multivariate, ctx: Context) -> MultivariateEvidence:
    methods = [m for m in METHODS if setting.beta_nll or m[0] != "beta-nll"]
    runs = _run_seeds(setting, ctx, methods)
    res, curves, lab_err, lab_err_ll = runs.res, runs.curves, runs.lab_err, runs.lab_err_ll

    def ratio(lab: str, base: str = "NLL", key: str = "cov_error") -> list[float]:
        return [a[key] / b[key] for a, b in zip(res[lab], res[base], strict=True)]

    def mean(lab: str, key: str = "cov_error") -> float:
        return float(np.mean([r[key] for r in res[lab]]))

    sup, ss, ll = ratio("W2 bound, true Σ"), ratio("ToSS"), ratio("ToSS local-linear")
    vs_tic = ratio("ToSS", "TIC")
    by_method = [(lab, *(mean(lab, k) for k in ("cov_error", "tac", "nll", "mse", "epoch_time")))
                 for *_, lab in methods]
    per_seed = [(ctx.seed + s, res["NLL"][i]["cov_error"], res["TIC"][i]["cov_error"],
                 res["W2 bound, true Σ"][i]["cov_error"], res["ToSS"][i]["cov_error"],
                 res["ToSS local-linear"][i]["cov_error"], sup[i], ss[i], vs_tic[i],
                 lab_err[i], lab_err_ll[i]) for i, s in enumerate(setting.seeds)]
    detail = _detail_rows(setting, ctx)
    _plot_cov_curves(setting, ctx, methods, curves)
    epochs = np.arange(1, setting.epochs + 1)

    return MultivariateEvidence(
        supervised_ratio=float(np.mean(sup)), self_ratio=float(np.mean(ss)),
        tic_ratio=float(np.mean(vs_tic)),
        supervised_tic_ratio=float(np.mean(ratio("W2 bound, true Σ", "TIC"))),
        cov_error_nll=mean("NLL"), cov_error_tic=mean("TIC"), cov_error_toss=mean("ToSS"),
        cov_error_bound=mean("W2 bound, true Σ"),
        cov_error_constant=float(np.mean(runs.const_err)),
        epoch_time_ratio=float(np.mean(ratio("ToSS", "TIC", "epoch_time"))),
        epoch_time_toss=mean("ToSS", "epoch_time"), epoch_time_tic=mean("TIC", "epoch_time"),
        epoch_time_nll=mean("NLL", "epoch_time"),
        pseudo_label_time=float(np.mean(runs.label_time)),
        local_linear_ratio=float(np.mean(ll)), label_error=float(np.mean(lab_err)),
        label_error_local_linear=float(np.mean(lab_err_ll)),
        by_method=Table("test metrics by method (mean over seeds)",
                        ("method", "cov_error", "TAC", "NLL", "mean MSE", "s / epoch"),
                        by_method),
        per_seed=Table("cov_error per seed", ("seed", "NLL", "TIC", "bound+true Σ", "ToSS",
                                              "ToSS-ll", "bound/NLL", "ToSS/NLL", "ToSS/TIC",
                                              "label err", "label err ll"), per_seed),
        by_epoch=Table("test cov_error by epoch (mean over seeds)",
                       ("epoch", *(lab for *_, lab in methods)),
                       [(int(e), *(float(np.mean(curves[lab], axis=0)[e - 1])
                                   for *_, lab in methods)) for e in epochs]),
        detail=Table("lower dimension (first seed)", ("method", "dim", "cov_error", "/NLL"),
                     detail))


_LEARNED = ("The baseline ({}) learned Σ(x): its test cov_error is at most 0.9x that of "
            "Σ̂ = Cov(Y_train), a prediction that ignores x.")


def _others(ev: MultivariateEvidence, *names: str) -> dict[str, float]:
    """Test cov_error of the named arms (those trained at this scale), from by_method."""
    return {r[0]: r[1] for r in ev.by_method.rows if r[0] in names}


@claim("toss.supervised_bound", experiment=multivariate,
       sentence="Given covariance labels, the W2 bound learns Σ(x) more accurately than NLL.",
       metric="test cov_error (mean ‖Σ̂−Σ‖_F/‖Σ‖_F) of the bound with true Σ labels / NLL's, "
              "mean over seeds",
       unit="ratio", paper_figure=PAPER_FIGURE_MV, threshold=0.5, direction="<=",
       baseline="NLL", control=lambda ev: _beats(ev.cov_error_nll, ev.cov_error_constant),
       control_doc=_LEARNED.format("NLL"),
       competitors=lambda ev: _others(ev, "TIC", "β-NLL"))
def supervised_bound(ev: MultivariateEvidence) -> Comparison:
    return Comparison(ours=ev.cov_error_bound, baseline=ev.cov_error_nll,
                      value=ev.supervised_ratio)


@claim("toss.self_supervised", experiment=multivariate,
       sentence="With neighbourhood pseudo-labels the W2 bound estimates Σ(x) at least as "
                "well as NLL.",
       metric="test cov_error of ToSS (default pseudo_covariance) / NLL's, mean over seeds",
       unit="ratio", paper_figure=PAPER_FIGURE_MV, threshold=1.0, direction="<=",
       baseline="NLL", control=lambda ev: _beats(ev.cov_error_nll, ev.cov_error_constant),
       control_doc=_LEARNED.format("NLL"),
       competitors=lambda ev: _others(ev, "TIC", "β-NLL"))
def self_supervised(ev: MultivariateEvidence) -> Comparison:
    return Comparison(ours=ev.cov_error_toss, baseline=ev.cov_error_nll, value=ev.self_ratio)


@claim("toss.vs_tic", experiment=multivariate,
       sentence="With neighbourhood pseudo-labels the W2 bound estimates Σ(x) at least as "
                "well as TIC, the authors' earlier unsupervised method, at a lower cost per "
                "epoch (the time ratio is reported beside it, not gated).",
       metric="test cov_error of ToSS (default pseudo_covariance) / TIC's on the same data, "
              "mean over seeds; epoch_time_ratio = ToSS/TIC training time per epoch",
       unit="ratio", paper_figure=PAPER_FIGURE_MV, threshold=1.0, direction="<=",
       baseline="TIC", control=lambda ev: _beats(ev.cov_error_tic, ev.cov_error_constant),
       control_doc=_LEARNED.format("TIC"),
       competitors=lambda ev: _others(ev, "NLL", "β-NLL"))
def vs_tic(ev: MultivariateEvidence) -> Comparison:
    return Comparison(ours=ev.cov_error_toss, baseline=ev.cov_error_tic, value=ev.tic_ratio)
