"""The COX estimator: fit with and without pairs, determinism, save/load, error paths."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from sklearn.exceptions import NotFittedError

from iclr25.cox import COX
from iclr25.cox.match import match_purity
from iclr25.cox.model import COXConvergenceWarning, COXMatchingWarning, COXNamingWarning


def _toy(n=60, seed=0):
    g = torch.Generator().manual_seed(seed)
    centers = F.normalize(torch.randn(3, 8, generator=g), dim=1)
    y = torch.arange(n) % 3
    Z = F.normalize(centers[y] + 0.1 * torch.randn(n, 8, generator=g), dim=1)
    X = torch.tanh(Z @ torch.randn(8, 6, generator=g)) + 0.05 * torch.randn(n, 6, generator=g)
    y_oom = torch.where(torch.arange(n) < 15, y, -1)
    pairs = torch.stack([torch.arange(15), torch.arange(15)], 1)
    return X, {"a": Z, "b": Z.flip(1)}, {"a": y, "b": y}, pairs, y_oom, y


def _model(**kw):
    # the head is under test (the floor check, k more fits, has its own tests below)
    return COX(3, **{"bottleneck": 4, "hidden": 16, "steps": 30, "batch_size": 16,
                     "min_confidence": 0.5, "floor": "off", **kw})


def test_fit_predict_shapes_and_learns():
    X, im, lab, pairs, y_oom, y = _toy()
    m = _model(steps=150).fit(X, im, lab, pairs=pairs, y_oom=y_oom)
    assert m.predict(X).dtype == torch.int64 and m.predict(X).shape == (60,)
    p = m.predict_proba(X)
    assert p.shape == (60, 3) and torch.allclose(p.sum(1), torch.ones(60))
    assert m.transform(X).shape == (60, 8)
    assert m.score(X, y) > 0.6
    assert torch.equal(m.correspondences_, pairs)


def test_pairs_without_oom_labels_take_their_im_rows_labels():
    # issue 55: a pair's OOM row is its IM row's object, so its label is known
    X, im, lab, pairs, y_oom, y = _toy()
    ref = _model(steps=150).fit(X, im, lab, pairs=pairs, y_oom=y_oom)  # paired rows labelled
    for given in (None, torch.full_like(y_oom, -1)):
        kept = None if given is None else given.clone()
        m = _model(steps=150).fit(X, im, lab, pairs=pairs, y_oom=given)
        assert torch.equal(m.predict_proba(X), ref.predict_proba(X))
        assert m.predict(X).shape == (60,) and m.score(X, y) > 0.6
        assert given is None or torch.equal(given, kept)  # the caller's labels untouched


def test_pairs_whose_im_labels_disagree_everywhere_are_refused():
    X, im, lab, pairs, _, y = _toy()
    with pytest.raises(ValueError, match="pairs: no paired row has a label"):
        _model().fit(X, im, {"a": y, "b": (y + 1) % 3}, pairs=pairs)


def test_seeded_determinism_and_no_mutation():
    X, im, lab, pairs, y_oom, _ = _toy()
    copies = [X.clone(), im["a"].clone(), pairs.clone(), y_oom.clone()]
    a = _model().fit(X, im, lab, pairs=pairs, y_oom=y_oom)
    b = _model().fit(X, im, lab, pairs=pairs, y_oom=y_oom)
    assert torch.equal(a.predict_proba(X), b.predict_proba(X))
    assert torch.equal(a.transform(X), b.transform(X))
    c = _model(seed=1).fit(X, im, lab, pairs=pairs, y_oom=y_oom)
    # the encoder (not the prediction: the floor, when it predicts, has no seed)
    assert not torch.equal(a.transform(X), c.transform(X))
    for before, now in zip(copies, [X, im["a"], pairs, y_oom], strict=True):
        assert torch.equal(before, now)


def test_float64_numpy_input():
    X, im, lab, pairs, y_oom, _ = _toy()
    m = _model(steps=5).fit(X.double().numpy(), {k: v.double().numpy() for k, v in im.items()},
                            {k: v.numpy() for k, v in lab.items()}, pairs=pairs.numpy(),
                            y_oom=y_oom.numpy())
    assert m.predict_proba(X.double()).dtype == torch.float64


def test_fit_without_pairs_creates_correspondences():
    pytest.importorskip("ot")
    X, im, lab, _, _, _ = _toy()
    m = _model(steps=10).fit(X, im, lab)
    P = m.correspondences_
    assert P.ndim == 2 and P.shape[1] == 2 and len(m.history_) == 6
    assert torch.unique(P[:, 1]).numel() == len(P)


def test_save_load_roundtrip(tmp_path):
    X, im, lab, pairs, y_oom, _ = _toy()
    m = _model(steps=5).fit(X, im, lab, pairs=pairs, y_oom=y_oom)
    m.save(tmp_path / "m.pt")
    m2 = COX.load(tmp_path / "m.pt")
    assert torch.equal(m.predict_proba(X), m2.predict_proba(X))
    assert m2.get_params() == m.get_params()
    (tmp_path / "bad.pt").write_text("not a model")
    with pytest.raises(ValueError, match="path"):
        COX.load(tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="path"):
        COX.load(tmp_path / "missing.pt")


def test_load_keeps_the_floor_record_where_fit_does(tmp_path, device):
    # review of issue 68: load(device=...) put cv_correct_ on the device where fit keeps it
    # on the CPU (its sign test and counts read it there); the fitted weights follow device
    X, im, lab, pairs, _ = _few_pairs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the floor's own warning: its test says
        m = COX(4, steps=1, hidden=16, bottleneck=4, batch_size=16).fit(X, im, lab,
                                                                        pairs=pairs)
    assert m.cv_correct_.device.type == "cpu" and len(m.cv_correct_) == 12
    back = COX.load(m.save(tmp_path / "m.safetensors"), device=device)
    assert back.cv_correct_.device.type == "cpu"
    assert torch.equal(back.cv_correct_, m.cv_correct_)
    assert next(back.net_.parameters()).device.type == device.type


def test_sklearn_clone():
    from sklearn.base import clone
    m = clone(_model(beta=0.5))
    assert m.beta == 0.5 and not hasattr(m, "net_")


def test_n_classes_checked():
    X, im, lab, pairs, y_oom, _ = _toy()
    with pytest.raises(ValueError, match="n_classes"):
        COX(1).fit(X, im, lab, pairs=pairs, y_oom=y_oom)


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        _model().predict(torch.zeros(2, 6))


@pytest.mark.parametrize(("change", "match"), [
    (lambda a: a.update(X=torch.zeros(60)), "X_oom"),
    (lambda a: a["X"].__setitem__((0, 0), float("nan")), "X_oom"),
    (lambda a: a.update(lab={"a": a["lab"]["a"][:-1], "b": a["lab"]["b"]}), "im_labels"),
    (lambda a: a.update(lab={"a": a["lab"]["a"]}), "im_labels"),
    (lambda a: a.update(pairs=torch.tensor([[0, 99]])), "pairs"),
    (lambda a: a.update(pairs=torch.tensor([[0, 1], [2, 1]])), "pairs"),
    (lambda a: a.update(pairs=torch.tensor([[-1, 1]])), "pairs"),
    (lambda a: a.update(y_oom=torch.full((60,), 3)), "y_oom"),
    (lambda a: a.update(y_oom=torch.full((60,), -2)), "y_oom"),
    (lambda a: a.update(im={"a": a["im"]["a"], "b": a["im"]["b"][:, :4]}), "im"),
])
def test_bad_input(change, match):
    X, im, lab, pairs, y_oom, _ = _toy()
    args = {"X": X.clone(), "im": im, "lab": lab, "pairs": pairs, "y_oom": y_oom}
    change(args)
    with pytest.raises((ValueError, TypeError), match=match):
        _model().fit(args["X"], args["im"], args["lab"], pairs=args["pairs"], y_oom=args["y_oom"])


@pytest.mark.parametrize(("kw", "match"), [
    ({"beta": -1.0}, "beta"), ({"k": 0}, "k"), ({"min_confidence": 0.0}, "min_confidence"),
    ({"min_confidence": 1.0}, "min_confidence"), ({"warmup": 1.5}, "warmup"),
    ({"steps": 0}, "steps"), ({"kl_weight": -0.5}, "kl_weight"), ({"floor": "on"}, "floor"),
])
def test_bad_params(kw, match):
    X, im, lab, pairs, y_oom, _ = _toy()
    with pytest.raises(ValueError, match=match):
        _model(**kw).fit(X, im, lab, pairs=pairs, y_oom=y_oom)


def _blobs(seed=0, n=600, C=4):
    """Well-separated classes seen as 32-d IM embeddings and a 10-d OOM input, unpaired."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % C
    Z = (3 * torch.randn(C, 32, generator=g))[y] + torch.randn(n, 32, generator=g)
    X = (3 * torch.randn(C, 10, generator=g))[y] + torch.randn(n, 10, generator=g)
    lab = torch.cat([torch.nonzero(y == c).flatten()[:5] for c in range(C)])
    y_oom = torch.full((n,), -1)
    y_oom[lab] = y[lab]
    return X, Z, y, y_oom, lab


def test_labelled_rows_name_the_clusters():
    # found-but-misnamed clusters once scored below chance here (0.19 vs LR's 1.0)
    pytest.importorskip("ot")
    from sklearn.linear_model import LogisticRegression

    X, Z, y, y_oom, lab = _blobs()
    m = COX(4, bottleneck=8, hidden=32, steps=100, floor="off").fit(X, {"a": Z}, {"a": y},
                                                                     y_oom=y_oom)
    lr = LogisticRegression(max_iter=1000).fit(X[lab].numpy(), y[lab].numpy())
    assert m.score(X, y) >= lr.score(X.numpy(), y.numpy()) - 0.05
    assert sorted(m.class_names_.tolist()) == [0, 1, 2, 3]


def test_class_names_follow_the_labels_and_survive_save(tmp_path):
    X, im, lab, pairs, y_oom, y = _toy()
    m = _model(steps=150).fit(X, im, lab, pairs=pairs, y_oom=y_oom)
    m.floor_used_ = False  # the head's predictions are under test, not the floor's
    p = m.predict(X)
    # swap two head classes by hand: the renaming must undo it
    m.net_.head[-1].weight.data = m.net_.head[-1].weight.data[[1, 0, 2]]
    m.net_.head[-1].bias.data = m.net_.head[-1].bias.data[[1, 0, 2]]
    m.class_names_ = m._name_classes(torch.as_tensor(X), torch.as_tensor(y_oom))
    assert m.class_names_.tolist() == [1, 0, 2]
    assert torch.equal(m.predict(X), p)
    m.save(tmp_path / "m.pt")
    assert torch.equal(COX.load(tmp_path / "m.pt").predict(X), p)


class _Memorising(torch.nn.Module):
    """A head that names every cluster c as perm[c] but fits its labelled rows exactly: the
    misnaming the labelled rows alone cannot see."""

    def __init__(self, centers, perm, X_lab, y_lab):
        super().__init__()
        self.centers, self.perm, self.X_lab, self.y_lab = centers, perm, X_lab, y_lab

    def forward(self, x):
        c = self.perm[torch.cdist(x, self.centers).argmin(1)]
        d = torch.cdist(x, self.X_lab)
        hit = d.min(1).values == 0
        c = torch.where(hit, self.y_lab[d.argmin(1)], c)
        return F.one_hot(c, len(self.centers)).float()


@pytest.mark.parametrize("residual", [False, True])
def test_naming_judged_off_the_labelled_rows_undoes_a_permutation(residual):
    X, Z, y, y_oom, lab = _blobs()
    m = COX(4, bottleneck=8, hidden=32, steps=5, residual=residual).fit(
        X, {"a": Z}, {"a": y}, pairs=torch.stack([lab, lab], 1), y_oom=y_oom)
    centers = torch.stack([X[y == c].mean(0) for c in range(4)])
    perm = torch.tensor([1, 2, 3, 0])
    m.net_.encoder = torch.nn.Identity()
    m.net_.head = _Memorising(centers, perm, X[lab], y[lab])
    m.floor_used_ = False  # the head's naming is under test, not the floor
    assert bool((m.net_.head(X[lab]).argmax(1) == y[lab]).all())  # labelled rows: all fit
    m.class_names_ = m._name_classes(X, y_oom)
    # head class perm[c] is cluster c: it must be named c (the labelled rows alone said
    # the names were right: every one of them is fitted)
    assert m.class_names_.tolist() == torch.argsort(perm).tolist() == [3, 0, 1, 2]
    assert m.score(X, y) > 0.95 and m.naming_agreement_ > 0.95


def test_unconfirmed_names_warn_once():
    # 200 noise columns drown the class signal in the input space the names are judged in:
    # the nearest labelled row is a coin toss, so the names cannot be confirmed
    X, Z, y, y_oom, lab = _blobs()
    g = torch.Generator().manual_seed(1)
    X = torch.cat([X, 3 * torch.randn(len(X), 200, generator=g)], 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = COX(4, bottleneck=8, hidden=32, steps=50, floor="off").fit(
            X, {"a": Z}, {"a": y}, pairs=torch.stack([lab, lab], 1), y_oom=y_oom)
    named = [w for w in caught if issubclass(w.category, COXNamingWarning)]
    assert len(named) == 1 and "unconfirmed" in str(named[0].message)
    assert m.naming_agreement_ < 0.5


def _unequal_blobs(seed, n=300, sizes=(0.5, 0.3, 0.2)):
    """Three classes of unequal mass seen by a 32-d IM and a 10-d OOM view of one latent, the
    OOM rows shuffled apart: the true correspondences are known by class."""
    g = torch.Generator().manual_seed(seed)
    y = torch.cat([torch.full((int(n * s),), c) for c, s in enumerate(sizes)])
    lat = 3 * torch.randn(len(sizes), 8, generator=g)
    Z = F.normalize(lat[y] @ torch.randn(8, 32, generator=g)
                    + 2 * torch.randn(len(y), 32, generator=g), dim=1)
    yo = y[torch.randperm(len(y), generator=g)]
    X = torch.tanh((lat[yo] + torch.randn(len(y), 8, generator=g))
                   @ torch.randn(8, 10, generator=g) / 3)
    return X, Z, y, yo


def test_unpaired_rematching_does_not_collapse():
    # the first re-matching round once left 1-2 pairs (a collapsed OOM embedding)
    pytest.importorskip("ot")
    boot, final = [], []
    for seed in range(4):
        X, Z, y, yo = _unequal_blobs(seed)
        m = COX(3, bottleneck=8, hidden=32, steps=400, seed=seed).fit(X, {"a": Z}, {"a": y})
        assert all(len(p) >= 15 for p in m.history_[1:])  # min_pairs: 5 per class
        boot.append(match_purity(m.history_[0], y, yo))
        final.append(match_purity(m.correspondences_, y, yo))
    assert sum(final) / 4 >= sum(boot) / 4


def test_matching_guard_keeps_the_pairs_and_warns_once_naming_the_rounds():
    pytest.importorskip("ot")
    X, Z, y, _ = _unequal_blobs(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = COX(3, bottleneck=8, hidden=32, steps=20, min_pairs=10**6).fit(X, {"a": Z}, {"a": y})
    guard = [w for w in caught if issubclass(w.category, COXMatchingWarning)]
    assert len(guard) == 1 and "round(s) 1, 2, 3, 4, 5" in str(guard[0].message)
    assert m.refused_rounds_ == [1, 2, 3, 4, 5]
    assert all(torch.equal(p, m.history_[0]) for p in m.history_)


def test_matching_guard_advises_standardising_only_where_the_columns_call_for_it():
    # issue 68 walk: "Standardise X_oom" was advised for columns already standardised
    pytest.importorskip("ot")
    X, Z, y, _ = _unequal_blobs(0)
    X = (X - X.mean(0)) / X.std(0)                             # standardised: spread ~1
    wide = X * torch.logspace(0, 3, X.shape[1], dtype=X.dtype)  # 1000-fold apart
    said = {}
    for name, x in (("standardised", X), ("wide", wide)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            COX(3, bottleneck=8, hidden=32, steps=20, min_pairs=10**6).fit(x, {"a": Z}, {"a": y})
        said[name] = " ".join(str(w.message) for w in caught
                              if issubclass(w.category, COXMatchingWarning))
    assert "Give a few pairs (pairs=...)" in said["standardised"]
    assert "Standardise X_oom" not in said["standardised"]
    assert "Standardise X_oom or give a few pairs" in said["wide"]


def test_convergence_warning_only_without_a_plateau():
    pytest.importorskip("ot")
    X, Z, y, y_oom, _ = _blobs()
    with warnings.catch_warnings(record=True) as caught:  # easy, GW bootstrap: silent
        warnings.simplefilter("always")
        m = COX(4, bottleneck=8, hidden=32, steps=400, floor="off").fit(X, {"a": Z}, {"a": y},
                                                                         y_oom=y_oom)
    assert not [w for w in caught if issubclass(w.category, COXConvergenceWarning)]
    assert m.score(X, y) > 0.95
    Xt, im, lab, pairs, yt, _ = _toy()
    with pytest.warns(COXConvergenceWarning, match="plateau"):  # 12 steps: still falling
        _model(steps=12).fit(Xt, im, lab, pairs=pairs, y_oom=yt)


def _few_pairs(seed=0):
    """Four well-separated OOM clusters, 3 paired rows per class, the rest unlabelled."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(120) % 4
    X = 4 * torch.randn(4, 6, generator=g)[y] + torch.randn(120, 6, generator=g)
    Z = F.normalize(torch.randn(4, 8, generator=g)[y] + 0.3 * torch.randn(120, 8, generator=g),
                    dim=1)
    lab = torch.cat([torch.nonzero(y == c).flatten()[:3] for c in range(4)])
    return X, {"a": Z}, {"a": y}, torch.stack([lab, lab], 1), y


def test_the_floor_predicts_and_is_named_where_cox_is_worse(tmp_path):
    # issue 68: with 12 pairs (3 per class) COX's head reached 0.627 where a logistic
    # regression on the 12 paired rows reached 0.958. Here COX's head is untrained (one
    # step, near chance) and the clusters are linearly separable: in cross-validation the
    # floor wins, predicts, and the warning names it with the counts and the sign test's p.
    from sklearn.linear_model import LogisticRegression

    from iclr25.cox import COXFloorWarning

    X, im, lab, pairs, y = _few_pairs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = COX(4, steps=1, hidden=16, bottleneck=4, batch_size=16).fit(X, im, lab, pairs=pairs)
    floor = [w for w in caught if issubclass(w.category, COXFloorWarning)]
    assert len(floor) == 1
    text = str(floor[0].message)
    assert "LogisticRegression on the 12 labelled OOM rows" in text and "\n" not in text
    assert "3-fold cross-validation" in text and "12 of 12 right" in text
    assert f"COX {round(12 * m.head_accuracy_)}." in text
    h, f = m.cv_correct_.T
    b, c = int((h & ~f).sum()), int((~h & f).sum())
    assert f"it alone was right on {b} rows, the regression alone on {c}, p = " in text
    assert "sign test at 0.05" in text and "Standardise" not in text  # lbfgs converged
    assert floor[0].filename == __file__  # the caller's line, not the library's source
    assert m.floor_used_ and m.floor_accuracy_ == 1.0 and m.head_accuracy_ < 1.0
    # the per-row record the accuracies count: one row per labelled row, head then floor
    assert m.cv_correct_.shape == (12, 2) and m.cv_correct_.dtype == torch.bool
    assert m.cv_correct_.sum(0).tolist() == [round(12 * m.head_accuracy_), 12]
    # the floor is sklearn's plain LogisticRegression on the labelled rows as given (issue
    # 68's set B: more accurate than the standardised one, 0.572 vs 0.567)
    rows = pairs[:, 1]
    ref = LogisticRegression(max_iter=2000).fit(X[rows].double().numpy(), y[rows].numpy())
    assert m.predict(X).tolist() == ref.predict(X.double().numpy()).tolist()
    assert torch.allclose(m.predict_proba(X).double(),
                          torch.as_tensor(ref.predict_proba(X.double().numpy())), atol=1e-6)
    back = COX.load(m.save(tmp_path / "m.safetensors"))
    assert back.floor_used_ and torch.equal(back.predict(X), m.predict(X))
    assert torch.equal(back.cv_correct_, m.cv_correct_)
    del m.cv_correct_   # as a model saved before cv_correct_ was recorded: loads, predicts
    old = COX.load(m.save(tmp_path / "old.safetensors"))
    assert not hasattr(old, "cv_correct_") and torch.equal(old.predict(X), m.predict(X))
    off = COX(4, steps=1, hidden=16, bottleneck=4, batch_size=16, floor="off").fit(
        X, im, lab, pairs=pairs)
    assert not off.floor_used_ and off.head_accuracy_ != off.head_accuracy_  # NaN: no check
    assert off.cv_correct_.shape == (0, 2)
    assert torch.equal(off.predict(X), m._head_proba(X).argmax(1))  # the same head


def test_a_file_saved_with_the_standardised_floor_still_predicts_with_it(tmp_path):
    # files written before the floor became plain (issue 68, set B) hold its mean and scale
    from sklearn.linear_model import LogisticRegression

    X, im, lab, pairs, y = _few_pairs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = COX(4, steps=1, hidden=16, bottleneck=4, batch_size=16).fit(X, im, lab,
                                                                          pairs=pairs)
    rows = pairs[:, 1]
    mu, sd = X[rows].mean(0), X[rows].std(0)
    ref = LogisticRegression(max_iter=2000).fit(((X[rows] - mu) / sd).double().numpy(),
                                                y[rows].numpy())
    m.floor_mean_, m.floor_scale_ = mu, sd  # the old layout
    m.floor_coef_, m.floor_intercept_ = torch.as_tensor(ref.coef_), torch.as_tensor(
        ref.intercept_)
    back = COX.load(m.save(tmp_path / "old.safetensors"))
    assert back.floor_used_
    assert back.predict(X).tolist() == ref.predict(((X - mu) / sd).double().numpy()).tolist()


def test_the_head_predicts_only_on_a_clear_win_by_the_sign_test():
    # issue 68 (set B): "more held-out rows right" fell below the floor on 7 of 48 draws,
    # the one-sided exact sign test at 0.05 on none. Walk 10's CV counts, 6 rows only the
    # head got right against 5 only the floor (of 40), keep the floor: p = P(Bin(11, 1/2)
    # >= 6) = 1/2; 9 against 0 keeps the head: p = 2^-9.
    from math import comb

    from iclr25.cox.model import _FLOOR_LEVEL, _sign_test

    def rows(b, c, n=40):  # per-row correctness (head, floor): b, c, then both right
        return torch.tensor([[True, False]] * b + [[False, True]] * c
                            + [[True, True]] * (n - b - c))

    b, c, p = _sign_test(rows(6, 5))
    assert (b, c) == (6, 5) and p == pytest.approx(0.5) and p > _FLOOR_LEVEL
    b, c, p = _sign_test(rows(9, 0))
    assert (b, c) == (9, 0) and p == pytest.approx(2.0 ** -9) and p <= _FLOOR_LEVEL
    assert _sign_test(rows(5, 0))[2] <= _FLOOR_LEVEL < _sign_test(rows(4, 0))[2]  # 1/32, 1/16
    b, c, p = _sign_test(rows(7, 2))
    assert p == pytest.approx(sum(comb(9, k) for k in range(7, 10)) / 2 ** 9)  # 0.090
    assert _sign_test(rows(0, 0))[2] == 1.0  # no discordant row: the floor


def test_an_unconverged_floor_says_so_in_our_warning(monkeypatch):
    # the plain regression's lbfgs may stop unconverged on raw rows: sklearn's
    # ConvergenceWarning never reaches the caller (its source line); the floor's warning
    # says so, from the caller's line
    from sklearn.exceptions import ConvergenceWarning

    from iclr25.cox import COXFloorWarning, model

    monkeypatch.setattr(model, "_FLOOR_ITER", 1)
    X, im, lab, pairs, y = _few_pairs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = COX(4, steps=1, hidden=16, bottleneck=4, batch_size=16).fit(X, im, lab, pairs=pairs)
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    floor = [w for w in caught if issubclass(w.category, COXFloorWarning)]
    assert m.floor_used_ and len(floor) == 1 and floor[0].filename == __file__
    assert "Standardise X_oom: the regression's lbfgs stopped at 1 iterations unconverged." \
        in str(floor[0].message)


def _xor(seed=0, per=3):
    """Two classes on the diagonals of four OOM clusters (no line separates them); the IM
    embeddings separate the classes; ``per`` paired rows per cluster, the rest unlabelled."""
    g = torch.Generator().manual_seed(seed)
    k = torch.arange(160) % 4
    corners = torch.tensor([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    y = k // 2
    X = torch.cat([4 * corners[k] + 0.5 * torch.randn(160, 2, generator=g),
                   0.5 * torch.randn(160, 2, generator=g)], 1)
    Z = F.normalize(torch.randn(2, 8, generator=g)[y] + 0.3 * torch.randn(160, 8, generator=g),
                    dim=1)
    lab = torch.cat([torch.nonzero(k == c).flatten()[:per] for c in range(4)])
    return X, {"a": Z}, {"a": y}, torch.stack([lab, lab], 1), y


def test_cox_predicts_where_it_beats_the_floor_in_cross_validation():
    # XOR: a logistic regression cannot separate the diagonals, COX's encoder can; with 24
    # labelled rows the head's win is clear (with 12 it was 12 of 12 against 9: p = 1/8,
    # the floor predicts)
    X, im, lab, pairs, y = _xor(per=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = COX(2, steps=60, hidden=32, bottleneck=8, batch_size=32).fit(
            X, im, lab, pairs=pairs)
    from iclr25.cox import COXFloorWarning

    assert not [w for w in caught if issubclass(w.category, COXFloorWarning)]
    assert not m.floor_used_ and m.head_accuracy_ > m.floor_accuracy_
    assert m.floor_accuracy_ <= 0.75 and m.score(X, y) > 0.9


def test_no_floor_without_two_labelled_classes_or_a_row_per_fold():
    X, im, lab, pairs, y = _few_pairs()
    one_each = torch.cat([torch.nonzero(y == c).flatten()[:1] for c in range(4)])
    m = COX(4, steps=1, hidden=16, bottleneck=4, batch_size=16).fit(
        X, im, lab, pairs=torch.stack([one_each, one_each], 1))
    assert not m.floor_used_ and m.floor_accuracy_ != m.floor_accuracy_  # NaN: no CV
    assert m.head_accuracy_ != m.head_accuracy_
