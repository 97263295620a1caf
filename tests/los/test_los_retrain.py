import inspect
import math
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import check_estimator
from torch import nn
from torch.nn import functional as F

from iclr25.los import METHODS, RetrainedClassifier, class_balanced_weights, retrain_classifier


def _data(n=240, d=6, K=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(K).repeat_interleave(torch.tensor([n // 2, n // 4, n // 8, n // 8]))
    centres = 2 * torch.randn(K, d, generator=g)
    X = centres[y] + torch.randn(len(y), d, generator=g)
    head = nn.Linear(d, K)
    with torch.no_grad():
        head.weight.copy_(torch.randn(K, d, generator=g) * 0.1)
        head.bias.zero_()
    return X, y, head


def test_los_matches_reference_loop_with_torch_label_smoothing():
    """The recipe written out by hand with the trusted peer loss gives the same head."""
    X, y, init = _data()
    ours = retrain_classifier(X, y, "los", init=init, smoothing=0.9, epochs=3, lr=0.05,
                              batch_size=32, seed=5)
    ref = nn.Linear(6, 4)
    ref.load_state_dict(init.state_dict())
    opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
    g = torch.Generator().manual_seed(5)
    for _ in range(3):
        order = torch.randperm(len(y), generator=g)
        for s in range(0, len(y), 32):
            idx = order[s:s + 32]
            loss = F.cross_entropy(ref(X[idx]), y[idx], label_smoothing=0.9)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    torch.testing.assert_close(ours.weight, ref.weight, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ours.bias, ref.bias, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_deterministic_and_init_untouched(method):
    X, y, init = _data()
    w0, b0, X0 = init.weight.clone(), init.bias.clone(), X.clone()
    state = torch.random.get_rng_state()
    a = retrain_classifier(X, y, method, init=init, epochs=2, lr=0.01, seed=1)
    b = retrain_classifier(X, y, method, init=init, epochs=2, lr=0.01,
                           seed=torch.Generator().manual_seed(1))
    c = retrain_classifier(X, y, method, init=init, epochs=2, lr=0.01, seed=2)
    assert torch.equal(torch.random.get_rng_state(), state)  # global RNG untouched
    assert isinstance(a, nn.Linear) and a is not init
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    assert not torch.equal(a.weight, c.weight)
    assert torch.equal(init.weight, w0) and torch.equal(init.bias, b0) and torch.equal(X, X0)


def test_degenerate_settings_reduce_to_ce():
    X, y, init = _data()
    kw = dict(init=init, epochs=2, lr=0.01, seed=3)
    ce = retrain_classifier(X, y, "ce", **kw)
    la0 = retrain_classifier(X, y, "la", tau=0.0, **kw)  # no adjustment
    cb0 = retrain_classifier(X, y, "cbce", beta=0.0, **kw)  # equal weights
    torch.testing.assert_close(la0.weight, ce.weight)
    torch.testing.assert_close(cb0.weight, ce.weight)


def test_lws_only_rescales_rows():
    X, y, init = _data()
    head = retrain_classifier(X, y, "lws", init=init, epochs=3, lr=0.05, seed=0)
    scale = head.weight / init.weight
    # one scale per class, shared by the whole row and the bias (zero here)
    torch.testing.assert_close(scale, scale[:, :1].expand_as(scale), rtol=1e-4, atol=1e-5)
    assert not torch.allclose(scale, torch.ones_like(scale))


def test_logit_adjustment_favours_tail_classes():
    # LA trains z + log(pi), so the returned z carries less of the prior: more tail predictions
    X, y, init = _data(n=480)
    kw = dict(init=init, epochs=10, lr=0.05, seed=0)
    p_ce = retrain_classifier(X, y, "ce", **kw)(X).argmax(1)
    p_la = retrain_classifier(X, y, "la", **kw)(X).argmax(1)
    assert (p_la >= 2).sum() > (p_ce >= 2).sum()


def test_random_head_refused_with_the_reason():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="init is required.*1.7% balanced accuracy"):
        retrain_classifier(X, y, "ce", init=None)
    with pytest.raises(ValueError, match="init is required"):
        RetrainedClassifier("los", init=None).fit(X, y)


def test_defaults_start_from_a_logistic_head():
    X, y, _ = _data()
    clf = RetrainedClassifier().fit(X, y)  # no arguments: LOS from init="logistic"
    ref = RetrainedClassifier("los", init="logistic").fit(X, y)
    assert torch.equal(clf.head_.weight, ref.head_.weight)
    assert (clf.predict(X) == y).float().mean() > 0.9


def test_logistic_start_learns_separable_task():
    X, y, _ = _data()
    head = retrain_classifier(X, y, "ce", init="logistic", epochs=2, lr=0.01, seed=0)
    assert (head(X).argmax(1) == y).float().mean() > 0.9


def test_class_balanced_weights():
    c = torch.tensor([100, 10, 1])
    torch.testing.assert_close(class_balanced_weights(c, 0.0), torch.ones(3))
    w = class_balanced_weights(c, 0.9)
    raw = torch.tensor([(1 - 0.9) / (1 - 0.9 ** n) for n in (100, 10, 1)])
    torch.testing.assert_close(w, raw / raw.sum() * 3)
    assert math.isclose(float(w.sum()), 3.0, rel_tol=1e-6)
    with pytest.raises(ValueError, match="positive"):
        class_balanced_weights(torch.tensor([3, 0]))


def test_retrain_errors():
    X, y, init = _data()
    with pytest.raises(ValueError, match=r"y has no sample of class\(es\) \[4\]"):
        retrain_classifier(X, y, "ce", init=init, n_classes=5)
    with pytest.raises(ValueError, match="y must be < n_classes=3"):
        retrain_classifier(X, y, "ce", init=init, n_classes=3)
    for eps in (0.0, 1.0, 2.0):
        with pytest.raises(ValueError, match="smoothing"):
            retrain_classifier(X, y, "los", init=init, smoothing=eps)
    with pytest.raises(ValueError, match="method"):
        retrain_classifier(X, y, "focal", init=init)
    with pytest.raises(ValueError, match="init weight must have shape"):
        retrain_classifier(X, y, "ce", init=nn.Linear(5, 4))
    with pytest.raises(TypeError, match="init"):
        retrain_classifier(X, y, "ce", init=3)
    with pytest.raises(ValueError, match="init"):
        retrain_classifier(X, y, "ce", init="random")
    with pytest.raises(ValueError, match="epochs"):
        retrain_classifier(X, y, "ce", init=init, epochs=0)
    with pytest.raises(ValueError, match="y must have 240 labels"):
        retrain_classifier(X, y[:-1], "ce", init=init)


# --- regression tests for the robustness findings of issue 9 -------------------------------

@pytest.mark.parametrize("name", ["tau", "lr", "weight_decay", "momentum", "beta"])
@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_non_finite_hyperparameters_refused(name, value):
    # tau=inf, lr=inf, weight_decay=inf used to return a NaN head
    X, y, init = _data()
    with pytest.raises(ValueError, match=name):
        retrain_classifier(X, y, "la", init=init, epochs=1, **{name: value})


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32])
@pytest.mark.parametrize("method", METHODS)
def test_narrow_integer_labels(dtype, method):
    # uint8/int16 labels passed validation, then crashed in gather/scatter
    X, y, init = _data()
    ref = retrain_classifier(X, y, method, init=init, epochs=1, lr=0.01)
    got = retrain_classifier(X, y.to(dtype), method, init=init, epochs=1, lr=0.01)
    assert torch.equal(ref.weight, got.weight)


def test_complex_features_refused():
    X, y, init = _data()
    with pytest.raises(TypeError, match="features must be real"):
        retrain_classifier(X.to(torch.complex64), y, "ce", init=init)


def test_float64_and_numpy_features():
    X, y, init = _data()
    head = retrain_classifier(X.double().numpy(), y.numpy(), "los", init=init, epochs=1)
    assert head.weight.dtype == torch.float64
    est = RetrainedClassifier("los", init=init, epochs=1).fit(X, y)
    # used to raise "mat1 and mat2 must have the same dtype"
    pred = est.predict(X.double().numpy())
    assert isinstance(pred, np.ndarray) and pred.dtype == np.int64
    assert np.array_equal(pred, est.predict(X).numpy())
    assert est.predict_proba(X.half()).shape == (240, 4)


# --- the scikit-learn estimator ----------------------------------------------------------

def test_estimator_wrapper():
    X, y, init = _data()
    est = RetrainedClassifier("los", init=init, epochs=2, lr=0.01)
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.fit(X, y) is est
    assert est.n_classes_ == 4 and est.class_counts_.tolist() == [120, 60, 30, 30]
    assert est.classes_.tolist() == [0, 1, 2, 3] and est.n_features_in_ == 6
    assert est.predict(X).shape == (240,) and isinstance(est.predict(X), torch.Tensor)
    torch.testing.assert_close(est.predict_proba(X).sum(1), torch.ones(240))
    assert 0.0 <= est.score(X.numpy(), y.numpy()) <= 1.0
    with pytest.raises(ValueError, match="X has 3 features"):
        est.predict(X[:, :3])
    head = retrain_classifier(X, y, "los", init=init, epochs=2, lr=0.01)
    torch.testing.assert_close(est.head_.weight, head.weight)


def test_estimator_clone_and_params():
    X, y, init = _data()
    est = RetrainedClassifier("cbce", init=init, beta=0.99, epochs=3)
    twin = clone(est)
    assert twin.get_params()["beta"] == 0.99 and twin.method == "cbce"
    assert twin.init is not init and torch.equal(twin.init.weight, init.weight)
    assert not hasattr(twin, "head_")
    clone(RetrainedClassifier())  # defaults construct and clone without validation
    # __init__ only stores: a bad value is reported by fit, naming the parameter
    bad = RetrainedClassifier("los", init=init, lr=-1.0)
    with pytest.raises(ValueError, match="lr"):
        bad.fit(X, y)


def test_estimator_parameters_are_the_functions():
    # the two signatures are written out twice (scikit-learn reads __init__'s); keep them equal
    def params(f, skip):
        return [(p.name, p.kind, p.default) for p in
                list(inspect.signature(f).parameters.values())[skip:]]

    # the training engine's keywords are fit parameters of the estimator (scikit-learn's rule:
    # how to train, not what is learned), the function's trailing keywords
    assert (params(RetrainedClassifier.__init__, 1) + params(RetrainedClassifier.fit, 3)
            == params(retrain_classifier, 2))


# Checks that do not apply: the contract's labels are integers in [0, K) with every class
# present (the head's rows are the classes), inputs are dense real arrays, and bad input is
# refused with the contract's message naming the argument rather than scikit-learn's wording.
_LABELS = "labels must be integers in [0, K) with every class present"
_INPUT = "dense real input only; refused with the contract's message, not sklearn's wording"
NOT_APPLICABLE = {
    **{c: _LABELS for c in (
        "check_classifiers_classes", "check_classifiers_one_label",
        "check_classifiers_regression_target", "check_estimators_dtypes", "check_fit2d_1sample",
        "check_fit2d_1feature", "check_supervised_y_no_nan", "check_supervised_y_2d",
        "check_requires_y_none")},
    **{c: _INPUT for c in (
        "check_dtype_object", "check_classifier_data_not_an_array", "check_complex_data",
        "check_estimator_sparse_array", "check_estimator_sparse_matrix",
        "check_estimator_sparse_tag", "check_estimators_empty_data_messages",
        "check_estimators_nan_inf", "check_fit2d_predict1d")},
}


def test_check_estimator_where_it_applies(one_thread):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(RetrainedClassifier(init="logistic", epochs=2),
                        expected_failed_checks=NOT_APPLICABLE)


def test_the_estimator_says_when_los_helps_and_names_the_balanced_baseline():
    # issue 68: on plain features LogisticRegression(class_weight="balanced") beat LOS and
    # nothing said when LOS is the tool
    from iclr25.los import RetrainedClassifier

    doc = RetrainedClassifier.__doc__
    assert "When LOS helps" in doc and 'class_weight="balanced")' in doc
