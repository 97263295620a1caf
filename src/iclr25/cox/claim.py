"""COX on digits seen through two aligned known modalities and one unknown sensor (notes
Sec. 4.5): with 3% of OOM rows paired and labelled (the paper's low-label regime), COX beats
training on those labels alone (ERM).

At 10% labelled pairs ERM alone already reaches 0.80 and COX adds nothing, so the rate is 3%:
ERM is weak and the fully labelled IM side carries the knowledge COX transfers. The control
checks that ERM learned (10 points over its untrained self and over chance) and is not
saturated (below 0.9 x the fully supervised OOM network). LabelSpreading(kernel="knn") and
self-training on the raw OOM input with the same labels are what a user would also try: they
are the claim's competitors, named beside it (not paper baselines). The paper reports no
number for this setting (its tables are on ImageBind/LanguageBind data).

The former claim ``cox.emergent_correspondence`` (with no pairs at all, COX's created IM-OOM
matches are class-pure) was retired (issue 72), its reason in the deviations: it measured the
library's unpaired pipeline, whose class names can only be the bootstrap's; the pipeline
itself stays in :class:`~iclr25.cox.COX` (``pairs=None``) with its tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F

from iclr25._train import accuracy, fit_minibatch, seeded_mlp
from iclr25.claims import Comparison, Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.cox.model import COX
from iclr25.cox.testbed import digit_modalities, semi_supervised_split


@dataclass(frozen=True)
class Digits(Setting):
    # budget: COX steps and the IM encoders' steps
    budget_fields: ClassVar[tuple[str, ...]] = ("steps", "im_steps")
    rate: float              # labelled (and paired) fraction of OOM train rows
    steps: int               # COX optimisation steps (batch 128 per stream)
    im_steps: int            # CLIP + supervised steps building the frozen IM encoders
    ablations: bool          # also fit COX without explore and without prior_kl
    seeds: tuple[int, ...]


@dataclass
class SemiEvidence(Evidence):
    gain_vs_erm: float = scalar("fraction", "OOM test accuracy, COX - ERM, mean over seeds")
    gain_vs_spreading: float = scalar("fraction", "COX - LabelSpreading(knn), mean (reported)")
    cox_mean: float = scalar("fraction", "COX OOM test accuracy, mean over seeds")
    erm_mean: float = scalar("fraction", "ERM on the labelled rows alone, mean over seeds")
    erm_untrained: float = scalar("fraction", "the ERM network before training, mean")
    supervised_mean: float = scalar("fraction", "the ERM network on every OOM label, mean")
    spreading_mean: float = scalar("fraction", "LabelSpreading(knn) on the raw OOM input, mean")
    self_training_mean: float = scalar("fraction", "self-training (logistic), mean")
    cox: list[float] | None = None
    erm: list[float] | None = None
    untrained: list[float] | None = None
    supervised: list[float] | None = None
    spreading: list[float] | None = None
    self_training: list[float] | None = None
    no_explore: list[float] | None = None
    no_prior_kl: list[float] | None = None
    per_seed: Table | None = None


def _erm(d, y_oom, steps: int, seed: int) -> float:  # noqa: ANN001
    """The ERM network trained on the labelled rows (steps = 0: untrained)."""
    lab = torch.nonzero(y_oom >= 0).flatten()
    net = seeded_mlp([64, 256, 64, 10], seed=seed, device=d.X_oom.device)
    if steps == 0:
        return accuracy(net, d.X_oom_test, d.y_oom_test)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
    epochs = max(1, steps * 128 // len(lab))
    fit_minibatch(net, F.cross_entropy, d.X_oom[lab], y_oom[lab], epochs=epochs,
                  batch_size=128, optimizer=opt, seed=seed)
    return accuracy(net, d.X_oom_test, d.y_oom_test)


def _sklearn(d, y_oom, kind: str) -> float:  # noqa: ANN001
    from sklearn.linear_model import LogisticRegression
    from sklearn.semi_supervised import LabelSpreading, SelfTrainingClassifier

    est = (LabelSpreading(kernel="knn") if kind == "spreading"
           else SelfTrainingClassifier(LogisticRegression(max_iter=500)))
    est.fit(d.X_oom.cpu().numpy(), y_oom.cpu().numpy())
    return float((est.predict(d.X_oom_test.cpu().numpy()) == d.y_oom_test.cpu().numpy()).mean())


def _cox(d, pairs, y_oom, steps: int, seed: int, **kw) -> float:  # noqa: ANN001
    labels = {m: d.y_im for m in d.im_train}
    m = COX(10, bottleneck=64, steps=steps, seed=seed, floor="off", **kw).fit(
        d.X_oom, d.im_train, labels, pairs=pairs, y_oom=y_oom)
    return m.score(d.X_oom_test, d.y_oom_test)


_DIGITS_DEV = ("8x8 digits through two small CLIP-aligned IM encoders (PCA-32, 4x4 pool) and "
               "a random sensor as the OOM modality, instead of ImageBind/LanguageBind "
               "embeddings of MSR-VTT etc.: offline, CPU budget",)


# The unpaired claim's retirement (issue 72): why no naming faithful to the paper exists
_RETIRED = (
    "retired (issue 72): cox.emergent_correspondence, that with no pairs COX's created IM-OOM "
    "matches are class-pure (>= 0.7), measured the library's unpaired pipeline (GW bootstrap, "
    "variance floor, label-gated re-matching), not the paper's: the released code has no "
    "zero-pair path (its VIB and OOM losses read only the paired, labelled rows, NaN at rate "
    "0) and the paper's readable text names the unsupervised case without a procedure. Its "
    "class names could only be the bootstrap's (GW purity 0.082, chance 0.1; final 0.062, "
    "0.71 under the best renaming, full scale, 3 draws); the paper justifies its "
    "correspondences by information, and mutual information is unchanged by any one-to-one "
    "renaming of classes, so no step faithful to the paper can name them",)


def _modalities(seed: int, setting: Digits, device: torch.device):  # noqa: ANN202
    d = digit_modalities(seed, im_steps=setting.im_steps)
    return d._replace(im_train={k: v.to(device) for k, v in d.im_train.items()},
                      **{k: getattr(d, k).to(device) for k in (
                          "y_im", "im_order", "X_oom", "y_oom", "X_oom_test", "y_oom_test")})


@experiment(quick=Digits(rate=0.03, steps=100, im_steps=150, ablations=False, seeds=(0,),
                         deviations=("smoke test: 100 steps, one seed", *_DIGITS_DEV,
                                     *_RETIRED)),
            full=Digits(rate=0.03, steps=400, im_steps=300, ablations=True, seeds=(0, 1, 2),
                        deviations=("400 optimisation steps (batch 128) instead of the "
                                    "official 50 epochs: CPU budget", *_DIGITS_DEV,
                                    *_RETIRED)),
            random=(
                "the digits split, IM encoders, permutation and sensor of the testbed",
                "the labelled subset",
                "COX's and ERM's initialisations and batches",
            ),
            per_draw=("seeds",),
            cost=(6.2, 37))
def semi_supervised(setting: Digits, ctx: Context) -> SemiEvidence:
    res: dict[str, list[float]] = {k: [] for k in (
        "cox", "erm", "untrained", "supervised", "spreading", "self_training", "no_explore",
        "no_prior_kl")}
    rows = []
    for s in setting.seeds:
        seed = ctx.seed + s
        d = _modalities(seed, setting, ctx.device)
        pairs, y = semi_supervised_split(d, setting.rate, seed)
        res["cox"].append(_cox(d, pairs, y, setting.steps, seed))
        res["erm"].append(_erm(d, y, setting.steps, seed))
        res["untrained"].append(_erm(d, y, 0, seed))
        res["supervised"].append(_erm(d, d.y_oom, setting.steps, seed))
        res["spreading"].append(_sklearn(d, y, "spreading"))
        res["self_training"].append(_sklearn(d, y, "self_training"))
        if setting.ablations:
            res["no_explore"].append(_cox(d, pairs, y, setting.steps, seed, warmup=1.0))
            res["no_prior_kl"].append(_cox(d, pairs, y, setting.steps, seed, kl_weight=0.0))
        rows.append((seed, *(round(v[-1], 4) if v else None for v in res.values())))
    fig = ctx.figure("accuracy_per_method", figsize=(6, 3))
    ax = fig.subplots()
    names = [k for k, v in res.items() if v]
    ax.bar(names, [float(np.mean(res[k])) for k in names],
           yerr=[float(np.std(res[k])) for k in names])
    ax.set_ylabel("OOM test accuracy")
    ax.set_ylim(0, 1)
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    mean = {k: float(np.mean(v)) if v else float("nan") for k, v in res.items()}
    return SemiEvidence(
        gain_vs_erm=mean["cox"] - mean["erm"], gain_vs_spreading=mean["cox"] - mean["spreading"],
        cox_mean=mean["cox"], erm_mean=mean["erm"], erm_untrained=mean["untrained"],
        supervised_mean=mean["supervised"], spreading_mean=mean["spreading"],
        self_training_mean=mean["self_training"], **res,
        per_seed=Table("OOM test accuracy per seed", ("seed", *res), rows))


@claim("cox.semi_supervised_gain", experiment=semi_supervised,
       sentence="With 3% of OOM rows paired and labelled, COX beats training the same OOM "
                "network on those labels alone (ERM)",
       metric="OOM test accuracy, COX - ERM (mean over seeds); LabelSpreading and "
              "self-training on the same labels reported beside it",
       unit="fraction",
       paper_figure="unverified (paper Tab. 2-4 on ImageBind data; no digits number)",
       threshold=0.05, direction=">=", baseline="ERM on the labelled OOM rows",
       control=lambda ev: (ev.erm_mean >= max(ev.erm_untrained, 0.1) + 0.1
                           and ev.erm_mean < 0.9 * ev.supervised_mean),
       control_doc="ERM learned (its accuracy beats both its untrained self and chance, 0.1, "
                   "by 0.1 or more) and is not saturated (below 0.9 x the same network "
                   "trained on every OOM label)",
       competitors=lambda ev: {"LabelSpreading(knn)": ev.spreading_mean,
                               "self-training(logistic)": ev.self_training_mean})
def semi_supervised_gain(ev: SemiEvidence) -> Comparison:
    return Comparison(ours=ev.cox_mean, baseline=ev.erm_mean, value=ev.gain_vs_erm)

