import math

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from iclr25 import claims
from iclr25.claims import Scale
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
    a = retrain_classifier(X, y, method, init=init, epochs=2, lr=0.01, seed=1)
    b = retrain_classifier(X, y, method, init=init, epochs=2, lr=0.01, seed=1)
    c = retrain_classifier(X, y, method, init=init, epochs=2, lr=0.01, seed=2)
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
    X, y, _ = _data(n=480)
    kw = dict(epochs=10, lr=0.05, seed=0)
    p_ce = retrain_classifier(X, y, "ce", **kw)(X).argmax(1)
    p_la = retrain_classifier(X, y, "la", **kw)(X).argmax(1)
    assert (p_la >= 2).sum() > (p_ce >= 2).sum()


def test_fresh_head_learns_separable_task():
    X, y, _ = _data()
    head = retrain_classifier(X, y, "ce", epochs=10, lr=0.1, seed=0)
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
    with pytest.raises(ValueError, match=r"labels has no sample of class\(es\) \[4\]"):
        retrain_classifier(X, y, "ce", n_classes=5)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        retrain_classifier(X, y, "ce", n_classes=3)
    for eps in (0.0, 1.0, 2.0):
        with pytest.raises(ValueError, match="smoothing"):
            retrain_classifier(X, y, "los", smoothing=eps)
    with pytest.raises(ValueError, match="method"):
        retrain_classifier(X, y, "focal")
    with pytest.raises(ValueError, match="init"):
        retrain_classifier(X, y, "lws")
    with pytest.raises(ValueError, match="init weight must have shape"):
        retrain_classifier(X, y, "ce", init=nn.Linear(5, 4))
    with pytest.raises(TypeError, match="init"):
        retrain_classifier(X, y, "ce", init="head")
    with pytest.raises(ValueError, match="epochs"):
        retrain_classifier(X, y, "ce", epochs=0)
    with pytest.raises(ValueError, match="mismatched"):
        retrain_classifier(X, y[:-1], "ce")


def test_estimator_wrapper():
    X, y, init = _data()
    est = RetrainedClassifier("los", epochs=2, lr=0.01)
    with pytest.raises(RuntimeError, match="not fitted"):
        est.predict(X)
    est.fit(X, y, init=init)
    assert est.n_classes_ == 4 and est.class_counts_.tolist() == [120, 60, 30, 30]
    assert est.predict(X).shape == (240,)
    torch.testing.assert_close(est.predict_proba(X).sum(1), torch.ones(240))
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])


def test_claims_run_quick(tmp_path):
    registry = claims.discover()
    ids = [c for c in registry if c.startswith("los.")]
    assert set(ids) == {"los.balanced_accuracy_gain", "los.few_shot_gain", "los.loma_decreases"}
    for cid in ids:
        r = claims.run(registry[cid], Scale.quick, 0, tmp_path)
        assert r.status != "error", r.error
        assert math.isfinite(r.measured)
        assert all(p.endswith(".png") for p in r.figures) and r.figures
