"""The recipe table of ``test_hostile_inputs.py``: one valid call of every public callable
(small inputs, a few milliseconds each), or one line saying why the sweep cannot drive it."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
from torch import nn


@dataclass
class Recipe:
    """A valid call ``fn(**make())``.

    ``ok``: ``{arg: cases}`` a documented rule accepts ("*" for every argument);
    ``bound``: the arguments whose shape must agree with a partner or a fitted model
    (default: every array argument when there are two or more); ``alias``: other words an
    error may use for an argument (a model name for its weights); ``known``:
    ``{(arg, case): why}`` refusals still missing (strict xfail, so a fix is noticed).
    """

    fn: Callable
    make: Callable[[], dict]
    ok: dict[str, set[str]] = field(default_factory=dict)
    bound: set[str] | None = None
    alias: dict[str, tuple[str, ...]] = field(default_factory=dict)
    deterministic: bool = True
    known: dict[tuple[str, str], str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kw = self.make()
        self.arrays = [k for k, v in kw.items()
                       if isinstance(v, (torch.Tensor, np.ndarray))]
        if self.bound is None:
            self.bound = set(self.arrays) if len(self.arrays) >= 2 else set()

    def partners(self, arg: str) -> tuple[str, ...]:
        return (*self.alias.get(arg, ()), *(a for a in self.arrays if a != arg))

    def marks(self, arg: str, case: str) -> list:
        why = self.known.get((arg, case)) or self.known.get(("*", case))
        return [pytest.mark.xfail(reason=why, strict=True)] if why else []


def R(fn: Callable, ok: dict | None = None, *, bound: set | None = None,
      alias: dict | None = None, det: bool = True, known: dict | None = None,
      **kwargs) -> Recipe:
    def make() -> dict:
        return {k: (v() if callable(v) and not isinstance(v, (torch.Tensor, nn.Module))
                    else v.clone() if isinstance(v, torch.Tensor)
                    else v.copy() if isinstance(v, np.ndarray) else v)
                for k, v in kwargs.items()}
    return Recipe(fn, make, ok or {}, bound, alias or {}, det, known or {})


def _g(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=_g(seed), dtype=dtype)


def rand(*shape: int, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    return torch.rand(*shape, generator=_g(seed), dtype=dtype)


def labels(n: int, k: int) -> torch.Tensor:
    return torch.arange(n) % k


def spd(d: int, seed: int = 0) -> torch.Tensor:
    A = randn(d, d, seed=seed, dtype=torch.float64)
    return A @ A.T + d * torch.eye(d, dtype=torch.float64)


RECIPES: dict[str, Recipe] = {}
UNDRIVEN: dict[str, str] = {}
#: a module's forward checks dtype and shape from metadata (``_checks.check_batch``) but not
#: values, which would cost a device sync every training step; an empty batch is a batch
MODULE = {"nan", "inf", "empty"}
RESULT = "a result record (a dataclass the library fills in), not an entry point"
SCALARS = "scalar arguments only: the constructor's checks are in the method's own tests"


# --- mother --------------------------------------------------------------------------------

def _mother():
    from iclr25 import mother as m

    D = torch.tensor([[0.0, 1.0, 2.0, 2.5], [1.0, 0.0, 1.5, 2.0], [2.0, 1.5, 0.0, 1.0],
                      [2.5, 2.0, 1.0, 0.0]], dtype=torch.float64)
    ku = torch.tensor([4.0, 3.0, 2.0, 1.0], dtype=torch.float64)
    W = [randn(4, 4, seed=s) for s in range(3)]

    def models(W0, W1, W2):
        return {"m0": {"w": W0}, "m1": {"w": W1}, "m2": {"w": W2}}

    wal = {f"W{i}": (f"m{i}", "w", "models") for i in range(3)}
    RECIPES.update({
        "mother.build_forest": R(lambda D, ku, cluster_distances: m.build_forest(
            D, ku, n_trees=2, cluster_distances=cluster_distances).parents,
            D=D, ku=ku, cluster_distances=D),
        "mother.cluster_trees": R(lambda D: m.cluster_trees(D, 2), D=D),
        "mother.clustering_accuracy": R(m.clustering_accuracy, pred=torch.tensor([0, 0, 1, 1]),
                                        truth=np.array([1, 1, 0, 0])),
        "mother.direction_penalty": R(m.direction_penalty, ku=ku),
        "mother.edge_costs": R(m.edge_costs, D=D, ku=ku),
        "mother.pairwise_distances": R(lambda W0, W1, W2: m.pairwise_distances(
            models(W0, W1, W2)), alias=wal, bound=set(), W0=W[0], W1=W[1], W2=W[2]),
        "mother.kurtosis_scores": R(lambda W0, W1, W2: m.kurtosis_scores(models(W0, W1, W2)),
                                    alias=wal, bound=set(), W0=W[0], W1=W[1], W2=W[2]),
        "mother.recover_tree": R(lambda W0, W1, W2: m.recover_tree(
            models(W0, W1, W2)).parents, alias=wal, bound=set(), W0=W[0], W1=W[1], W2=W[2]),
    })
    UNDRIVEN.update({
        "mother.ModelForest": RESULT,
        "mother.ModelSource": "abstract reader of one model; built by as_sources",
        "mother.as_sources": "models are paths, modules or state dicts: driven through "
                             "pairwise_distances / recover_tree",
        "mother.edge_accuracy": "takes parent mappings or edge lists, no array",
        "mother.select_layers": "takes ModelSources and a layer spec, no array",
    })


# --- ies ------------------------------------------------------------------------------------

def _ies():
    from iclr25 import ies

    def update(cls):
        def run(indices, losses):
            s = cls(6)
            s.update(indices, losses)
            s.update(indices, losses * 0.5)
            return s.state_dict()
        return run

    def masked(indices, loss_per_sample):
        return ies.InstanceEarlyStopping(6).masked_loss(loss_per_sample, indices)

    net = nn.Linear(3, 2)
    torch.nn.init.constant_(net.weight, 0.1)

    def record(X, y, indices):
        s = ies.InstanceEarlyStopping(5)
        return ies.record_losses(s, net, X, y, indices)

    RECIPES.update({
        "ies.InstanceEarlyStopping": R(update(ies.InstanceEarlyStopping),
                                       indices=torch.tensor([0, 2, 4]),
                                       losses=torch.tensor([1.0, 0.5, 0.2])),
        "ies.InstanceEarlyStopping:masked_loss": R(
            masked, indices=torch.tensor([0, 2, 4]),
            loss_per_sample=torch.tensor([1.0, 0.5, 0.2])),
        "ies.LossThresholdStopping": R(update(ies.LossThresholdStopping),
                                       indices=torch.tensor([0, 2, 4]),
                                       losses=torch.tensor([1.0, 0.5, 0.2])),
        "ies.per_sample_cross_entropy": R(ies.per_sample_cross_entropy, logits=randn(4, 3),
                                          y=labels(4, 3)),
        "ies.record_losses": R(record, X=randn(5, 3), y=labels(5, 2),
                               indices=torch.tensor([0, 3]), bound={"X", "y"}),
    })
    UNDRIVEN["ies.IESSampler"] = "takes a stopper, no array"


# --- los ------------------------------------------------------------------------------------

def _los():
    from iclr25 import los

    logits, y = randn(6, 3), labels(6, 3)
    X = randn(12, 4) + 2.0 * labels(12, 3)[:, None]
    yX = labels(12, 3)
    fitted = los.RetrainedClassifier(init="logistic", epochs=1, seed=0).fit(X, yX)
    RECIPES.update({
        "los.LabelOverSmoothingLoss": R(los.LabelOverSmoothingLoss(0.9), logits=logits, y=y),
        "los.label_over_smoothing_loss": R(los.label_over_smoothing_loss, logits=logits, y=y),
        "los.logits_magnitude": R(los.logits_magnitude, logits=logits, y=y),
        "los.regularized_std": R(los.regularized_std, logits=logits, y=y),
        "los.smoothed_targets": R(lambda y: los.smoothed_targets(y, 3, 0.5), y=y),
        "los.per_class_accuracy": R(lambda y_pred, y: los.per_class_accuracy(y_pred, y, 3),
                                    y_pred=labels(6, 3).flip(0), y=y),
        "los.balanced_accuracy": R(lambda y_pred, y: los.balanced_accuracy(y_pred, y, 3),
                                   y_pred=labels(6, 3).flip(0), y=y),
        "los.group_accuracy": R(los.group_accuracy, y_pred=labels(6, 3).flip(0), y=y,
                                train_counts=torch.tensor([150, 50, 5]),
                                bound={"y_pred", "y"}),
        "los.shot_groups": R(los.shot_groups, train_counts=torch.tensor([150, 50, 5])),
        "los.class_balanced_weights": R(los.class_balanced_weights,
                                        counts=torch.tensor([150, 50, 5])),
        # X is only indexed, never read: any values and width are kept as they are
        "los.make_long_tailed": R(lambda X, y: los.make_long_tailed(X, y, 2.0, seed=0),
                                  {"X": {"nan", "inf", "cols"}}, X=X, y=yX),
        "los.retrain_classifier": R(lambda features, y: los.retrain_classifier(
            features, y, n_classes=3, epochs=1, seed=0), {"features": {"cols"}},
            features=X, y=yX),
        "los.RetrainedClassifier": R(lambda X, y: los.RetrainedClassifier(
            init="logistic", epochs=1, seed=0).fit(X, y).predict(X), {"X": {"cols"}}, X=X, y=yX),
        "los.RetrainedClassifier:predict": R(fitted.predict, {"X": {"rows"}}, bound={"X"}, X=X),
    })
    UNDRIVEN["los.long_tailed_counts"] = SCALARS


# --- crh ------------------------------------------------------------------------------------

def _crh():
    from iclr25 import crh

    A, B = spd(4, 0), spd(4, 1)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).double()

    def probe(x, y):
        out = crh.AlignmentProbe(net, layers="2").run([(x, y)])
        return {k: v.scores for k, v in out.items()}

    RECIPES.update({
        "crh.alignment_score": R(crh.alignment_score, A=A, B=B),
        "crh.power_law_exponent": R(lambda A, Z: tuple(crh.power_law_exponent(A, Z)), A=A, Z=B),
        "crh.rotation_null": R(lambda A, B: crh.rotation_null(A, B, seed=0, n_draws=3), A=A, B=B),
        "crh.AlignmentProbe": R(probe, x=randn(8, 3, dtype=torch.float64), y=labels(8, 2)),
    })
    UNDRIVEN.update({
        "crh.LayerAlignment": RESULT, "crh.PowerLawFit": RESULT,
        "crh.random_orthogonal": "scalar arguments only (d, seed, dtype)",
    })


for _section in (_mother, _ies, _los, _crh):
    _section()


# --- kmeans, dbtsw, toss, oft, matern -------------------------------------------------------

def _kmeans():
    from iclr25 import kmeans as km

    X = (randn(30, 2, dtype=torch.float64) + 4.0 * labels(30, 2)[:, None]).double()
    fitted = km.ConsistentKMeans(n_clusters=2, seed=0).fit(X)
    RECIPES.update({
        "kmeans.ConsistentKMeans": R(lambda X: km.ConsistentKMeans(n_clusters=2, seed=0)
                                     .fit(X).cluster_centers_, X=X),
        "kmeans.ConsistentKMeans:predict": R(fitted.predict, {"X": {"rows"}}, bound={"X"},
                                             X=X[:5]),
        # any number of centres; a scalar weight is every row's (scikit-learn's rule)
        "kmeans.clustering_cost": R(km.clustering_cost, {"centers": {"rows"},
                                                         "sample_weight": {"ndim-"}}, X=X,
                                    centers=X[:2].clone(), sample_weight=torch.ones(30,
                                    dtype=torch.float64)),
        "kmeans.dz_seeding": R(lambda X, w: km.dz_seeding(X, w, 2, _g()), {"X": {"cols"}}, X=X,
                               w=torch.ones(30, dtype=torch.float64)),
    })


def _dbtsw():
    from iclr25 import dbtsw

    Xs, Xt = randn(6, 3), randn(5, 3, seed=1)
    RECIPES.update({
        "dbtsw.db_tsw": R(lambda X_s, X_t, a, b: dbtsw.db_tsw(X_s, X_t, a, b, n_trees=4,
                                                               seed=0),
                          X_s=Xs, X_t=Xt, a=torch.full((6,), 1 / 6), b=torch.full((5,), 0.2),
                          bound={"X_s", "X_t", "a", "b"}, ok={"X_s": {"rows"}, "X_t": {"rows"}},
                          alias={"a": ("X_s",), "b": ("X_t",)}),
        "dbtsw.DbTSWLoss": R(lambda X_s, X_t: dbtsw.DbTSWLoss(n_trees=4, seed=0)(X_s, X_t),
                             {"X_s": {"rows"}, "X_t": {"rows"}}, X_s=Xs, X_t=Xt),
        "dbtsw.tree_wasserstein": R(dbtsw.tree_wasserstein, coords=randn(2, 3, 4),
                                    masses=randn(2, 3, 4, seed=1)),
        # mean: a float, (d,) or (B, d) (documented)
        "dbtsw.sample_trees": R(lambda mean: dbtsw.sample_trees(2, 3, 4, mean=mean, seed=0),
                                {"mean": {"ndim+", "ndim-"}}, mean=torch.zeros(4)),
    })


def _toss():
    from iclr25 import toss

    m, L, y = randn(5, 2), torch.eye(2).expand(5, 2, 2).clone(), randn(5, 2, seed=1)
    cov = torch.eye(2, dtype=torch.float64).expand(5, 2, 2).clone()
    X, Y = randn(20, 2), randn(20, 2, seed=1)
    fitted = toss.HeteroscedasticRegressor(hidden=(8,), n_neighbors=4, epochs=1,
                                           seed=0).fit(X, Y)
    RECIPES.update({
        "toss.beta_nll_loss": R(toss.beta_nll_loss, mean=m, scale_tril=L, y=y),
        "toss.gaussian_nll_loss": R(toss.gaussian_nll_loss, mean=m, scale_tril=L, y=y),
        "toss.BetaNLLLoss": R(toss.BetaNLLLoss(), mean=m, scale_tril=L, y=y),
        "toss.GaussianNLLLoss": R(toss.GaussianNLLLoss(), mean=m, scale_tril=L, y=y),
        "toss.W2BoundLoss": R(lambda mean_p, sqrt_cov_p, mean_t, sqrt_cov_t: toss.W2BoundLoss()(
            mean_p, sqrt_cov_p, mean_t, sqrt_cov_t), mean_p=m, sqrt_cov_p=L, mean_t=y,
            sqrt_cov_t=L.clone()),
        "toss.w2_bound": R(toss.w2_bound, mean_p=m, sqrt_cov_p=L, mean_t=y, sqrt_cov_t=L.clone()),
        "toss.cov_error": R(toss.cov_error, cov_pred=cov, cov_true=cov.clone() * 2),
        "toss.gaussian_nll": R(toss.gaussian_nll, mean=m.double(), cov=cov, Y=y.double()),
        "toss.tac": R(toss.tac, mean=m.double(), cov=cov, Y=y.double()),
        "toss.gaussian_w2": R(toss.gaussian_w2, mean1=torch.zeros(2), cov1=spd(2),
                              mean2=torch.ones(2), cov2=spd(2, 1)),
        "toss.sqrtm_psd": R(toss.sqrtm_psd, {"cov": {"ndim+"}}, cov=spd(3)),  # batches
        "toss.whiten": R(toss.whiten, X=X.numpy().astype(np.float64)),
        "toss.pseudo_covariance": R(lambda X, Y: toss.pseudo_covariance(X, Y, n_neighbors=4),
                                    {"X": {"cols"}, "Y": {"cols"}}, X=X, Y=Y),
        "toss.CovarianceHead": R(toss.CovarianceHead(4, 2), {"h": {"rows", *MODULE}},
                                 bound={"h"}, h=randn(3, 4)),
        "toss.HeteroscedasticRegressor": R(lambda X, Y: toss.HeteroscedasticRegressor(
            hidden=(8,), n_neighbors=4, epochs=1, seed=0).fit(X, Y).predict(X),
            {"X": {"cols"}, "Y": {"cols"}}, X=X, Y=Y),
        "toss.HeteroscedasticRegressor:predict": R(fitted.predict, {"X": {"rows"}},
                                                   bound={"X"}, X=X),
    })
    UNDRIVEN.update({"toss.HeteroscedasticData": RESULT,
                     "toss.make_heteroscedastic": SCALARS, "toss.make_sinusoid": SCALARS})


def _oft():
    from iclr25 import oft

    s, C = oft.make_layered(2, 2, 2, seed=0)[:2]
    F = oft.min_cost_flow(s, C)
    # (B, n, n) batches of instances and an inf cost (no edge) are documented
    batch = {"ndim+"}
    RECIPES.update({
        "oft.min_cost_flow": R(oft.min_cost_flow, {"s": batch, "C": {*batch, "inf"}}, s=s, C=C),
        "oft.oft_sinkhorn": R(lambda s, C: oft.oft_sinkhorn(s, C, 0.1, numItermax=200),
                              {"s": batch, "C": {*batch, "inf"}}, s=s, C=C),
        "oft.flow_cost": R(oft.flow_cost, {"F": batch, "C": {*batch, "inf"}}, F=F, C=C),
        "oft.flow_violations": R(oft.flow_violations, {"F": batch, "s": batch}, F=F, s=s),
    })
    UNDRIVEN.update({
        "oft.make_layered": SCALARS,
        "oft.from_networkx": "takes a networkx graph, no array",
        "oft.read_dimacs": "reads a file: tests/oft cover bad files",
        "oft.make_netgen": SCALARS,
    })
    RECIPES["oft.write_dimacs"] = R(
        lambda s, C: oft.write_dimacs(tempfile.mkdtemp() + "/p.min", s, C), {"C": {"inf"}},
        s=s, C=C)


def _matern():
    from iclr25 import matern as mt

    P = randn(20, 3, dtype=torch.float64)
    P = P / P.norm(dim=1, keepdim=True)
    fitted = mt.KernelSurface(length_scale=0.8).fit(P, P)
    RECIPES.update({
        "mt.KernelSurface".replace("mt", "matern"): R(
            lambda points, normals: mt.KernelSurface(length_scale=0.8).fit(
                points, normals).alpha_, points=P, normals=P.clone()),
        "matern.KernelSurface:predict": R(fitted.predict, {"Q": {"rows"}}, bound={"Q"},
                                          Q=P[:5].clone() * 0.5),
        "matern.arccos_kernel": R(mt.arccos_kernel, {"X": {"rows"}, "Y": {"rows"}},
                                  X=P[:4].clone(), Y=P[4:9].clone()),
        "matern.matern_kernel": R(mt.matern_kernel, {"X": {"rows"}, "Y": {"rows"}},
                                  X=P[:4].clone(), Y=P[4:9].clone()),
        "matern.chamfer_l1": R(mt.chamfer_l1, {"X": {"rows"}, "Y": {"rows"}},
                               X=P[:4].clone(), Y=P[4:9].clone()),
        "matern.farthest_point_sampling": R(lambda X: mt.farthest_point_sampling(X, 3, seed=0),
                                            X=P),
        "matern.iou": R(mt.iou, occ_pred=torch.tensor([True, False, True, True]),
                        occ_true=torch.tensor([True, True, False, True])),
    })
    UNDRIVEN.update({
        "matern.make_shape": SCALARS,
        "matern.read_point_cloud": "reads a file: tests/matern cover bad files",
        "matern.write_mesh": "writes a file: driven in tests/matern",
    })


for _section in (_kmeans, _dbtsw, _toss, _oft, _matern):
    _section()


# --- urlost, schull, cox, v3, comm, locodl, datasets ----------------------------------------

def _urlost():
    from iclr25 import urlost as u

    X = randn(30, 6)
    S = u.dependence(X)
    W = u.knn_affinity(S, 2)
    lab = torch.tensor([0, 0, 1, 1, 2, 2])
    groups, _ = u.groups_from_labels(lab)
    coords, radii = u.retina_sampler(16, n_rings=3, n_angles=4, max_kernel=3)
    fitted = u.SelfOrganizingClusters(n_clusters=2, n_neighbors=3).fit(X)
    RECIPES.update({
        "urlost.dependence": R(u.dependence, X=X),
        "urlost.equal_width_bins": R(u.equal_width_bins, X=X),
        "urlost.knn_affinity": R(lambda S: u.knn_affinity(S, 2), S=S),
        "urlost.density_adjusted_laplacian": R(u.density_adjusted_laplacian, W=W,
                                               q=torch.ones(6)),
        "urlost.spectral_clusters": R(lambda W: u.spectral_clusters(W, 2, seed=0), W=W),
        "urlost.discretize": R(lambda vectors: u.discretize(vectors, seed=0),
                               vectors=randn(6, 2, dtype=torch.float64).numpy()),
        "urlost.groups_from_labels": R(u.groups_from_labels, labels=lab),
        "urlost.group_tokens": R(u.group_tokens, {"X": {"rows"}, "groups": {"rows", "cols"}},
                                 X=X, groups=groups),
        # (n, H, W) or (n, C, H, W) images (documented)
        "urlost.foveate": R(u.foveate, {"images": {"rows", "ndim-"}}, images=rand(2, 1, 16, 16),
                            coords=coords, radii=radii),
        "urlost.GroupLinear": R(u.GroupLinear(groups, 4), {"X": {"rows", *MODULE}},
                                bound={"X"}, X=randn(3, 6)),
        "urlost.SelfOrganizingClusters": R(lambda X: u.SelfOrganizingClusters(
            n_clusters=2, n_neighbors=3).fit(X).labels_, {"X": {"rows"}}, X=X),
        "urlost.SelfOrganizingClusters:transform": R(fitted.transform, {"X": {"rows"}},
                                                     bound={"X"}, X=X[:4].clone()),
    })
    UNDRIVEN.update({
        "urlost.URLOST": "its transform is driven through tests/core/test_estimators.py; fit "
                         "trains a transformer (seconds)",
        "urlost.URLOSTMAE": "a transformer built by URLOST.fit; inputs checked there",
        "urlost.grid_patches": SCALARS, "urlost.retina_sampler": SCALARS,
    })


def _schull():
    from iclr25 import schull as sc

    pos = randn(6, 3, dtype=torch.float64)
    ei = sc.knn_graph(pos, 3)
    RECIPES.update({
        "schull.knn_graph": R(lambda pos: sc.knn_graph(pos, 3), pos=pos),
        "schull.radius_graph": R(lambda pos: sc.radius_graph(pos, 2.0), pos=pos),
        "schull.is_connected": R(lambda edge_index: sc.is_connected(edge_index, 6),
                                 edge_index=ei),
        "schull.num_undirected_edges": R(lambda edge_index: sc.num_undirected_edges(
            edge_index, 6), edge_index=ei),
        "schull.is_rigid": R(sc.is_rigid, pos=pos, edge_index=ei, bound={"pos"}),
        "schull.rigidity_rank": R(sc.rigidity_rank, pos=pos, edge_index=ei, bound={"pos"}),
        "schull.schull_graph": R(lambda pos: sc.schull_graph(pos).edge_index, pos=pos),
        "schull.schull_features": R(sc.schull_features, pos=pos, edge_index=ei,
                                    bound={"pos"}),
        "schull.unit_directions": R(lambda pos: sc.unit_directions(pos)[0], {"pos": MODULE},
                                    pos=pos),
        "schull.SCHull": R(lambda pos: sc.SCHull()(__import__("torch_geometric.data", fromlist=[
            "Data"]).Data(pos=pos)).edge_index, pos=pos),
    })
    UNDRIVEN.update({
        "schull.SCHullGraph": RESULT, "schull.Conformers": RESULT,
        "schull.SchNetCHA": "a network over torch_geometric batches: tests/schull",
        "schull.conformers": SCALARS,
        "schull.read_sdf": "reads a file: tests/schull cover bad files",
        "schull.read_xyz": "reads a file: tests/schull cover bad files",
        "schull.write_xyz": "writes a file: tests/schull",
    })


def _cox():
    from iclr25 import cox

    la, lb = randn(6, 3), randn(6, 3, seed=1)
    RECIPES.update({
        "cox.entropy_discrepancy": R(cox.entropy_discrepancy, logits_a=la, logits_b=lb),
        "cox.prior_kl": R(cox.prior_kl, {"oom_logits": {"rows"}}, oom_logits=la,
                          prior=torch.tensor([0.2, 0.3, 0.5])),
        # no pairs: NaN, as documented
        "cox.match_purity": R(cox.match_purity, {"y_im": {"rows"}, "y_oom": {"rows"},
                                                 "pairs": {"empty"}},
                              pairs=torch.tensor([[0, 1], [2, 3]]), y_im=labels(5, 2),
                              y_oom=labels(5, 2).flip(0), bound={"y_im", "y_oom"}),
        "cox.emergent_correspondences": R(cox.emergent_correspondences,
                                          {"Z_im": {"rows"}, "Z_oom": {"rows"}},
                                          Z_im=randn(5, 4), Z_oom=randn(6, 4, seed=1)),
        "cox.vib_loss": R(cox.vib_loss, pred=la, target=randn(6, 3, seed=3), mu=randn(6, 2),
                          logvar=randn(6, 2, seed=2)),
        "cox.VIBLoss": R(cox.VIBLoss(), pred=la, target=randn(6, 3, seed=3), mu=randn(6, 2),
                         logvar=randn(6, 2, seed=2)),
        "cox.VIB": R(lambda h: cox.VIB(4, 2, 8)(h, generator=_g())[0], {"h": {"rows", *MODULE}},
                     bound={"h"}, h=randn(3, 4)),
    })
    UNDRIVEN.update({
        "cox.COX": "driven through tests/core/test_estimators.py and tests/cox (fit trains)",
        "cox.select_agreement": "takes a list of logits tensors: tests/cox",
    })


def _v3():
    from iclr25 import v3

    X = rand(6, 3, 8)
    codes, lab = torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([1, 1, 0, 0, 2, 2])
    RECIPES.update({
        "v3.check_sequences": R(v3.check_sequences, X=X),
        # codes and labels are flattened (documented): any matching shapes
        "v3.codebook_accuracy": R(v3.codebook_accuracy, {"*": {"ndim+"}}, codes=codes,
                                  labels=lab),
        "v3.confusion": R(v3.confusion, {"*": {"ndim+"}}, codes=codes, labels=lab),
        "v3.kmeans": R(lambda x: v3.kmeans(x, 2, generator=_g()), x=randn(8, 2)),
        "v3.kmeans_codes": R(lambda X: v3.kmeans_codes(X, 2, seed=0), {"X": {"ndim+"}},
                             X=randn(4, 3, 2)),  # (B, N, ...) fragments (documented)
        # (..., n, d) batches; a loss term: values unchecked like a module's forward
        "v3.mpd": R(v3.mpd, {"x": {"ndim+", "ndim-", *MODULE}}, x=randn(4, 3, 2)),
        "v3.v3_loss": R(lambda z_c, z_c_q, z_s: v3.v3_loss(z_c, z_c_q, z_s).total,
                        z_c=randn(4, 3, 2), z_c_q=randn(4, 3, 2, seed=1),
                        z_s=randn(4, 3, 2, seed=2), ok={"z_s": {"cols"}}),
        "v3.V3Loss": R(lambda z_c, z_c_q, z_s: v3.V3Loss()(z_c, z_c_q, z_s).total,
                       z_c=randn(4, 3, 2), z_c_q=randn(4, 3, 2, seed=1),
                       z_s=randn(4, 3, 2, seed=2), ok={"z_s": {"cols"}}),
        # (..., dim) inputs, any leading shape (documented)
        "v3.EMAVectorQuantizer": R(lambda x: v3.EMAVectorQuantizer(3, 2, kmeans_init=False)(
            x)[0], {"x": {"ndim+", "ndim-", *MODULE}}, x=randn(5, 2)),
    })
    UNDRIVEN.update({
        "v3.V3": "driven through tests/core/test_estimators.py and tests/v3 (fit trains)",
        "v3.ContentStyleAE": "a network built from caller's encoder/decoder: tests/v3",
        "v3.V3Terms": RESULT,
        "v3.leakage_report": "takes a fitted model: tests/v3",
        "v3.mlp_fragment_nets": SCALARS,
    })


for _section in (_urlost, _schull, _cox, _v3):
    _section()


# --- comm, locodl, gsd, datasets ------------------------------------------------------------

def _comm():
    from iclr25 import comm

    z1, z2 = randn(4, 3), randn(4, 3, seed=1)
    img = rand(2, 3, 8, 8)
    RECIPES.update({
        "comm.infonce": R(comm.infonce, z1=z1, z2=z2),
        "comm.clip_loss": R(comm.clip_loss, z1=z1, z2=z2),
        "comm.InfoNCELoss": R(comm.InfoNCELoss(), z1=z1, z2=z2),
        "comm.ClipLoss": R(comm.ClipLoss(), z1=z1, z2=z2),
        "comm.linear_probe": R(lambda F_tr, y_tr, F_te, y_te: comm.linear_probe(
            F_tr, y_tr, F_te, y_te, cv=2), {"F_tr": {"rows"}, "y_tr": {"rows"},
                                            "F_te": {"rows"}, "y_te": {"rows"}},
            F_tr=randn(12, 3), y_tr=labels(12, 2), F_te=randn(6, 3, seed=1), y_te=labels(6, 2),
            bound={"F_tr", "y_tr", "F_te", "y_te"},
            alias={"F_tr": ("F_te",), "F_te": ("F_tr",), "y_tr": ("F_tr",),
                   "y_te": ("F_te",)}),
        "comm.FeatureTokenizer": R(comm.FeatureTokenizer(5, 4), {"x": {"rows", *MODULE}},
                                   bound={"x"}, x=randn(3, 5)),
        # augmentations take any (n, ...) batch
        "comm.GaussianNoise": R(lambda x: comm.GaussianNoise(0.1)(x, seed=0),
                                {"x": {"ndim+", "ndim-", *MODULE}},
                                x=randn(3, 5)),
        "comm.RandomDrop": R(lambda x: comm.RandomDrop(0.5)(x, seed=0), {"x": {"ndim+", *MODULE}},
                             x=randn(3, 5)),
        "comm.BrightnessContrast": R(lambda x: comm.BrightnessContrast()(x, seed=0),
                                     {"x": MODULE}, x=img),
        "comm.ColorJitter": R(lambda x: comm.ColorJitter()(x, seed=0), {"x": MODULE}, x=img),
        "comm.RandomShift": R(lambda x: comm.RandomShift()(x, seed=0), {"x": MODULE}, x=img),
        "comm.ResizedCropFlip": R(lambda x: comm.ResizedCropFlip()(x, seed=0), {"x": MODULE},
                                  x=img),
    })
    UNDRIVEN.update({
        "comm.CoMM": "a network over a list of modalities: tests/comm",
        "comm.CoMMEmbedder": "driven through tests/core/test_estimators.py (fit trains)",
        "comm.CoMMLoss": "takes lists of tensors (one per modality): tests/comm",
        "comm.comm_loss": "takes lists of tensors (one per modality): tests/comm",
        "comm.Compose": "composes augmentations (each driven here)",
        "comm.FusionTransformer": "takes a list of token tensors: tests/comm",
        "comm.PatchTokenizer": "a conv tokenizer inside CoMM: tests/comm",
        "comm.conv_encoder": SCALARS, "comm.mlp_encoder": SCALARS,
        "comm.features": "takes a CoMM model and a list of modalities: tests/comm",
        "comm.modality_masks": SCALARS,
        "comm.objective_loss": "takes a CoMM model and lists of views: tests/comm",
        "comm.pretrain": "trains a CoMM model on lists of modalities: tests/comm",
    })


def _locodl():
    from iclr25 import locodl as lc

    def _grad0(obj):  # the gradient at zero: the objective's data, read back
        return obj.grad(obj.Ab.new_zeros(obj.Ab.shape[0], obj.d))

    cid = {"clients": ("client_ids",)}  # the estimator's name for it, used in messages

    X = randn(12, 3, dtype=torch.float64)
    y = labels(12, 2)
    cl = labels(12, 3)
    fitted = lc.LoCoDLClassifier(n_clients=2, max_iter=20, seed=0).fit(X.numpy(), y.numpy())
    RECIPES.update({
        "locodl.ClientLogistic": R(lambda X, y, clients: _grad0(lc.ClientLogistic(
            X, y, clients, 0.1)), {"X": {"cols"}}, X=X, y=y, clients=cl, alias=cid),
        "locodl.ClientRidge": R(lambda X, y, clients: _grad0(lc.ClientRidge(X, y, clients, 0.1)),
                                {"X": {"cols"}}, X=X, y=y.double(), clients=cl, alias=cid),
        "locodl.LoCoDLClassifier": R(lambda X, y: lc.LoCoDLClassifier(
            n_clients=2, max_iter=20, seed=0).fit(X, y).predict(X), {"X": {"cols"}},
            X=X.numpy(), y=y.numpy()),
        "locodl.LoCoDLClassifier:predict": R(fitted.predict, {"X": {"rows"}}, bound={"X"},
                                             X=X.numpy()),
    })
    UNDRIVEN.update({
        "locodl.ComposedCompressor": "composes compressors: tests/locodl",
        "locodl.Compressor": "abstract base of the compressors",
        "locodl.Identity": "a compressor called by the algorithms with their own state",
        "locodl.Natural": "a compressor called by the algorithms with their own state",
        "locodl.RandK": "a compressor called by the algorithms with their own state",
        "locodl.DistributedComm": "a torch.distributed channel: tests/locodl",
        "locodl.SimulatedComm": "an in-process channel set up by the algorithms",
        "locodl.Run": RESULT,
        "locodl.adiana": "takes an objective (ClientLogistic / ClientRidge, driven here)",
        "locodl.diana": "takes an objective (ClientLogistic / ClientRidge, driven here)",
        "locodl.gd": "takes an objective (ClientLogistic / ClientRidge, driven here)",
        "locodl.locodl": "takes an objective (ClientLogistic / ClientRidge, driven here)",
        "locodl.scaffnew": "takes an objective (ClientLogistic / ClientRidge, driven here)",
        "locodl.adiana_params": SCALARS,
        "locodl.make_compressor": "takes a name: tests/locodl",
    })


def _gsd():
    from iclr25 import gsd

    disc = gsd.BoundedDiscriminator(3, 2, hidden=(8,))
    pol = gsd.LatentPolicy(3, 2, z_dim=2, hidden=(8,))
    post = gsd.GaussianPosterior(3, 2, z_dim=2, hidden=(8,))
    s, a = randn(4, 3), randn(4, 2, seed=1)
    RECIPES.update({
        "gsd.recovery_error": R(lambda factors, targets: gsd.recovery_error(factors, targets, 2),
                                {"factors": {"rows"}, "targets": {"rows"}},
                                factors=torch.linspace(0, 1, 6), targets=torch.tensor([0.2, 0.7])),
        "gsd.select_behaviours": R(lambda factors, targets: gsd.select_behaviours(
            factors, targets, 2), {"factors": {"rows"}, "targets": {"rows"}},
            factors=torch.linspace(0, 1, 6), targets=torch.tensor([0.2, 0.7])),
        "gsd.infogail_reward": R(gsd.infogail_reward, d=randn(4), log_q=randn(4, seed=1)),
        # a training step's loss term: shapes checked, values not (as a module's forward)
        "gsd.gradient_penalty": R(lambda x_expert, x_policy, u: gsd.gradient_penalty(
            disc, x_expert, x_policy, u=u), {"*": MODULE}, x_expert=randn(4, 5),
            alias={k: ("obs",) for k in ("x_expert", "x_policy", "u")},  # the mix D reads
            x_policy=randn(4, 5, seed=1),
            u=rand(4, 1)),
        "gsd.relevance_constraint": R(lambda s, a, s_next, a_next: gsd.relevance_constraint(
            post, disc, s, a, s_next, a_next), s=s, a=a, s_next=randn(4, 3, seed=2),
            a_next=randn(4, 2, seed=3)),
        "gsd.BoundedDiscriminator": R(disc, {"obs": {"rows", *MODULE}, "act": {"rows", *MODULE}},
                                      obs=s, act=a),
        "gsd.LatentPolicy": R(pol, {"obs": MODULE, "z": MODULE}, obs=s, z=randn(4, 2, seed=4)),
        "gsd.GaussianPosterior": R(lambda obs, act: post(obs, act)[0], {"obs": MODULE,
                                                                     "act": MODULE},
                                   obs=s, act=a),
    })
    UNDRIVEN.update({
        "gsd.DualVariable": SCALARS, "gsd.GSDConfig": SCALARS, "gsd.Evaluation": RESULT,
        "gsd.GSDResult": RESULT,
        "gsd.evaluate": "rolls a policy out in an environment: tests/gsd",
        "gsd.infer_demo_codes": "takes a posterior and an OfflineDataset: tests/gsd",
        "gsd.style_coded_bc": "trains on an OfflineDataset: tests/gsd",
        "gsd.train": "trains on an OfflineDataset: tests/gsd",
    })


def _datasets():
    from iclr25 import datasets as ds

    RECIPES["datasets.gaussian_mixture"] = R(lambda counts: ds.gaussian_mixture(counts, 2)[0],
                                             counts=torch.tensor([3, 2]))
    UNDRIVEN.update({"datasets.Split": RESULT, "datasets.digits": SCALARS,
                     "datasets.teacher_classification": SCALARS})


for _section in (_comm, _locodl, _gsd, _datasets):
    _section()


# --- dcpt, lowlight, lsdt -------------------------------------------------------------------

def _dcpt():
    from iclr25 import dcpt

    x, y = rand(2, 3, 16, 16), rand(2, 3, 16, 16, seed=1)
    unet = dcpt.UNet(width=4, depth=2)
    RECIPES.update({
        "dcpt.psnr": R(dcpt.psnr, x=x, y=y),
        "dcpt.ssim": R(dcpt.ssim, x=x, y=y),
        "dcpt.focal_loss": R(lambda logits, y: dcpt.focal_loss(logits, y, 2.0), logits=randn(4, 3),
                             y=labels(4, 3)),
        "dcpt.FocalLoss": R(dcpt.FocalLoss(2.0), logits=randn(4, 3), y=labels(4, 3)),
        # (3, H, W) or (B, 3, H, W) images of any size (documented)
        "dcpt.restore": R(lambda images: dcpt.restore(unet, images),
                          {"images": {"rows", "ndim-", "cols"}}, images=x),
        "dcpt.classical": R(lambda images: dcpt.classical(images, "noise"),
                            {"images": {"rows", "ndim-", "cols"}}, images=x),
        "dcpt.UNet": R(unet, {"x": {"rows", "cols", "ndim-", *MODULE}}, bound={"x"}, x=x),
        "dcpt.NAFNet": R(dcpt.NAFNet(width=4, enc_blocks=(1,), dec_blocks=(1,)),
                         {"x": {"rows", "cols", "ndim-", *MODULE}}, bound={"x"}, x=x),
        "dcpt.Restormer": R(dcpt.Restormer(dim=4, num_blocks=(1, 1, 1, 1), heads=(1, 1, 1, 1),
                                           num_refinement_blocks=1),
                            {"x": {"rows", "cols", "ndim-", *MODULE}}, bound={"x"}, x=x),
    })
    UNDRIVEN.update({
        "dcpt.Checkpoint": RESULT, "dcpt.FinetuneResult": RESULT, "dcpt.PretrainResult": RESULT,
        "dcpt.DegradationClassifier": "a head over a UNet's feature taps: tests/dcpt",
        "dcpt.FeatureTap": "hooks on a caller's model: tests/dcpt",
        "dcpt.classify": "takes a Checkpoint: tests/dcpt",
        "dcpt.dcpt_loss": "takes a model, a classifier and layer names: tests/dcpt",
        "dcpt.feature_probe": "takes a model and layer names: tests/dcpt",
        "dcpt.finetune": "trains on batches from a loader: tests/dcpt",
        "dcpt.pretrain": "trains on batches from a loader: tests/dcpt",
        "dcpt.load": "reads a file: tests/dcpt cover bad files",
        "dcpt.load_official": "reads a file: tests/dcpt/test_dcpt_official.py",
        "dcpt.save": "writes a file: tests/dcpt",
    })


def _lowlight():
    from iclr25 import lowlight as ll

    x, y = rand(2, 3, 16, 16) * 0.5, rand(2, 3, 16, 16, seed=1)
    torch.manual_seed(0)
    _zdce = ll.ZeroDCE(width=4)
    RECIPES.update({
        "lowlight.psnr": R(ll.psnr, x=x, y=y),
        "lowlight.ssim": R(ll.ssim, x=x, y=y),
        "lowlight.color_constancy_loss": R(ll.color_constancy_loss, I=x),
        "lowlight.ColorConstancyLoss": R(ll.ColorConstancyLoss(), I=x),
        "lowlight.exposure_loss": R(lambda I: ll.exposure_loss(I, patch=4), I=x),  # noqa: E741
        "lowlight.ExposureLoss": R(ll.ExposureLoss(patch=4), I=x),
        "lowlight.illumination_tv_loss": R(ll.illumination_tv_loss, I=x),
        "lowlight.IlluminationTVLoss": R(ll.IlluminationTVLoss(), I=x),
        "lowlight.spatial_consistency_loss": R(ll.spatial_consistency_loss, x=x, I=y),
        "lowlight.SpatialConsistencyLoss": R(ll.SpatialConsistencyLoss(), x=x, I=y),
        # (..., H, W): any leading dimensions (documented)
        "lowlight.dct_2d": R(ll.dct_2d, {"x": {"ndim+", "ndim-"}}, x=x),
        "lowlight.idct_2d": R(ll.idct_2d, {"X": {"ndim+", "ndim-"}}, X=x),
        "lowlight.frequency_bands": R(lambda x: ll.frequency_bands(x, seed=0), x=x),
        "lowlight.neighbor_subimages": R(lambda x: ll.neighbor_subimages(x, seed=0)[0], x=x),
        # (3, H, W) or (B, 3, H, W) (documented); relight is elementwise
        "lowlight.noise_to_signal": R(ll.noise_to_signal, {"x": {"ndim-"}}, x=x),
        "lowlight.relight": R(lambda x: ll.relight(x, 0.5), {"x": {"ndim+", "ndim-"}}, x=x),
        "lowlight.CurveNet": R(ll.CurveNet(width=4), {"L": {"rows", "cols", *MODULE}},
                               bound={"L"}, L=x[:, :1].clone()),
        "lowlight.ZeroDCE": R(lambda x: _zdce(x).enhanced, {"x": {"rows", "cols", *MODULE}},
                              bound={"x"}, x=x),
        "lowlight.enhance": R(lambda images: ll.enhance(_zdce, images),
                              {"images": {"rows", "ndim-"}}, images=x),
    })
    UNDRIVEN.update({
        "lowlight.EnhanceOutput": RESULT,
        "lowlight.load_official": "reads a file: tests/lowlight/test_lowlight_official.py",
        "lowlight.FrequencyPrior": "a sub-network of RetinexEnhancer: tests/lowlight",
        "lowlight.IlluminationNet": "a sub-network of RetinexEnhancer: tests/lowlight",
        "lowlight.NoiseNet": "a sub-network of RetinexEnhancer: tests/lowlight",
        "lowlight.ReflectanceNet": "a sub-network of RetinexEnhancer: tests/lowlight",
        "lowlight.RetinexEnhancer": "driven through enhance and tests/lowlight",
        "lowlight.ZeroReferenceEnhancer": "driven through tests/core/test_estimators.py",
        "lowlight.train_enhancer": "trains a model: tests/lowlight",
        "lowlight.zero_reference_loss": "takes a RetinexEnhancer: tests/lowlight",
    })


def _lsdt():
    from iclr25 import lsdt

    RECIPES.update({
        "lsdt.normalized_score": R(lsdt.normalized_score, {"returns": {"ndim-"}},  # a float
                                   returns=torch.tensor([-500.0, -200.0])),
        "lsdt.DynamicConv1d": R(lsdt.DynamicConv1d(4, 3), {"x": {"rows", *MODULE}},
                                bound={"x"}, x=randn(2, 5, 4)),
        "lsdt.TokenConv1d": R(lsdt.TokenConv1d(4, 3), {"x": {"rows", *MODULE}}, bound={"x"},
                              x=randn(2, 5, 4)),
    })
    UNDRIVEN.update({
        "lsdt.Block": "a transformer block inside the model: tests/lsdt",
        "lsdt.HybridFusion": "a layer inside the model: tests/lsdt",
        "lsdt.LongShortMixer": "a layer inside the model: tests/lsdt",
        "lsdt.LongShortDecisionTransformer": "takes (states, actions, returns, timesteps) "
                                             "sequences: tests/lsdt",
        "lsdt.DelayedCueEnv": "an environment: tests/lsdt",
        "lsdt.EvalResult": RESULT,
        "lsdt.SequenceSampler": "samples an OfflineDataset: tests/lsdt",
        "lsdt.decision_convformer": SCALARS, "lsdt.decision_transformer": SCALARS,
        "lsdt.delayed_cue_dataset": SCALARS, "lsdt.pendulum_dataset": SCALARS,
        "lsdt.pendulum_swingup": SCALARS,
        "lsdt.evaluate": "rolls a model out in an environment: tests/lsdt",
        "lsdt.load": "reads a file: tests/lsdt cover bad files",
        "lsdt.save": "writes a file: tests/lsdt",
        "lsdt.receptive_field": "takes a model: tests/lsdt",
        "lsdt.train": "trains on an OfflineDataset: tests/lsdt",
    })


for _section in (_dcpt, _lowlight, _lsdt):
    _section()


# Integers that are ids or counts, not indices into something the call knows: a large value
# (and, where any integer names a group, a negative one) is valid (documented in each).
IDS = {
    "comm.linear_probe": {"y_tr": {"big"}, "y_te": {"big"}},
    "cox.match_purity": {"y_im": {"big"}, "y_oom": {"big"}},
    "mother.clustering_accuracy": {"pred": {"neg", "big"}, "truth": {"neg", "big"}},
    "los.class_balanced_weights": {"counts": {"big"}},
    "los.group_accuracy": {"train_counts": {"big"}},
    "los.shot_groups": {"train_counts": {"big"}},
    "v3.codebook_accuracy": {"codes": {"big"}, "labels": {"big"}},
    "v3.confusion": {"codes": {"big"}, "labels": {"big"}},
    "datasets.gaussian_mixture": {"counts": {"big"}},
    "urlost.group_tokens": {"groups": {"neg"}},  # -1 is the padding
    "locodl.ClientLogistic": {"clients": {"neg", "big"}},
    "locodl.ClientRidge": {"clients": {"neg", "big"}},
}
for _key, _extra in IDS.items():
    for _arg, _cases in _extra.items():
        RECIPES[_key].ok.setdefault(_arg, set()).update(_cases)
