"""V3's central claim in the paper's controlled setting, PhoneNums (issue 72): each sample is
a printed page of the ten digits in random order, one colour per page, each digit a 48 x 32
fragment (:mod:`iclr25.v3.testbed`). Without labels, V3's four variance/invariance hinges
should make the K = 10 content codebook name the digits, better than the same autoencoder
without them (the plain VQ-AE ablation, same nets, seed and epochs) and better than k-means
on raw fragments; the code -> digit map should carry over to unseen colours.

The score is the paper's macro purity (official ``tester.py``: each code's share of its most
frequent digit, averaged over the codes in use); one-to-one (Hungarian) accuracy is reported
beside it. The baseline is the better of the ablation and k-means, since a collapsed ablation
alone would be a strawman. Each claim's control reads the baseline or the data, never V3:
the ablation learned (``beats_baselines``), the digits are nameable from the fragments by a
labelled reader (kNN on raw fragments, ``codebook_accuracy``), and by k-means on the training
colours (``ood_colours``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from iclr25._checks import resolve_seed
from iclr25.claims import Comparison, Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.datasets.views import OOD_COLORS, TRAIN_COLORS
from iclr25.v3.metrics import (
    _fit_kmeans,
    _fragments,
    _probe_scores,
    codebook_accuracy,
    confusion,
    leakage_report,
)
from iclr25.v3.model import V3
from iclr25.v3.testbed import phone_numbers

#: a fragment of the paper's 48 x 32 is average-pooled POOL x POOL (a cut for time, chosen by
#: the pilot of :mod:`iclr25.v3.pilot` by the rule written there before it ran)
POOL = 4
#: the codebook claim's control: a labelled kNN(5) on raw fragments names the digits at least
#: as well as the claim asks the codebook to (its threshold), else no codebook can be judged
NAMEABLE_MIN = 0.75


@dataclass(frozen=True)
class Sequences(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("epochs",)  # epochs of V3 and the VQ-AE
    n_train: int           # training pages, TRAIN_COLORS (issue: about 1,000)
    n_test: int            # test pages, in-distribution and OOD colours each
    n_probe: int           # test pages used by the leakage probes (details only)
    epochs: int            # batch 32 pages x 10 fragments, bundle "repo" (issue: >= 40)
    pool: int              # fragments average-pooled pool x pool from the paper's 48 x 32
    seeds: tuple[int, ...]


@dataclass
class SequencesEvidence(Evidence):
    gain: float = scalar("purity", "V3 minus max(ablation, k-means) macro purity, mean")
    v3_purity: float = scalar("purity", "V3 macro purity on test sequences, mean over seeds")
    baseline_purity: float = scalar("purity", "max(ablation, k-means) per seed, mean")
    ood_purity: float = scalar("purity", "V3 on unseen colours through the fixed code map")
    ood_drop: float = scalar("purity", "OOD minus in-distribution purity, mean")
    v3_one_to_one: float = scalar("fraction", "V3 Hungarian accuracy (reported), mean")
    ablation_mse: float = scalar("", "test reconstruction MSE of the trained ablation, mean")
    ablation_init_mse: float = scalar("", "the same network untrained (its initial weights)")
    kmeans_purity: float = scalar("purity", "k-means K=10 on raw test fragments, mean")
    digit_knn_raw: float = scalar("fraction", "kNN(5) digit accuracy from raw fragments, "
                                              "trained on labelled training fragments, mean")
    kmeans_ood_drop: float = scalar("purity", "k-means' code map on unseen colours minus its "
                                              "in-distribution purity, mean (trivial arm)")
    v3: list[float] | None = None
    ablation: list[float] | None = None
    kmeans: list[float] | None = None
    kmeans_ood: list[float] | None = None
    v3_ood: list[float] | None = None
    colour_from_z_s: list[float] | None = None
    colour_from_z_c: list[float] | None = None
    digit_from_z_s: list[float] | None = None
    active_codes: list[int] | None = None
    per_seed: Table | None = None


@torch.no_grad()
def _recon_mse(net: torch.nn.Module, X: torch.Tensor) -> float:
    """Test reconstruction MSE through the quantised content (as ``V3.reconstruct``)."""
    net.eval()
    zc, zs = net.encode(X)
    return float(torch.nn.functional.mse_loss(net.decode(net.vq.codebook[net.vq.quantize(zc)],
                                                         zs), X))


def _kmeans_codes(X: torch.Tensor, Xo: torch.Tensor, seed: int
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """k-means (K=10) on the raw fragments of ``X`` (the fit of :func:`kmeans_codes`) and the
    nearest centroid of each fragment of ``Xo``: (B, N) codes of each."""
    km = _fit_kmeans(X, 10, seed)
    return (torch.as_tensor(km.labels_, dtype=torch.int64).reshape(X.shape[:2]),
            torch.as_tensor(km.predict(_fragments(Xo)), dtype=torch.int64).reshape(Xo.shape[:2]))


def _mapped_purity(ref_codes: torch.Tensor, ref_labels: torch.Tensor,
                   codes: torch.Tensor, labels: torch.Tensor) -> float:
    """Macro purity of ``codes`` when each code keeps the digit it named on ``ref`` (its
    majority digit there): the share of each used code's fragments with that digit,
    averaged over the codes in use; a code unseen on ``ref`` names nothing."""
    m = confusion(ref_codes, ref_labels)
    name = np.full(max(m.shape[0], int(codes.max()) + 1), -1)
    name[: m.shape[0]] = np.where(m.sum(1) > 0, m.argmax(1), -1)
    c, y = codes.reshape(-1).cpu().numpy(), labels.reshape(-1).cpu().numpy()
    return float(np.mean([(y[c == k] == name[k]).mean() for k in np.unique(c)]))


_DEV = (
    "issue 72: the paper's own controlled setting, PhoneNums (official dataset/phonenums, "
    "cfg_v3_phonenums.yaml): pages of the ten digits each once in random order (n_fragments "
    "10), one of the 8 official training colours per page (OOD: the official 8 OOD colours), "
    "printed fragments of 48 x 32 (n_feature 48, fragment_len 32), K = 10 atoms, with the "
    "official distortions (colour jitter, sub-pixel translation, gradual vertical blur, "
    "Gaussian noise added in wrapping uint8 as the official code does); taken from the paper, "
    "so not piloted. It replaces the coloured 8x8 handwritten digits, on which k-means on raw "
    "fragments (0.40-0.47) beat V3 (0.27-0.34) on every seed and the official trainer did no "
    "better",
    "font DejaVu Sans instead of the official ITC Kristen (not redistributable); values in "
    "[0, 1] instead of the official loader's [-1, 1]; 1,000 training pages instead of 80,000: "
    "offline, CPU budget",
    "issue 72 rule, written before its pilot (iclr25.v3.pilot, which trains the VQ-AE "
    "ablation and fits k-means / kNN only, never V3, on seeds 50000-50002): fragments are "
    "average-pooled pool x pool, pool in (1, 2, 4); the smallest pool is taken whose projected "
    "draw (data + 2 x the ablation's 40-epoch fit + k-means + kNN, CPU seconds, one thread) "
    "is <= 94 s, twice the old testbed's 47 s (not the brief's 4x: the 3-draw ladder, 10.5 "
    "draws, must finish in this session on a shared 2-core machine), and whose controls pass "
    "on every pilot seed (ablation MSE <= 0.5 x untrained, kNN digit accuracy on raw fragments "
    ">= 0.75, k-means purity >= 0.2); with none passing both, the smallest pool in time",
    "issue 72 pilot (CPU s, one thread, load ~11 on 2 cores): projected draw 236 s at pool 1 "
    "(48 x 32; 2.84 s per ablation epoch), 97.5 s at pool 2 (24 x 16; 1.14 s), 54.9 s at "
    "pool 4 (12 x 8; 0.61 s): only pool 4 is in time. Its controls on seeds 50000 / 50001 / "
    "50002: ablation test MSE 0.0033 / 0.0028 / 0.0031 vs untrained 0.82 / 0.79 / 0.87, "
    "kNN digit accuracy on raw fragments 1.0 / 1.0 / 1.0, k-means purity 0.62 / 0.66 / 0.60 "
    "(its map on unseen colours 0.56 / 0.65 / 0.60): all pass, so pool 4 (12 x 8 fragments)",
    "budget: 40 epochs, the issue's setting. The old testbed's ladder put beats_baselines' "
    "crossing near budget x8 (320 epochs), which does not fit the time above; this testbed's "
    "own ladder (0.5, 1, 2) is the evidence of its trend",
    "MLP fragment nets instead of the official conv nets; the official configs train "
    "for up to 10,000 epochs: CPU budget")


def _plot_accuracy(ctx: Context, seeds: tuple[int, ...], cols: dict[str, list]) -> None:
    """Macro purity per seed: V3, the ablation and k-means, chance dotted."""
    fig = ctx.figure("accuracy_per_seed")
    ax = fig.subplots()
    x = np.arange(len(seeds))
    for i, (k, lab) in enumerate((("v3", "V3"), ("ablation", "VQ-AE ablation"),
                                  ("kmeans", "k-means raw"))):
        ax.bar(x + 0.27 * (i - 1), cols[k], 0.27, label=lab)
    ax.axhline(0.1, color="gray", ls=":", label="chance")
    ax.set(xticks=x, xticklabels=[str(s) for s in seeds], xlabel="seed",
           ylabel="macro codebook purity")
    ax.legend()


def _plot_codebook(ctx: Context, conf: np.ndarray, swap: tuple) -> None:
    """The first seed's atoms x digits confusion, and a content/style swap decoded."""
    fig = ctx.figure("confusion")
    ax = fig.subplots()
    ax.imshow(conf, cmap="viridis")
    ax.set(xlabel="digit", ylabel="atom", title="atoms x digits (seed 0, test split)")
    fig = ctx.figure("style_swap")
    axes = fig.subplots(3, 10)
    shown = (swap[0][0], swap[0][1], swap[1][0].clamp(0, 1))
    for r, (seq, name) in enumerate(zip(shown, ("content", "style", "decoded"), strict=True)):
        for j in range(10):
            axes[r, j].imshow(seq[j].permute(1, 2, 0).numpy())
            axes[r, j].axis("off")
        axes[r, 0].set_title(name, fontsize=7, loc="left")


def pages(setting: Sequences, s: int, device: torch.device | str | None = None
          ) -> tuple[tuple[torch.Tensor, ...], ...]:
    """One seed's training, test and unseen-colour pages, each ``(x, content, style)``."""
    return tuple(tuple(t.to(device) for t in phone_numbers(n, colors, seed=s + off,
                                                            pool=setting.pool))
                 for n, colors, off in ((setting.n_train, TRAIN_COLORS, 0),
                                        (setting.n_test, TRAIN_COLORS, 101),
                                        (setting.n_test, OOD_COLORS, 202)))


def testbed_reads(test: tuple[torch.Tensor, ...], ood: tuple[torch.Tensor, ...], n_probe: int,
                  s: int) -> dict[str, float]:
    """What the testbed itself says, with no V3 in it: k-means' purity on the test pages and
    its code -> digit map's purity on unseen colours, and a labelled kNN(5)'s digit accuracy
    on the raw fragments of the first ``n_probe`` test pages (half labelled, half scored)."""
    (Xt, ct, _), (Xo, co, _) = test, ood
    km_t, km_o = _kmeans_codes(Xt, Xo, s)
    knn, _ = _probe_scores(_fragments(Xt[:n_probe]), ct[:n_probe].reshape(-1).cpu().numpy(),
                           s, linear=False)
    return dict(kmeans=codebook_accuracy(km_t, ct, one_to_one=False),
                km_ood=_mapped_purity(km_t, ct, km_o, co), knn_raw=knn)


def ablation_mse(abl: V3, X: torch.Tensor, Xt: torch.Tensor, s: int) -> tuple[float, float]:
    """The trained ablation's test reconstruction MSE and its untrained network's."""
    return _recon_mse(abl.model_, Xt), _recon_mse(abl._initial_model(X, resolve_seed(s)), Xt)


@experiment(quick=Sequences(n_train=250, n_test=100, n_probe=40, epochs=15, seeds=(0,),
                            pool=POOL,
                            deviations=("smoke test: 250 pages x 15 epochs, one seed", *_DEV)),
            full=Sequences(n_train=1000, n_test=300, n_probe=200, epochs=40, seeds=(0, 1, 2),
                           pool=POOL,
                           deviations=("1,000 training pages x 40 epochs (the issue's "
                                       "setting)", *_DEV)),
            random=(
                "training, test and unseen-colour pages (digit order, colour, jitter, shift, "
                "blur, noise)",
                "V3's, the ablation's and k-means' seeds",
                "probe splits",
            ),
            per_draw=("seeds",),
            cost=(5, 120))
def sequences(setting: Sequences, ctx: Context) -> SequencesEvidence:
    rows, cols = [], {k: [] for k in ("v3", "ablation", "kmeans", "v3_ood", "km_ood", "cz_s",
                                      "cz_c", "dz_s", "active", "v3_1to1", "mse", "mse0",
                                      "knn_raw")}
    conf = None
    for seed in setting.seeds:
        s = 1000 * ctx.seed + seed
        (X, _, _), test, ood = pages(setting, s, ctx.device)
        (Xt, ct, st), (Xo, co, _) = test, ood
        v3 = V3(epochs=setting.epochs, seed=s).fit(X)
        abl = V3(epochs=setting.epochs, seed=s, v3=False).fit(X)
        codes = v3.predict(Xt).cpu()
        acc = codebook_accuracy(codes, ct, one_to_one=False)
        acc_abl = codebook_accuracy(abl.predict(Xt), ct, one_to_one=False)
        tb = testbed_reads(test, ood, setting.n_probe, s)
        acc_ood = _mapped_purity(codes, ct, v3.predict(Xo), co)
        p = setting.n_probe
        # only the kNN probes are read: the logistic-regression ones would cost ~12% of the run
        leak = leakage_report(v3, Xt[:p], ct[:p], st[:p], seed=s, linear=False)
        active = int(torch.unique(codes).numel())
        one = codebook_accuracy(codes, ct)
        mse, mse0 = ablation_mse(abl, X, Xt, s)
        for k, v in (("v3", acc), ("ablation", acc_abl), ("kmeans", tb["kmeans"]),
                     ("v3_ood", acc_ood), ("km_ood", tb["km_ood"]),
                     ("cz_s", leak["style_from_z_s_knn"]), ("cz_c", leak["style_from_z_c_knn"]),
                     ("dz_s", leak["content_from_z_s_knn"]), ("active", active),
                     ("v3_1to1", one), ("mse", mse), ("mse0", mse0),
                     ("knn_raw", tb["knn_raw"])):
            cols[k].append(v)
        rows.append((seed, acc, acc_abl, tb["kmeans"], acc_ood, one, leak["style_from_z_s_knn"],
                     leak["style_from_z_c_knn"], leak["content_from_z_s_knn"], active))
        if conf is None:
            conf, swap = confusion(codes, ct), (Xt[:2].cpu(), v3.reconstruct(
                Xt[:1], Xt[1:2]).cpu())

    _plot_accuracy(ctx, setting.seeds, cols)
    _plot_codebook(ctx, conf, swap)
    baseline = np.maximum(cols["ablation"], cols["kmeans"])
    return SequencesEvidence(
        gain=float(np.mean(np.asarray(cols["v3"]) - baseline)),
        v3_purity=float(np.mean(cols["v3"])), baseline_purity=float(np.mean(baseline)),
        ood_purity=float(np.mean(cols["v3_ood"])),
        ood_drop=float(np.mean(np.asarray(cols["v3_ood"]) - np.asarray(cols["v3"]))),
        v3_one_to_one=float(np.mean(cols["v3_1to1"])),
        v3=cols["v3"], ablation=cols["ablation"], kmeans=cols["kmeans"], v3_ood=cols["v3_ood"],
        colour_from_z_s=cols["cz_s"], colour_from_z_c=cols["cz_c"], digit_from_z_s=cols["dz_s"],
        active_codes=cols["active"], ablation_mse=float(np.mean(cols["mse"])),
        ablation_init_mse=float(np.mean(cols["mse0"])),
        kmeans_purity=float(np.mean(cols["kmeans"])), kmeans_ood=cols["km_ood"],
        digit_knn_raw=float(np.mean(cols["knn_raw"])),
        kmeans_ood_drop=float(np.mean(np.asarray(cols["km_ood"]) - np.asarray(cols["kmeans"]))),
        per_seed=Table("per seed (macro purity; one-to-one accuracy; kNN(5) probes on test "
                       "fragments)", ("seed", "V3", "ablation", "k-means", "V3 OOD",
                                      "V3 one-to-one", "colour<-z_s", "colour<-z_c",
                                      "digit<-z_s", "active codes"), rows))


@claim("v3.beats_baselines", experiment=sequences,
       sentence="the V3 terms align the codebook with digits",
       metric="V3 macro purity minus max(VQ-AE ablation at equal epochs, k-means K=10 on raw "
              "fragments), per seed, mean",
       unit="purity", paper_figure="Table 1 ablations (unverified)", threshold=0.10,
       direction=">=", baseline="max(VQ-AE ablation, k-means on raw fragments)",
       control=lambda ev: ev.ablation_mse <= 0.5 * ev.ablation_init_mse,
       control_doc="the trained baseline learned: the VQ-AE ablation's test reconstruction "
                   "MSE is at most half that of the same network untrained")
def beats_baselines(ev: SequencesEvidence) -> Comparison:
    return Comparison(ours=ev.v3_purity, baseline=ev.baseline_purity, value=ev.gain)


@claim("v3.codebook_accuracy", experiment=sequences,
       sentence="without labels, the K=10 content codebook names the digits",
       metric="macro codebook purity (official tester.py) on test-split sequences",
       unit="purity",
       paper_figure="89.2% macro codebook accuracy on PhoneNums (Table 8, via the replication)",
       threshold=0.75, direction=">=",
       # a control reads the data and the baseline, never V3 (issue 72): the digits must be
       # nameable from the fragments at the level asked of the codebook, and the shared nets
       # must learn at this budget, or the testbed cannot express the claim
       control=lambda ev: (ev.digit_knn_raw >= NAMEABLE_MIN
                           and ev.ablation_mse <= 0.5 * ev.ablation_init_mse),
       control_doc="the testbed can express the claim: a labelled kNN(5) on raw test "
                   "fragments names the digits with accuracy >= 0.75 (the claim's threshold), "
                   "and the VQ-AE ablation learned (test MSE <= half its untrained network's)",
       trivial=lambda ev: ev.kmeans_purity,
       trivial_doc="k-means (K=10) on the raw test fragments, no training")
def codebook_acc(ev: SequencesEvidence) -> float:
    return ev.v3_purity


@claim("v3.ood_colours", experiment=sequences,
       sentence="the code -> digit map learned on training colours holds on unseen colours",
       metric="macro purity on unseen colours through the code -> digit map of the training "
              "colours, minus in-distribution purity",
       unit="purity", paper_figure="zero-shot OOD colours on PhoneNums (unverified)",
       threshold=-0.15, direction=">=", baseline="V3 on the training colours",
       # a control reads the testbed or a baseline, never V3 (issue 74): V3's own low purity
       # is the method's failure, reported as the claim's figure, not a testbed limit
       control=lambda ev: ev.kmeans_purity >= 0.2,
       control_doc="the digits are nameable on the training colours: k-means (K=10) on the raw "
                   "test fragments reaches macro purity >= 0.2, twice chance (0.1)",
       # a map that learned nothing has nothing to lose: k-means on raw fragments (colour
       # included) is the trivial arm whose map should break on unseen colours
       trivial=lambda ev: ev.kmeans_ood_drop,
       trivial_doc="k-means (K=10) on the raw fragments, its code -> digit map carried to the "
                   "unseen colours the same way")
def ood_colours(ev: SequencesEvidence) -> Comparison:
    return Comparison(ours=ev.ood_purity, baseline=ev.v3_purity, value=ev.ood_drop)
