"""One contract for every estimator the library exports (scikit-learn's, plus save/load).

Estimators are discovered from each method package's ``__all__`` (a class with ``fit``), so a
new estimator without a recipe below fails ``test_every_estimator_has_a_recipe``.
"""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest
import torch
from _public import public_objects
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from iclr25.kmeans import ConsistentKMeans


def _discover() -> dict[str, type]:
    return {f"{method}.{name}": obj for method, name, obj in public_objects()
            if inspect.isclass(obj) and callable(getattr(obj, "fit", None))}


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _blobs(n: int = 60, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    y = np.arange(n) % 2
    X = _rng().normal(size=(n, d)) + 3.0 * y[:, None]
    return X.astype(np.float32), y


def _sphere(n: int = 80) -> tuple[torch.Tensor, torch.Tensor]:
    p = torch.randn(n, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    p = p / p.norm(dim=1, keepdim=True)
    return p, p.clone()


def _cox_data() -> tuple:
    g = torch.Generator().manual_seed(0)
    y = torch.arange(40) % 2
    z = torch.randn(40, 6, generator=g) + 3 * y[:, None]
    x = torch.randn(40, 5, generator=g) + 3 * y[:, None]
    pairs = torch.stack([torch.arange(10), torch.arange(10)], 1)
    y_oom = torch.where(torch.arange(40) < 10, y, -1)
    return x, {"a": z}, {"a": y}, pairs, y_oom


# name -> (constructor keywords, fit arguments, a method that needs a fitted estimator)
RECIPES = {
    "comm.CoMMEmbedder": (dict(dim=4, epochs=1, batch_size=16, hidden=8, n_tokens=2),
                          lambda: ([_blobs()[0], _blobs()[0][:, :3]],), "transform"),
    "cox.COX": (dict(n_classes=2, bottleneck=4, hidden=8, steps=3, batch_size=16),
                _cox_data, "predict"),
    "kmeans.ConsistentKMeans": (dict(n_clusters=2, seed=0), lambda: (_blobs()[0],), "predict"),
    "locodl.LoCoDLClassifier": (dict(n_clients=2, max_iter=20, seed=0), lambda: _blobs(),
                                "predict"),
    "los.RetrainedClassifier": (dict(init="logistic", epochs=1, seed=0), lambda: _blobs(),
                                "predict"),
    "lowlight.ZeroReferenceEnhancer": (
        dict(width=4, steps=1, crop=16, batch_size=1),
        lambda: (torch.rand(2, 3, 24, 24, generator=torch.Generator().manual_seed(0)) * 0.3,),
        "transform"),
    "matern.KernelSurface": (dict(length_scale=0.8), lambda: _sphere(), "predict"),
    "toss.HeteroscedasticRegressor": (dict(hidden=(8,), n_neighbors=8, epochs=1, seed=0),
                                      lambda: (_blobs()[0][:, :2], _blobs()[0][:, 2:]),
                                      "predict"),
    "urlost.URLOST": (dict(n_clusters=2, n_neighbors=3, dim=8, depth=1, heads=2, epochs=1,
                           batch_size=16), lambda: (_blobs(40, 8)[0],), "transform"),
    "urlost.SelfOrganizingClusters": (dict(n_clusters=2, n_neighbors=3),
                                      lambda: (_blobs(40, 8)[0],), "transform"),
    "v3.V3": (dict(n_codes=2, d_content=2, d_style=2, epochs=1, batch_size=4, hidden=8),
              lambda: (torch.rand(4, 3, 8, generator=torch.Generator().manual_seed(0)),),
              "predict"),
}

ESTIMATORS = _discover()
NAMES = sorted(ESTIMATORS)


def test_every_estimator_has_a_recipe():
    assert sorted(RECIPES) == NAMES


@pytest.fixture(scope="module")
def fitted() -> dict:
    """Each estimator fitted once on its recipe's data (shared by the tests below)."""
    out = {}
    for name in NAMES:
        kw, data, method = RECIPES[name]
        args = data()
        out[name] = (ESTIMATORS[name](**kw).fit(*args), args, method)
    return out


def _output(est, args, method):
    res = getattr(est, method)(args[0])
    return res.detach().cpu().numpy() if isinstance(res, torch.Tensor) else np.asarray(res)


#: every output method of an estimator whose recipe names only one (the contract is each's)
OUTPUTS = {"cox.COX": ("predict", "predict_proba", "transform"),
           "locodl.LoCoDLClassifier": ("predict", "predict_proba", "decision_function"),
           "matern.KernelSurface": ("predict", "decision_function"),
           "toss.HeteroscedasticRegressor": ("predict", "predict_cov"),
           "v3.V3": ("predict", "transform")}


def _kinds(X) -> tuple:
    """X as tensors and as numpy arrays (view by view for a multi-view input)."""
    if isinstance(X, list):
        return [torch.as_tensor(v) for v in X], [np.asarray(v) for v in X]
    t = torch.as_tensor(X)
    return t, t.numpy()


def _parts(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("name", NAMES)
def test_numpy_in_numpy_out_tensor_in_tensor_out(name, fitted):
    """DESIGN's API contract (issue 68): given numpy, an estimator returns numpy (scikit-learn's
    habit); given a tensor, a tensor on its device; the same values either way. A fitted
    ``labels_`` is numpy, as scikit-learn's."""
    est, args, method = fitted[name]
    Xt, Xn = _kinds(args[0])
    device = (Xt[0] if isinstance(Xt, list) else Xt).device
    for out in OUTPUTS.get(name, (method,)):
        from_t, from_n = _parts(getattr(est, out)(Xt)), _parts(getattr(est, out)(Xn))
        assert len(from_t) == len(from_n)
        for t, n in zip(from_t, from_n, strict=True):
            assert isinstance(t, torch.Tensor) and t.device == device, (out, type(t))
            assert isinstance(n, np.ndarray), (out, type(n))
            np.testing.assert_allclose(n, t.numpy(), rtol=1e-6, atol=1e-6, err_msg=out)
    if hasattr(est, "labels_"):
        assert isinstance(est.labels_, np.ndarray)


@pytest.mark.parametrize("name", NAMES)
def test_is_a_scikit_learn_estimator(name):
    cls = ESTIMATORS[name]
    assert issubclass(cls, BaseEstimator)
    est = cls(**RECIPES[name][0])
    params = est.get_params()
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    assert est.set_params(**params) is est and est.get_params() == params


@pytest.mark.parametrize("name", NAMES)
def test_constructor_parameters_are_keywords(name):
    # scikit-learn allows the one defining parameter positionally (KMeans(8)); no more
    sig = inspect.signature(ESTIMATORS[name].__init__)
    positional = [p.name for p in list(sig.parameters.values())[1:]
                  if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert len(positional) <= 1, positional


SEEDED = [n for n in NAMES if "seed" in inspect.signature(ESTIMATORS[n].__init__).parameters]


@pytest.mark.parametrize("name", SEEDED)
def test_seed_is_an_int_a_torch_generator_or_none(name):
    """One seed type for every estimator (as for every function): each is accepted by fit."""
    param = inspect.signature(ESTIMATORS[name].__init__).parameters["seed"]
    assert param.annotation == "int | torch.Generator | None"
    kw, data, method = RECIPES[name]
    args = data()
    for seed in (torch.Generator().manual_seed(1), None):
        est = ESTIMATORS[name](**{**kw, "seed": seed}).fit(*args)
        assert np.isfinite(_output(est, args, method)).all()


@pytest.mark.parametrize("name", NAMES)
def test_use_before_fit_is_not_fitted_error(name):
    kw, data, method = RECIPES[name]
    args = data()
    with pytest.raises(NotFittedError):
        _output(ESTIMATORS[name](**kw), args, method)


@pytest.mark.parametrize("name", NAMES)
def test_pickle_round_trip(name, fitted):
    est, args, method = fitted[name]
    twin = pickle.loads(pickle.dumps(est))
    np.testing.assert_allclose(_output(twin, args, method), _output(est, args, method),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_save_load_round_trip(name, fitted, tmp_path):
    est, args, method = fitted[name]
    path = est.save(tmp_path / "est.safetensors")
    twin = type(est).load(path)
    assert twin.get_params() == est.get_params()
    np.testing.assert_allclose(_output(twin, args, method), _output(est, args, method),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_load_names_the_file(name, tmp_path):
    cls = ESTIMATORS[name]
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a model")
    for path in (tmp_path / "missing.safetensors", bad):
        with pytest.raises(ValueError, match=str(path.name)):
            cls.load(path)


# scikit-learn's own battery where the input type allows it: ConsistentKMeans takes any
# (n, d) array. The classifiers are not run through it: LoCoDL is binary by construction and
# RetrainedClassifier takes integer labels 0..K-1 with every class present (a re-trained head's
# rows are the classes), so the battery's multi-class and string-label checks do not apply.
@parametrize_with_checks(
    [ConsistentKMeans(n_clusters=3, seed=0)],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data":
            "the online seeding draws each arriving point once: weight 2 is not the same "
            "stream as the point arriving twice"})
def test_scikit_learn_battery(estimator, check):
    check(estimator)
