"""V3's central claim on coloured digit sequences (spec 3.5): each sample is the ten digits in
random order, one colour per sample. Without labels, V3's four variance/invariance hinges
should make the K = 10 content codebook name the digits, better than the same autoencoder
without them (the plain VQ-AE ablation, same nets, seed and epochs) and better than k-means
on raw fragments; the code -> digit map should carry over to unseen colours.

The score is the paper's macro purity (official ``tester.py``: each code's share of its most
frequent digit, averaged over the codes in use); one-to-one (Hungarian) accuracy is reported
beside it. The baseline is the better of the ablation and k-means, since a collapsed ablation
alone would be a strawman. ``ood_colours``' control reads the testbed through k-means: the
digits are nameable on the training colours (k-means purity at least twice chance).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from iclr25._checks import resolve_seed
from iclr25.claims import Comparison, Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.datasets.views import OOD_COLORS, TRAIN_COLORS, digit_sequences
from iclr25.v3.metrics import (
    _fit_kmeans,
    _fragments,
    codebook_accuracy,
    confusion,
    leakage_report,
)
from iclr25.v3.model import V3


@dataclass(frozen=True)
class Sequences(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("epochs",)  # epochs of V3 and the VQ-AE
    n_train: int           # train-split sequences, TRAIN_COLORS (issue: about 1,000)
    n_test: int            # test-split sequences, in-distribution and OOD colours each
    n_probe: int           # test sequences used by the leakage probes (details only)
    epochs: int            # batch 32 sequences x 10 fragments, bundle "repo" (issue: >= 40)
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


_DEV = ("coloured 8x8 digit sequences (10 digits per sample, one colour per sample) instead "
        "of the paper's PhoneNums/InsNotes/SVHN: offline, CPU budget",
        "MLP fragment nets instead of the official conv nets; the official configs train "
        "for hundreds of epochs: CPU budget")


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


@experiment(quick=Sequences(n_train=250, n_test=100, n_probe=40, epochs=15, seeds=(0,),
                            deviations=("smoke test: 250 sequences x 15 epochs, one seed "
                                        "(40 epochs took ~45 s of CPU)", *_DEV)),
            full=Sequences(n_train=1000, n_test=300, n_probe=200, epochs=40, seeds=(0, 1, 2),
                           deviations=("1,000 training sequences x 40 epochs (the issue's "
                                       "setting; 3,000 x 40 does not fit 5 minutes)", *_DEV)),
            random=(
                "training, test and unseen-colour sequences",
                "V3's, the ablation's and k-means' seeds",
                "probe splits",
                "the digit exemplars' train/test split (one per draw)",
            ),
            per_draw=("seeds",),
            cost=(5, 120))
def sequences(setting: Sequences, ctx: Context) -> SequencesEvidence:
    rows, cols = [], {k: [] for k in ("v3", "ablation", "kmeans", "v3_ood", "km_ood", "cz_s",
                                      "cz_c", "dz_s", "active", "v3_1to1", "mse", "mse0")}
    conf = None
    dev = ctx.device
    for seed in setting.seeds:
        s = 1000 * ctx.seed + seed
        split = dict(split_seed=ctx.seed % 2**32)  # the draw's exemplar split (sklearn's range)
        X, _, _ = digit_sequences(setting.n_train, TRAIN_COLORS, "train", seed=s, **split)
        Xt, ct, st = digit_sequences(setting.n_test, TRAIN_COLORS, "test", seed=s + 101, **split)
        Xo, co, _ = digit_sequences(setting.n_test, OOD_COLORS, "test", seed=s + 202, **split)
        X, Xt, Xo = X.to(dev), Xt.to(dev), Xo.to(dev)
        v3 = V3(epochs=setting.epochs, seed=s).fit(X)
        abl = V3(epochs=setting.epochs, seed=s, v3=False).fit(X)
        codes = v3.predict(Xt).cpu()
        acc = codebook_accuracy(codes, ct, one_to_one=False)
        acc_abl = codebook_accuracy(abl.predict(Xt), ct, one_to_one=False)
        km_t, km_o = _kmeans_codes(Xt, Xo, s)
        acc_km = codebook_accuracy(km_t, ct, one_to_one=False)
        mse0 = _recon_mse(abl._initial_model(X, resolve_seed(s)), Xt)   # the ablation untrained
        acc_ood = _mapped_purity(codes, ct, v3.predict(Xo), co)
        p = setting.n_probe
        # only the kNN probes are read: the logistic-regression ones would cost ~12% of the run
        leak = leakage_report(v3, Xt[:p], ct[:p], st[:p], seed=s, linear=False)
        active = int(torch.unique(codes).numel())
        one = codebook_accuracy(codes, ct)
        for k, v in (("v3", acc), ("ablation", acc_abl), ("kmeans", acc_km), ("v3_ood", acc_ood),
                     ("km_ood", _mapped_purity(km_t, ct, km_o, co)),
                     ("cz_s", leak["style_from_z_s_knn"]), ("cz_c", leak["style_from_z_c_knn"]),
                     ("dz_s", leak["content_from_z_s_knn"]), ("active", active),
                     ("v3_1to1", one), ("mse", _recon_mse(abl.model_, Xt)), ("mse0", mse0)):
            cols[k].append(v)
        rows.append((seed, acc, acc_abl, acc_km, acc_ood, one, leak["style_from_z_s_knn"],
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
