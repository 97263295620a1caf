"""CovarianceHead, HeteroscedasticRegressor, the samplers and the CLI."""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from typer.testing import CliRunner

from iclr25.toss import (
    CovarianceHead,
    HeteroscedasticRegressor,
    make_heteroscedastic,
    make_sinusoid,
)
from iclr25.toss.cli import app


@pytest.fixture(scope="module")
def data():
    return make_heteroscedastic(300, 2, seed=0)


def _reg(**kw):
    return HeteroscedasticRegressor(**({"hidden": (16,), "epochs": 2, "n_neighbors": 16,
                                        "seed": 0} | kw))


def test_head_gives_spd_square_root_and_cholesky():
    head = CovarianceHead(5, 3).double()
    h = torch.randn(7, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    mean, S = head(h)
    assert mean.shape == (7, 3) and S.shape == (7, 3, 3)
    torch.testing.assert_close(S, S.mT)
    assert bool((torch.linalg.eigvalsh(S) > 0).all())
    _, L = head.tril(h)
    assert torch.equal(L, L.tril()) and bool((L.diagonal(dim1=1, dim2=2) > 0).all())
    torch.testing.assert_close(L @ L.mT, S)


@pytest.mark.parametrize("loss", ["toss", "nll", "beta-nll", "tic", "w2-labels"])
def test_shapes_dtype_and_fitted_attributes(loss, data, one_thread):
    reg = _reg(loss=loss).fit(data.X, data.Y, data.cov if loss == "w2-labels" else None)
    Xnp = data.X[:5].numpy()
    mean, cov = reg.predict(Xnp), reg.predict_cov(data.X[:5].float())
    assert isinstance(mean, np.ndarray)   # numpy in, numpy out (scikit-learn's habit)
    assert mean.shape == (5, 2) and mean.dtype == np.float64
    assert cov.shape == (5, 2, 2) and cov.dtype == torch.float32
    assert bool((torch.linalg.eigvalsh(cov.double()) > 0).all())
    assert len(reg.history_) == 2 and np.isfinite(reg.history_).all()
    assert isinstance(reg.score(data.X, data.Y), float)
    assert (reg.pseudo_cov_ is not None) == (loss == "toss")
    if loss == "toss":
        assert reg.pseudo_cov_.shape == (300, 2, 2)


def test_clone_params_and_determinism(data, one_thread):
    reg = _reg(loss="nll", lr=3e-3)
    c = clone(reg)
    assert c.get_params() == reg.get_params() and c.lr == 3e-3
    a = _reg().fit(data.X, data.Y).predict_cov(data.X)
    b = _reg().fit(data.X, data.Y).predict_cov(data.X)
    assert torch.equal(a, b)
    c = _reg(seed=1).fit(data.X, data.Y).predict_cov(data.X)
    assert not torch.equal(a, c)


@pytest.mark.parametrize("loss", ["beta-nll", "tic"])
def test_save_load_round_trip(loss, data, tmp_path, one_thread):
    reg = _reg(loss=loss).fit(data.X, data.Y)
    reg.save(tmp_path / "m.pt")
    back = HeteroscedasticRegressor.load(tmp_path / "m.pt")
    assert back.get_params() == reg.get_params()
    torch.testing.assert_close(back.predict_cov(data.X), reg.predict_cov(data.X))
    torch.testing.assert_close(back.predict(data.X), reg.predict(data.X))
    (tmp_path / "bad.pt").write_text("no")
    with pytest.raises(ValueError, match="path"):
        HeteroscedasticRegressor.load(tmp_path / "bad.pt")


def test_on_epoch_end_sees_a_usable_model(data, one_thread):
    seen = []
    _reg(epochs=3).fit(data.X, data.Y,
                       on_epoch_end=lambda e, r: seen.append((e, r.predict(data.X[:1]).shape)))
    assert seen == [(0, (1, 2)), (1, (1, 2)), (2, (1, 2))]


def test_input_not_modified(data, one_thread):
    X, Y = data.X.clone(), data.Y.clone()
    _reg().fit(X, Y).predict(X)
    assert torch.equal(X, data.X) and torch.equal(Y, data.Y)


def test_w2_labels_learn_the_covariance_better_than_the_prior(one_thread):
    d = make_sinusoid(1500, seed=0)
    reg = HeteroscedasticRegressor(loss="w2-labels", epochs=4, seed=0, hidden=(32, 32))
    reg.fit(d.X, d.Y, d.cov)
    err = (reg.predict_cov(d.X)[:, 0, 0].sqrt() - d.cov[:, 0, 0].sqrt()).abs().mean()
    flat = (d.cov[:, 0, 0].sqrt().mean() - d.cov[:, 0, 0].sqrt()).abs().mean()
    assert float(err) < 0.5 * float(flat)


def test_errors(data):
    X, Y, C = data.X, data.Y, data.cov
    with pytest.raises(NotFittedError):
        _reg().predict(X)
    with pytest.raises(ValueError, match="loss"):
        _reg(loss="kl").fit(X, Y)
    with pytest.raises(ValueError, match="center"):
        _reg(center="median").fit(X, Y)
    with pytest.raises(ValueError, match="cov"):
        _reg(loss="w2-labels").fit(X, Y)
    with pytest.raises(ValueError, match="cov"):
        _reg(loss="nll").fit(X, Y, C)
    with pytest.raises(ValueError, match="cov must have shape"):
        _reg(loss="w2-labels").fit(X, Y, C[:, :1, :1])
    asym = C.clone()
    asym[:, 0, 1] += 1.0
    with pytest.raises(ValueError, match="symmetric"):
        _reg(loss="w2-labels").fit(X, Y, asym)
    with pytest.raises(ValueError, match="positive semi-definite"):
        _reg(loss="w2-labels").fit(X, Y, -C)
    with pytest.raises(ValueError, match="same number of rows"):
        _reg().fit(X, Y[:-1])
    with pytest.raises(ValueError, match="Y must be 2-D"):
        _reg().fit(X, Y[:, 0])
    with pytest.raises(TypeError, match="X"):
        _reg().fit(X.long(), Y)
    with pytest.raises(ValueError, match="n_neighbors"):
        _reg(n_neighbors=300).fit(X, Y)
    Xc = X.clone()
    Xc[:, 0] = 1.0
    with pytest.raises(ValueError, match="X column 0 is constant"):
        _reg().fit(Xc, Y)
    with pytest.raises(ValueError, match="epochs"):
        _reg(epochs=0).fit(X, Y)
    Xn = X.clone()
    Xn[0, 0] = float("nan")
    with pytest.raises(ValueError, match="X"):
        _reg().fit(Xn, Y)


def test_samplers_are_seeded_and_consistent():
    a, b = make_heteroscedastic(400, 3, seed=5), make_heteroscedastic(400, 3, seed=5)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert bool((torch.linalg.eigvalsh(a.cov) > 0).all())
    # y - E[y|x] whitened by Σ(x) is standard normal
    z = torch.linalg.solve_triangular(torch.linalg.cholesky(a.cov),
                                      (a.Y - a.mean).unsqueeze(-1), upper=False).squeeze(-1)
    assert abs(float(z.mean())) < 0.1 and abs(float(z.var()) - 1) < 0.1
    s = make_sinusoid(2000, seed=0, varying_amplitude=False)
    assert float(s.X.abs().max()) <= 5.0
    torch.testing.assert_close(s.cov[:, 0, 0].sqrt(), s.X[:, 0].abs() + 1e-5)
    torch.testing.assert_close(s.mean, 5.0 * torch.sin(2 * torch.pi * s.X))
    with pytest.raises(ValueError, match="dim"):
        make_heteroscedastic(10, 0, seed=0)


def test_het_scale_weights_only_the_x_dependent_term():
    """h scales diag(√|x − μ_x|) alone: the draws of X and E[y|x] are the same at every h,
    h = 0 is homoscedastic, and Σ is affine in h."""
    d0, d1, d4 = (make_heteroscedastic(300, 3, het_scale=h, seed=2) for h in (0.0, 1.0, 4.0))
    assert torch.equal(d0.X, d1.X) and torch.equal(d0.mean, d4.mean)
    torch.testing.assert_close(d0.cov, d0.cov[:1].expand_as(d0.cov))
    torch.testing.assert_close(d4.cov - d0.cov, 4 * (d1.cov - d0.cov))
    assert torch.equal(make_heteroscedastic(300, 3, seed=2).cov, d1.cov)  # 1 is TIC-TAC's
    with pytest.raises(ValueError, match="het_scale"):
        make_heteroscedastic(10, 2, het_scale=-1.0, seed=0)


def test_cli_fit_predict_round_trip(tmp_path, one_thread):
    d = make_heteroscedastic(200, 2, seed=1)
    csv = tmp_path / "train.csv"
    table = np.hstack([d.X.numpy(), d.Y.numpy()])
    np.savetxt(csv, table, delimiter=",", header="a,b,y1,y2", comments="")
    runner = CliRunner()
    model = tmp_path / "m.pt"
    r = runner.invoke(app, ["fit", str(csv), "--targets", "y1,y2", "--epochs", "1",
                            "--n-neighbors", "16", "--out", str(model)])
    assert r.exit_code == 0, r.output
    pred = tmp_path / "pred.csv"
    r = runner.invoke(app, ["predict", str(model), str(csv), "--out", str(pred)])
    assert r.exit_code == 0, r.output
    header = pred.read_text().splitlines()[0].split(",")
    assert header == ["mean_y1", "mean_y2", "cov_y1_y1", "cov_y2_y1", "cov_y2_y2"]
    out = np.loadtxt(pred, delimiter=",", skiprows=1)
    reg = HeteroscedasticRegressor.load(model)
    np.testing.assert_allclose(out[:, :2], reg.predict(d.X).numpy(), rtol=1e-5, atol=1e-6)
    npz = tmp_path / "d.npz"
    np.savez(npz, X=d.X.numpy(), Y=d.Y.numpy())
    r = runner.invoke(app, ["fit", str(npz), "--loss", "tic", "--epochs", "1",
                            "--out", str(model)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["predict", str(model), str(npz), "--out", str(pred)])
    assert r.exit_code == 0, r.output
    out = np.loadtxt(pred, delimiter=",", skiprows=1)
    cov = HeteroscedasticRegressor.load(model).predict_cov(d.X)
    np.testing.assert_allclose(out[:, 2], cov[:, 0, 0].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("args, match", [
    (["fit", "{csv}", "--targets", "y9"], "y9"),
    (["fit", "{csv}"], "--targets"),
    (["fit", "{csv}", "--targets", "y1", "--loss", "kl"], "--loss"),
    (["fit", "{csv}", "--targets", "y1", "--epochs", "0"], "--epochs"),
    (["fit", "{dir}/missing.csv", "--targets", "y1"], "does not exist"),
    (["predict", "{dir}/missing.pt", "{csv}"], "MODEL"),
])
def test_cli_errors(tmp_path, args, match):
    csv = tmp_path / "t.csv"
    csv.write_text("a,y1\n1,2\n2,3\n")
    args = [a.format(csv=csv, dir=tmp_path) for a in args]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2
    assert match in r.output


def test_tic_covariance_is_the_official_formula_on_a_linear_mean():
    """hidden=(): the mean is W x + b, so J = W, every Hessian is 0 and Σ = ε₁² W Wᵀ + L Lᵀ."""
    from iclr25.toss.model import _Net

    net = _Net(3, 2, (), seed=0, tic=True).double()
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    out = net(x)
    mean, L, raw, JJ, HH = out
    W = net.head.linear.weight[:2]
    torch.testing.assert_close(JJ, (W @ W.T).expand(5, 2, 2).detach())
    assert torch.equal(HH, torch.zeros_like(HH))
    eps = raw.square()
    torch.testing.assert_close(_Net.tic_cov(out), eps[:, :1, None] * W @ W.T + L @ L.mT)


@pytest.mark.parametrize("hidden", [(8,), (8, 6)])
def test_tic_derivative_terms_match_autograd_on_an_elu_net(hidden):
    from torch.autograd.functional import hessian, jacobian

    from iclr25.toss.model import _Net

    net = _Net(3, 2, hidden, seed=1, tic=True).double()
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    _, _, _, JJ, HH = net(x)
    for b in range(4):
        J = jacobian(lambda v: net._mean(v), x[b])
        H = [hessian(lambda v, i=i: net._mean(v)[i], x[b]) for i in range(2)]
        torch.testing.assert_close(JJ[b], J @ J.T)
        ref = torch.tensor([[float(torch.trace(H[i] @ H[j])) for j in range(2)]
                            for i in range(2)], dtype=torch.float64)
        torch.testing.assert_close(HH[b], ref)
    assert float(HH.abs().max()) > 0  # ELU: the curvature term is not zero


def test_tic_learns_a_known_covariance(one_thread):
    """y = A x + ε, ε ~ N(0, Σ₀): TIC's Σ̂(x) must recover Σ₀ (J Jᵀ cannot explain it alone)."""
    g = torch.Generator().manual_seed(0)
    X = torch.rand(1500, 2, generator=g, dtype=torch.float64) * 2 - 1
    S0 = torch.tensor([[1.0, 0.6], [0.6, 0.5]], dtype=torch.float64)
    eps = torch.randn(1500, 2, generator=g, dtype=torch.float64) @ torch.linalg.cholesky(S0).T
    Y = X @ torch.tensor([[2.0, -1.0], [0.5, 1.0]], dtype=torch.float64) + eps
    reg = HeteroscedasticRegressor(loss="tic", hidden=(32,), epochs=4, lr=3e-3, seed=0)
    C = reg.fit(X, Y).predict_cov(X[:500])
    err = float((torch.linalg.matrix_norm(C - S0) / torch.linalg.matrix_norm(S0)).mean())
    assert err < 0.2
    assert isinstance(reg.model_.trunk[1], torch.nn.ELU)
    assert reg.history_[-1] < reg.history_[0]


def test_cli_corrupt_npz_names_the_file(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"garbage")
    r = CliRunner().invoke(app, ["fit", str(bad), "--out", str(tmp_path / "m.safetensors")])
    assert r.exit_code == 2 and "bad.npz" in r.output and "allow_pickle" not in r.output


def test_cli_fit_takes_the_engine_options(tmp_path, one_thread):
    """--checkpoint-every writes <out>.ckpt; --resume from it gives the same model; devices
    above what exists: one line, exit 2."""
    d = make_sinusoid(200, seed=0)
    data = tmp_path / "d.npz"
    np.savez(data, X=d.X.numpy(), Y=d.Y.numpy())
    runner = CliRunner()
    base = ["fit", str(data), "--epochs", "2", "--n-neighbors", "8", "--loss", "nll"]
    out = runner.invoke(app, [*base, "--out", str(tmp_path / "a.safetensors"),
                              "--checkpoint-every", "5"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "a.ckpt").is_file()
    out = runner.invoke(app, [*base, "--out", str(tmp_path / "b.safetensors"),
                              "--resume", str(tmp_path / "a.ckpt")])
    assert out.exit_code == 0, out.output
    a = HeteroscedasticRegressor.load(tmp_path / "a.safetensors")
    b = HeteroscedasticRegressor.load(tmp_path / "b.safetensors")
    assert all(torch.equal(p, q) for p, q in zip(a.model_.parameters(), b.model_.parameters(),
                                                 strict=True))
    out = runner.invoke(app, [*base, "--devices", "4096", "--out", str(tmp_path / "c.st")])
    lines = out.output.strip().splitlines()
    assert out.exit_code == 2 and len(lines) == 1 and "--devices=4096" in lines[0]


def _curved(n=400, amp=3.0, seed=0):
    """A 1-D input, a steep sinusoidal mean and small noise (σ 0.1): the mean's slope across
    a neighbourhood dwarfs the noise."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 1, generator=g, dtype=torch.float64) * 4 - 2
    Y = amp * torch.sin(3 * X) + 0.1 * torch.randn(n, 1, generator=g, dtype=torch.float64)
    return X, Y


def test_slope_ratios_are_about_one_for_noise_and_large_for_a_steep_mean():
    from iclr25.toss.pseudo import pseudo_covariance

    for amp, lo, hi in ((0.0, 0.9, 1.1), (3.0, 10.0, float("inf"))):
        X, Y = _curved(amp=amp)
        ratios = []
        pseudo_covariance(X, Y, n_neighbors=32, ratios=ratios)
        med = float(torch.cat(ratios).nanmedian())
        assert lo < med < hi, (amp, med)


def test_default_center_is_local_linear_and_its_labels_see_through_the_slope(one_thread):
    # issue 68: the mean-centred labels count the steep mean's slope as noise
    X, Y = _curved()
    assert HeteroscedasticRegressor().center == "local_linear"
    with pytest.warns(UserWarning):                  # center="mean" (tested below)
        mean = _reg(center="mean", n_neighbors=32, epochs=1).fit(X, Y).pseudo_cov_
    default = _reg(n_neighbors=32, epochs=1).fit(X, Y).pseudo_cov_
    err = {k: float((v[:, 0, 0] - 0.01).abs().mean() / 0.01)    # the true variance 0.01
           for k, v in (("default", default), ("mean", mean))}
    assert err["default"] < 1 and err["mean"] > 10, err


def test_mean_center_warns_naming_local_linear_on_a_steep_mean_only(one_thread):
    X, Y = _curved()
    with pytest.warns(UserWarning, match="center='local_linear'") as rec:
        _reg(center="mean", n_neighbors=32, epochs=1).fit(X, Y)
    assert rec[0].filename == __file__          # points at the caller's line
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _reg(center="mean", n_neighbors=32, epochs=1).fit(*_curved(amp=0.0))   # noise only
        _reg(n_neighbors=32, epochs=1).fit(X, Y)                  # local_linear: no warning


def test_local_linear_default_needs_more_neighbours_than_inputs_and_says_so():
    X = torch.randn(50, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with pytest.raises(ValueError, match=r"n_neighbors must be > dim X \+ 1 = 9 .*center='mean'"):
        _reg(n_neighbors=9).fit(X, X[:, :1])
    _reg(n_neighbors=9, center="mean", epochs=1).fit(X, X[:, :1])      # the paper's runs


def test_cli_center_option_and_warning(tmp_path, one_thread):
    X, Y = _curved()
    csv = tmp_path / "c.csv"
    np.savetxt(csv, np.hstack([X.numpy(), Y.numpy()]), delimiter=",", header="x,y",
               comments="")
    base = ["fit", str(csv), "--targets", "y", "--epochs", "1", "--n-neighbors", "32",
            "--out", str(tmp_path / "m.safetensors")]
    r = CliRunner().invoke(app, [*base, "--center", "mean"])
    assert r.exit_code == 0, r.output
    assert "warning: toss fit: the mean of Y varies" in r.output
    assert "--center local_linear fits the slope out" in r.output
    r = CliRunner().invoke(app, base)
    assert r.exit_code == 0 and "warning" not in r.output, r.output
    assert HeteroscedasticRegressor.load(tmp_path / "m.safetensors").center == "local_linear"
    r = CliRunner().invoke(app, [*base, "--center", "median"])
    assert r.exit_code == 2 and "--center must be one of local_linear, mean" in r.output


def test_cli_refuses_too_few_neighbours_in_its_own_words(tmp_path):
    # the library's refusal named n_neighbors and center='mean' at the command line (h68left6)
    X = torch.randn(40, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    np.savez(tmp_path / "d.npz", X=X.numpy(), Y=X[:, :1].numpy())
    r = CliRunner().invoke(app, ["fit", str(tmp_path / "d.npz"), "--n-neighbors", "5",
                                 "--out", str(tmp_path / "m.safetensors")])
    assert r.exit_code == 2, r.output
    assert r.output.strip() == ("error: --n-neighbors must be > dim X + 1 = 9 for --center "
                                "local_linear (the default), got 5: raise it, or pass "
                                "--center mean")
    assert not (tmp_path / "m.safetensors").exists()
