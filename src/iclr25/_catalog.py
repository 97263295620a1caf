# ruff: noqa: E501  (the generated rows below: one a line)
"""What ``iclr25 list`` prints, readable without importing torch or any method.

The claim registry (:mod:`iclr25.claims`) is built by importing every method's ``claim``
module, which imports torch: 6 s of CPU to print a list. This module holds a copy of what the
list shows (each method's paper number and title, each claim's id, metric, direction,
threshold and unit, and the optional modules each method's ``__init__`` requires), written
from the registry by ``python -m iclr25._catalog``; tests/core/test_catalog.py fails, naming
that command, whenever the copy and the registry differ.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from typing import Any


def lines(papers: Mapping[str, Any], claims: Iterable[Any],
          unavailable: Mapping[str, str]) -> list[str]:
    """The list's lines from papers ``{method: Paper}`` (README order), claims (registry
    order) and ``{method: why it is not importable}``."""
    claims = list(claims)
    out = []
    for name, p in papers.items():
        out.append(f"{p.number:>2}. {name}: {p.title}")
        out += [f"      {c.id}  [{c.metric} {c.direction} {c.threshold:g} {c.unit}]"
                for c in claims if c.method == name]
    out += [f"    {name}: not importable ({why})" for name, why in unavailable.items()]
    return out


class _Row:
    """A catalog row read as a Paper or a Claim (only the fields the list shows)."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def _missing(name: str) -> str | None:
    """Why method ``name`` cannot be imported here: the message of the first module its
    ``__init__`` requires that is not installed (as ``iclr25._optional.require`` says it)."""
    for module, extra in REQUIRES.get(name, ()):
        if importlib.util.find_spec(module) is None:
            return f"{module} is needed here but is not installed: pip install 'iclr25[{extra}]'"
    return None


def listing() -> list[str]:
    """``iclr25 list``'s lines from the catalog; methods missing a required module are
    listed as not importable, as the registry would."""
    why = {name: _missing(name) for name, _, _ in PAPERS}
    papers = {name: _Row(number=n, title=t) for name, n, t in PAPERS if why[name] is None}
    claims = [_Row(id=i, method=i.split(".")[0], metric=m, direction=d, threshold=t, unit=u)
              for i, m, d, t, u in CLAIMS]
    return lines(papers, claims, {n: w for n, w in why.items() if w is not None})


def generate() -> str:
    """This module's generated part, from the live registry (imports every method).

    Raises:
        RuntimeError: a method is not importable here (its claims would be left out).
    """
    import ast
    from pathlib import Path

    from iclr25 import claims as registry

    unavailable = registry.unavailable_methods()
    if unavailable:
        raise RuntimeError(f"install every extra first; not importable: {unavailable}")
    papers = [(n, p.number, p.title) for n, p in registry.papers().items()]
    rows = [(c.id, c.metric, c.direction, c.threshold, c.unit)
            for c in registry.discover().values()]
    requires = {}
    for name, _, _ in papers:
        init = Path(registry.__file__).parent / name / "__init__.py"
        calls = [n for n in ast.walk(ast.parse(init.read_text())) if isinstance(n, ast.Call)
                 and getattr(n.func, "id", None) == "require"]
        if calls:
            requires[name] = tuple(tuple(ast.literal_eval(a) for a in c.args) for c in calls)

    def fmt(items: Iterable[str]) -> str:  # one row a line
        return "".join(f"    {item},\n" for item in items)

    return (f"{_MARK}\nPAPERS = (\n{fmt(map(repr, papers))})\nCLAIMS = (\n"
            f"{fmt(map(repr, rows))})\nREQUIRES = {{\n"
            f"{fmt(f'{k!r}: {v!r}' for k, v in requires.items())}}}\n")


_MARK = "# --- written by `python -m iclr25._catalog` from the registry: do not edit below ---"

if __name__ == "__main__":
    from pathlib import Path

    here = Path(__file__)
    text = here.read_text()
    here.write_text(text[:text.index(f"\n{_MARK}\n") + 1] + generate())
    print(f"wrote {here}")

# --- written by `python -m iclr25._catalog` from the registry: do not edit below ---
PAPERS = (
    ('mother', 1, 'Unsupervised Model Tree Heritage Recovery'),
    ('ies', 2, 'Instance-dependent Early Stopping'),
    ('los', 3, 'Rethinking Classifier Re-Training in Long-Tailed Recognition: Label Over-Smooth Can Balance'),
    ('crh', 4, 'Formation of Representations in Neural Networks'),
    ('dbtsw', 5, 'Distance-Based Tree-Sliced Wasserstein Distance'),
    ('oft', 6, 'Optimal Flow Transport and its Entropic Regularization: a GPU-friendly Matrix Iterative Algorithm for Flow Balance Satisfaction'),
    ('toss', 7, 'Towards Self-Supervised Covariance Estimation in Deep Heteroscedastic Regression'),
    ('matern', 8, 'Matérn Kernels for Tunable Implicit Surface Reconstruction'),
    ('locodl', 9, 'LoCoDL: Communication-Efficient Distributed Learning with Local Training and Compression'),
    ('kmeans', 10, 'Online Clustering with Nearly Optimal Consistency'),
    ('schull', 11, 'A Theoretically-Principled Sparse, Connected, and Rigid Graph Representation of Molecules'),
    ('comm', 12, 'What to align in multimodal contrastive learning?'),
    ('urlost', 13, 'Unsupervised Representation Learning withOut Stationarity or Topology'),
    ('v3', 14, 'Unsupervised Disentanglement of Content and Style via Variance-Invariance Constraints'),
    ('cox', 15, 'Towards Out-of-Modal Generalization without Instance-level Modal Correspondence'),
    ('dcpt', 16, 'Universal Image Restoration Pre-training via Degradation Classification'),
    ('lowlight', 17, 'Interpretable Unsupervised Joint Denoising and Enhancement for Real-World Low-Light Scenarios'),
    ('gsd', 18, 'Generalized Behavior Learning from Diverse Demonstrations'),
    ('lsdt', 19, 'Long-Short Decision Transformer: Bridging Global and Local Dependencies for Generalized Decision-Making'),
)
CLAIMS = (
    ('mother.undirected_accuracy', 'undirected edge accuracy', '>=', 0.95, 'fraction'),
    ('mother.directed_accuracy', 'directed edge accuracy', '>=', 0.85, 'fraction'),
    ('mother.directed_beats_random_root', 'directed accuracy minus expected random-root directed accuracy', '>=', 0.1, 'fraction'),
    ('mother.clustering_accuracy', 'tree clustering accuracy', '>=', 0.95, 'fraction'),
    ('mother.kurtosis_monotone', 'fraction of true edges whose kurtosis rises', '>=', 0.8, 'fraction'),
    ('mother.lora_rank_undirected', 'undirected edge accuracy (rank distance)', '>=', 1.0, 'fraction'),
    ('ies.backprop_saved', 'fraction of backprop instances saved (mean over seeds)', '>=', 0.1, 'fraction'),
    ('ies.accuracy_kept', 'test accuracy IES - plain, percentage points (final epoch, mean over seeds)', '>=', -0.5, 'points'),
    ('ies.beats_random_removal', "test accuracy IES - random removal at IES's rate, percentage points (final epoch, mean over seeds)", '>=', 0.5, 'points'),
    ('ies.beats_small_loss', "test accuracy IES - small-loss removal at IES's rate, percentage points (final epoch, mean over seeds)", '>=', 0.0, 'points'),
    ('los.balanced_accuracy_gain', 'balanced accuracy gain, LOS(ε=0.98) − CE re-training', '>=', 2.0, 'points'),
    ('los.few_shot_gain', 'few-shot accuracy gain, LOS(ε=0.98) − CE re-training', '>=', 0.1, 'points'),
    ('los.loma_decreases', 'fraction of consecutive ε steps where the seed-mean LoMa decreases', '>=', 1.0, 'fraction'),
    ('los.beats_strongest_retraining', 'balanced accuracy, LOS(ε=0.98) − max(CB-CE, logit adj., LWS), seed means', '>=', 0.0, 'points'),
    ('crh.backward_alignment', 'min of b-RGA, b-RWA, b-GWA at wd=1e-2 (seed means)', '>=', 0.75, 'α'),
    ('crh.increases_with_weight_decay', 'fraction of consecutive weight-decay steps where the six-relation mean rises', '>=', 0.8, 'fraction'),
    ('crh.backward_above_null', 'min over b-RGA, b-RWA, b-GWA of α / mean |α_null| at wd=1e-2', '>=', 3.0, 'ratio'),
    ('dbtsw.flow_vs_sw', 'AUC(SW) - AUC(Db-TSW), AUC = mean log10 W2² over checkpoints', '>=', 0.2, 'log10 W2²'),
    ('dbtsw.splitting_vs_tswsl', 'AUC(TSW-SL) - AUC(Db-TSW), AUC = mean log10 W2² over checkpoints', '>=', 0.2, 'log10 W2²'),
    ('dbtsw.flow_2d', 'AUC(SW) - AUC(Db-TSW), AUC = mean log10 W2² over checkpoints', '>=', 0.0, 'log10 W2²'),
    ('oft.near_optimal', 'worst-seed relative cost gap to the HiGHS optimum (1 if balance violation > 1e-6·Σs⁺), reg=1e-3, <= 20000 iterations', '<=', 0.02, 'fraction'),
    ('oft.capacitated', 'worst-seed relative cost gap to the capacitated HiGHS optimum (1 if balance violation > 1e-6·Σs⁺ or capacity violation > 1e-9·cap); cap = 0.25 x largest exact uncapacitated edge flow', '<=', 0.02, 'fraction'),
    ('toss.univariate_epochs', 'σ error (mean|σ̂−σ| / mean σ, 5000 test points) ToSS / NLL after 5 epochs (quick: 2), mean over seeds', '<=', 0.5, 'ratio'),
    ('toss.supervised_bound', "test cov_error (mean ‖Σ̂−Σ‖_F/‖Σ‖_F) of the bound with true Σ labels / NLL's, mean over seeds", '<=', 0.5, 'ratio'),
    ('toss.self_supervised', "test cov_error of ToSS (default pseudo_covariance) / NLL's, mean over seeds", '<=', 1.0, 'ratio'),
    ('toss.vs_tic', "test cov_error of ToSS (default pseudo_covariance) / TIC's on the same data, mean over seeds; epoch_time_ratio = ToSS/TIC training time per epoch", '<=', 1.0, 'ratio'),
    ('matern.beats_arccos', 'mean IoU(Matérn 3/2, h=0.5) - mean IoU(arc-cosine), bumpy sphere, over sizes and seeds, same points', '>=', 0.005, 'IoU'),
    ('matern.tunable', 'IoU(Matérn 1/2, h=0.1) - IoU(Matérn 1/2, h=2.0), bumpy sphere, smallest size, seed mean', '>=', 0.01, 'IoU'),
    ('locodl.uplink_bits', 'LoCoDL bits / min(GD, Scaffnew, DIANA rand-1 bits) to ‖y − x*‖ ≤ tol, theorem parameters, seed mean', '<=', 0.5, '× best baseline'),
    ('locodl.vs_adiana', 'untuned LoCoDL rand-1 bits / ADIANA rand-1 bits at its best step η_thm·4^j, j = 0..8, seed mean', '<=', 1.0, '× tuned ADIANA'),
    ('kmeans.consistency', 'max over orders and seeds of n_center_changes_ / (k ln n)', '<=', 3.0, '× k ln n'),
    ('kmeans.cost', 'mean over runs and checkpoints (every 100 points) of cost_ / KMeans(n_init=5).inertia_ on the prefix', '<=', 1.2, '× KMeans'),
    ('schull.connected_sparse', 'fraction of the panel connected with E_undirected <= 3N-6', '>=', 1.0, 'fraction'),
    ('schull.rigid', 'fraction of non-planar panel structures with rigidity rank 3N-6', '>=', 0.95, 'fraction'),
    ('schull.energy_mae', '1 - MAE(SchNetCHA)/MAE(SchNet), test energy MAE, seed means', '>=', 0.1, 'fraction'),
    ('schull.force_mae', '1 - force MAE(SchNetCHA)/force MAE(SchNet), test forces, seed means', '>=', 0.0, 'fraction'),
    ('comm.synergy', 'synergy balanced accuracy, CoMM - Cross (mean over seeds)', '>=', 0.08, 'fraction'),
    ('comm.uniqueness', 'uniqueness (texture 1) balanced accuracy, CoMM - Cross (mean over seeds)', '>=', 0.25, 'fraction'),
    ('comm.redundancy', 'redundancy (shape) balanced accuracy of CoMM (mean over seeds)', '>=', 0.9, 'fraction'),
    ('urlost.topology_recovery', 'mean intra-cluster pixel distance on the unpermuted grid ÷ that of random equal-size groups (K = 10, 16 clusters), mean over seeds', '<=', 0.5, '× random'),
    ('urlost.density_adjustment', "relative drop of the std over clusters of Σ radius² (the repo's area_std), ≈200 sensors, K = 10, 16 clusters, mean over seeds", '>=', 0.2, 'fraction'),
    ('urlost.representation', '5-shot linear-probe accuracy (mean-pooled tokens, 5 label draws) of URLOST minus a shared 4x4-patch MAE of the same size, same data and seeds (raw pixels and PCA + LR are reported beside it)', '>=', 0.03, 'accuracy'),
    ('v3.beats_baselines', 'V3 macro purity minus max(VQ-AE ablation at equal epochs, k-means K=10 on raw fragments), per seed, mean', '>=', 0.1, 'purity'),
    ('v3.codebook_accuracy', 'macro codebook purity (official tester.py) on test-split sequences', '>=', 0.75, 'purity'),
    ('v3.ood_colours', 'macro purity on unseen colours through the code -> digit map of the training colours, minus in-distribution purity', '>=', -0.15, 'purity'),
    ('cox.semi_supervised_gain', 'OOM test accuracy, COX - ERM (mean over seeds); LabelSpreading and self-training on the same labels reported beside it', '>=', 0.05, 'fraction'),
    ('dcpt.all_in_one_gain', "mean PSNR of the DCPT arm - the scratch arm trained the DCPT arm's fine-tuning steps, over kinds and seeds", '>=', 0.2, 'dB'),
    ('dcpt.degradation_classification', 'test-split top-1 accuracy over 3 kinds after a fixed pre-training budget (chance 0.33)', '>=', 0.9, 'fraction'),
    ('lowlight.beats_zero_dce', 'plain PSNR(full) - PSNR(Zero-DCE) on the held-out test images', '>=', 1.0, 'dB'),
    ('lowlight.pairing_denoises', 'noise_to_signal(full) / noise_to_signal(no-pairing ablation)', '<=', 0.75, 'ratio'),
    ('lowlight.beats_classical', 'GT-mean PSNR(full) - max over classical pipelines of GT-mean PSNR', '>=', 0.0, 'dB'),
    ('gsd.interpolation_recovery', 'VL10(GSD) / VL10(IG+M) on interpolation targets {−0.5, 0, 0.5}, seed mean', '<=', 0.8, 'ratio'),
    ('gsd.selected_behaviours_succeed', "success (x >= 1) of GSD's per-chunk argmin behaviours, interpolation targets", '>=', 0.9, 'fraction'),
    ('lsdt.long_range', 'min(LSDT − DC, 0.3 + LSDT − (DT − 0.05)), DelayedCue success, seed mean (cue 15 tokens back, DC reaches 10): ≥ 0.3 iff LSDT − DC ≥ 0.3 and LSDT ≥ DT − 0.05', '>=', 0.3, 'success'),
    ('lsdt.markovian_parity', 'Pendulum-v1 (medium-replay data) normalised return LSDT − max(DT, DC), seed mean', '>=', -0.05, 'normalised return'),
)
REQUIRES = {
    'dcpt': (('skimage', 'image'), ('PIL', 'image')),
    'lowlight': (('skimage', 'image'), ('PIL', 'image')),
    'gsd': (('gymnasium', 'rl'),),
    'lsdt': (('gymnasium', 'rl'),),
}
