"""The recipe table of ``test_hostile_inputs.py``: one valid call of every public callable
(small inputs, a few milliseconds each), or one line saying why the sweep cannot drive it."""

from __future__ import annotations

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
