"""The V3 estimator, codebook accuracy, leakage report and CLI."""

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError
from typer.testing import CliRunner

from iclr25.cli import app as root_app
from iclr25.datasets.views import digit_sequences
from iclr25.v3 import V3, codebook_accuracy, kmeans_codes, leakage_report


@pytest.fixture(scope="module")
def data():
    return digit_sequences(24, seed=0)


def _small(**kw):
    return V3(epochs=1, batch_size=8, hidden=16, d_content=4, d_style=4, **kw)


@pytest.fixture(scope="module")
def fitted(data):
    return _small(seed=0).fit(data[0])


def test_codebook_accuracy_relabelled_and_macro():
    labels = torch.arange(10).repeat(3)
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(0))
    assert codebook_accuracy(perm[labels], labels) == 1.0
    # codes 0,0,0,1 vs labels 0,1,1,1: best matching keeps 2 of 4; macro (2/3 + 1) / 2
    c, y = torch.tensor([0, 0, 0, 1]), torch.tensor([0, 1, 1, 1])
    assert codebook_accuracy(c, y) == 0.5
    assert codebook_accuracy(c, y, one_to_one=False) == pytest.approx(5 / 6)
    assert codebook_accuracy(np.zeros(5, dtype=int), np.arange(5)) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="codes"):
        codebook_accuracy(torch.zeros(3, dtype=torch.long), torch.zeros(4, dtype=torch.long))
    with pytest.raises(TypeError, match="codes"):
        codebook_accuracy(torch.zeros(3), torch.zeros(3, dtype=torch.long))


def test_fit_predict_transform_shapes(fitted, data):
    X = data[0]
    codes = fitted.predict(X)
    zc, zs = fitted.transform(X)
    assert codes.shape == (24, 10) and codes.dtype == torch.int64
    assert int(codes.min()) >= 0 and int(codes.max()) < 10
    assert zc.shape == (24, 10, 4) and zs.shape == (24, 10, 4)
    assert fitted.codebook_.shape == (10, 4)
    assert len(fitted.history_) == 1 and set(fitted.history_[0]) >= {"loss", "recon", "v3"}
    assert fitted.reconstruct(X[:2], X[2:4]).shape == X[:2].shape


def test_numpy_in_numpy_out(fitted, data):
    # issue 68: predict returned a tensor for a numpy X (scikit-learn returns numpy)
    X = data[0]
    codes = fitted.predict(X.numpy())
    assert isinstance(codes, np.ndarray) and codes.dtype == np.int64
    assert np.array_equal(codes, fitted.predict(X).numpy())
    zc, zs = fitted.transform(X.numpy())
    assert isinstance(zc, np.ndarray) and isinstance(zs, np.ndarray)
    assert np.array_equal(zs, fitted.transform(X)[1].numpy())
    rec = fitted.reconstruct(X[:2].numpy())
    assert isinstance(rec, np.ndarray) and rec.shape == tuple(X[:2].shape)


def test_seed_determinism_and_input_untouched(data):
    X = data[0]
    X0 = X.clone()
    a, b = _small(seed=3).fit(X), _small(seed=3).fit(X)
    assert torch.equal(a.predict(X), b.predict(X))
    torch.testing.assert_close(a.transform(X)[1], b.transform(X)[1])
    assert torch.equal(X, X0)
    state = torch.random.get_rng_state()
    _small(seed=3).fit(X)
    assert torch.equal(state, torch.random.get_rng_state())


def test_float64_numpy_input_and_ablation(data):
    X = data[0].double().numpy()
    m = _small(seed=1, v3=False, bundle="paper").fit(X)
    assert m.transform(X)[0].dtype == np.float64  # numpy in, numpy out (issue 68)
    assert m.history_[0]["v3"] == 0.0


def test_save_load_roundtrip(fitted, data, tmp_path):
    fitted.save(tmp_path / "m.pt")
    m = V3.load(tmp_path / "m.pt")
    assert torch.equal(m.predict(data[0]), fitted.predict(data[0]))
    (tmp_path / "bad.pt").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="path"):
        V3.load(tmp_path / "bad.pt")


def test_estimator_errors(data, fitted):
    X = data[0]
    with pytest.raises(NotFittedError):
        V3().predict(X)
    with pytest.raises(ValueError, match="X"):
        _small().fit(X[:, :, 0, 0, 0])
    with pytest.raises(ValueError, match="X"):
        _small().fit(X[:, :1])
    with pytest.raises(ValueError, match="X"):
        _small().fit(X[:1])
    bad = X.clone()
    bad[0, 0, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="X"):
        _small().fit(bad)
    with pytest.raises(TypeError, match="X"):
        _small().fit((X * 255).long())
    with pytest.raises(ValueError, match="n_codes"):
        V3(n_codes=1).fit(X)
    with pytest.raises(ValueError, match="bundle"):
        V3(bundle="mine").fit(X)
    with pytest.raises(ValueError, match="relativity"):
        V3(relativity=0).fit(X)
    with pytest.raises(ValueError, match="X"):
        fitted.predict(torch.rand(2, 3, 5))


def test_leakage_report_and_kmeans(fitted, data):
    X, content, style = data
    rep = leakage_report(fitted, X, content, style)
    assert len(rep) == 8 and all(0.0 <= v <= 1.0 for v in rep.values())
    # without the logistic-regression probes: exactly the kNN entries, the same values
    knn = leakage_report(fitted, X, content, style, linear=False)
    assert knn == {k: v for k, v in rep.items() if k.endswith("_knn")} and len(knn) == 4
    with pytest.raises(ValueError, match="style"):
        leakage_report(fitted, X, content, style[:3])
    km = kmeans_codes(X, 10, seed=0)
    assert km.shape == (24, 10) and codebook_accuracy(km, content) > 0.1


def test_cli_fit_and_encode(tmp_path, data):
    X = data[0].numpy()
    np.save(tmp_path / "s.npy", X)
    r = CliRunner()
    res = r.invoke(root_app, ["v3", "fit", str(tmp_path / "s.npy"), "--codes", "10",
                              "--epochs", "1", "--out", str(tmp_path / "m.pt")])
    assert res.exit_code == 0, res.output
    # V3's loss and codebook usage beside the path, as the saved model has them
    import torch

    from iclr25.v3 import V3
    m = V3.load(tmp_path / "m.pt")
    assert f"final epoch loss: {m.history_[-1]['loss']:.4g} (reconstruction" in res.output
    used = len(torch.unique(m.predict(torch.from_numpy(np.load(tmp_path / "s.npy")))))
    assert f"codebook usage on SEQS: {used} of 10 codes (perplexity " in res.output
    res = r.invoke(root_app, ["v3", "encode", str(tmp_path / "m.pt"), str(tmp_path / "s.npy"),
                              "--codes-out", str(tmp_path / "c.npy")])
    assert res.exit_code == 0, res.output
    c = np.load(tmp_path / "c.npy")
    assert c.shape == (24, 10) and c.dtype == np.int64
    # new user walk (issue 68): a .csv into a missing folder was a traceback; a name without
    # .npy was written with .npy appended under the printed name
    res = r.invoke(root_app, ["v3", "encode", str(tmp_path / "m.pt"), str(tmp_path / "s.npy"),
                              "--codes-out", str(tmp_path / "new" / "c.csv"),
                              "--style-out", str(tmp_path / "new" / "z.npy")])
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "new" / "c.csv").read_text().splitlines()
    assert lines[0] == ",".join(f"n{j}" for j in range(10))
    assert np.array_equal(np.loadtxt(lines[1:], delimiter=",", dtype=np.int64), c)
    assert np.load(tmp_path / "new" / "z.npy").shape[:2] == (24, 10)
    res = r.invoke(root_app, ["v3", "encode", str(tmp_path / "m.pt"), str(tmp_path / "s.npy"),
                              "--codes-out", str(tmp_path / "codes")])
    assert res.exit_code == 2 and "--codes-out must end in .npy or .csv or .txt" in res.output
    assert not (tmp_path / "codes.npy").exists()
    np.save(tmp_path / "i.npy", np.zeros((4, 3, 2), dtype=np.int64))
    np.save(tmp_path / "f2.npy", np.zeros((4, 3), dtype=np.float32))
    (tmp_path / "junk.npy").write_bytes(b"junk")
    for args in (["fit", str(tmp_path / "i.npy"), "--out", str(tmp_path / "x.pt")],
                 ["fit", str(tmp_path / "f2.npy"), "--out", str(tmp_path / "x.pt")],
                 ["fit", str(tmp_path / "junk.npy"), "--out", str(tmp_path / "x.pt")],
                 ["fit", str(tmp_path / "s.npy"), "--codes", "1", "--out",
                  str(tmp_path / "x.pt")],
                 ["encode", str(tmp_path / "m.pt"), str(tmp_path / "f2.npy"),
                  "--codes-out", str(tmp_path / "c2.npy")]):
        res = r.invoke(root_app, ["v3", *args])
        assert res.exit_code == 2, (args, res.output)
    # issue 68 walk: grey image fragments (B, N, H, W) were refused with no word on the fix
    np.save(tmp_path / "grey.npy", np.zeros((4, 3, 8, 8), dtype=np.float32))
    res = r.invoke(root_app, ["v3", "fit", str(tmp_path / "grey.npy"), "--out",
                              str(tmp_path / "x.pt")])
    assert res.exit_code == 2 and res.output.endswith(
        "got (4, 3, 8, 8) (grey images: add the channel, X[:, :, None] of shape "
        "(4, 3, 1, 8, 8); vectors: flatten, X.reshape(4, 3, -1) of shape (4, 3, 64))\n"
    ), res.output
    # round 5: 1-D signals saved as (B, N, 1, F) were told to become (B, N, 1, 1, F) images
    np.save(tmp_path / "signals.npy", np.zeros((4, 3, 1, 16), dtype=np.float32))
    res = r.invoke(root_app, ["v3", "fit", str(tmp_path / "signals.npy"), "--out",
                              str(tmp_path / "x.pt")])
    assert res.exit_code == 2 and res.output.endswith(
        "got (4, 3, 1, 16) (vectors: flatten, X.reshape(4, 3, -1) of shape (4, 3, 16); "
        "grey images: add the channel, X[:, :, None] of shape (4, 3, 1, 1, 16))\n"), res.output


def test_estimator_contract_clone_and_sklearn_checks(data):
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_set_params,
    )

    est = _small(seed=3, bundle="paper")
    for check in (check_get_params_invariance, check_no_attributes_set_in_init,
                  check_parameters_default_constructible, check_set_params):
        check("V3", est)
    c = clone(est)
    assert c.get_params(deep=True) == est.get_params(deep=True) and c is not est
    assert torch.equal(c.fit(data[0]).predict(data[0]), est.fit(data[0]).predict(data[0]))
    with pytest.raises(TypeError):
        V3(10)  # keyword-only


def test_seed_accepts_a_generator(data):
    X = data[0]
    a = _small(seed=torch.Generator().manual_seed(5)).fit(X).predict(X)
    b = _small(seed=torch.Generator().manual_seed(5)).fit(X).predict(X)
    assert torch.equal(a, b)
    g = torch.Generator().manual_seed(5)
    est = _small(seed=g)
    first = est.fit(X).codebook_
    assert not torch.equal(first, est.fit(X).codebook_)  # the Generator moved on
    with pytest.raises(ValueError, match="seed"):
        _small(seed=-1).fit(X)


def test_claims_control_and_trivial_arm():
    import dataclasses

    from iclr25.claims import discover
    from iclr25.v3.claim import SequencesEvidence

    vals = {f.name: 0.0 for f in dataclasses.fields(SequencesEvidence)
            if f.default is dataclasses.MISSING}
    reg = discover()
    ev = SequencesEvidence(**(vals | dict(ablation_mse=0.06, ablation_init_mse=0.1,
                                          kmeans_purity=0.8)))
    beats = reg["v3.beats_baselines"]
    assert not beats.control(ev)        # the ablation did not halve its untrained error
    ev.ablation_mse = 0.05
    assert beats.control(ev)
    # k-means on raw fragments is the trivial arm of the codebook claim
    code = reg["v3.codebook_accuracy"]
    assert code.trivial(ev) == 0.8
    # its control reads the data (labelled kNN on raw fragments) and the ablation, never V3
    ev.digit_knn_raw, ev.v3_purity = 0.74, 1.0
    assert not code.control(ev)         # the fragments do not name the digits well enough
    ev.digit_knn_raw = 0.75
    assert code.control(ev)
    ev.ablation_mse, ev.v3_purity = 0.06, 0.0
    assert not code.control(ev)         # the shared nets did not learn at this budget
    # the OOD claim's control: k-means names digits on the training colours
    ood = reg["v3.ood_colours"]
    assert ood.control(ev) and not ood.control(dataclasses.replace(ev, kmeans_purity=0.19))


def test_initial_model_is_what_fit_starts_from():
    X, _, _ = digit_sequences(8, seed=0)
    est = V3(epochs=1, seed=3)
    a = est._initial_model(X, torch.Generator().manual_seed(3))
    b = est._initial_model(X, torch.Generator().manual_seed(3))
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(),
                                                 b.state_dict().values(), strict=True))


def test_fit_updates_equal_adamw_without_foreach(data, monkeypatch, one_thread):
    """fit's AdamW(foreach=True) is the per-parameter loop's update bit for bit (on one
    thread: with two, MKL's GEMMs alone can differ between identical fits)."""
    X = data[0]
    fast = _small(seed=3).set_params(epochs=2).fit(X).model_.state_dict()
    real = torch.optim.AdamW

    def loop(*a, **kw):
        return real(*a, **{**kw, "foreach": False})

    monkeypatch.setattr(torch.optim, "AdamW", loop)
    slow = _small(seed=3).set_params(epochs=2).fit(X).model_.state_dict()
    assert all(torch.equal(fast[k], slow[k]) for k in fast)
