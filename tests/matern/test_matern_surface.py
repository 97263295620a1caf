"""KernelSurface: sklearn KernelRidge equivalence, Nyström, geometry, invariance, files, errors."""

import math
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process.kernels import Matern
from sklearn.kernel_ridge import KernelRidge

from iclr25.matern import (
    KernelSurface,
    chamfer_l1,
    iou,
    make_shape,
    read_point_cloud,
    write_mesh,
)

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def sphere():
    g = torch.Generator().manual_seed(0)
    d = torch.randn(200, 3, generator=g, dtype=torch.float64)
    d = d / d.norm(dim=1, keepdim=True)
    return 0.3 * d, d


def _augmented(P, N, off):
    lo, hi = P.min(0).values, P.max(0).values
    X = (P - (lo + hi) / 2) / (hi - lo).max()
    Xa = torch.cat([X, X + off * N, X - off * N]).numpy()
    y = np.concatenate([np.zeros(len(P)), np.full(len(P), off), np.full(len(P), -off)])
    return Xa, y, (lo + hi) / 2, 1 / (hi - lo).max()


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_exact_equals_kernel_ridge(sphere, nu):
    P, N = sphere
    P, N = P[:60], N[:60]
    reg = 1e-4
    surf = KernelSurface(nu=nu, length_scale=0.5, reg=reg).fit(P, N)
    Xa, y, shift, scale = _augmented(P, N, 0.005)
    kr = KernelRidge(alpha=reg, kernel=Matern(length_scale=0.5, nu=nu)).fit(Xa, y)
    Q = torch.rand(300, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) - .5
    Q = torch.cat([Q, P[:20]])                  # queries on centres: exact distances needed
    ref = kr.predict(((Q - shift) * scale).numpy())
    np.testing.assert_allclose(surf.decision_function(Q).numpy(), ref, atol=1e-8)
    # Nyström with every training point as a centre is the exact fit
    ny = KernelSurface(nu=nu, length_scale=0.5, reg=reg, n_centers=180, seed=0).fit(P, N)
    np.testing.assert_allclose(ny.decision_function(Q).numpy(), ref, atol=1e-8)


def test_interpolates_offsets_and_sphere_geometry(sphere):
    P, N = sphere
    surf = KernelSurface(nu=0.5, length_scale=0.5).fit(P, N)
    f0 = surf.decision_function(P)
    assert float(f0.abs().max()) < 1e-4
    fo = surf.decision_function(P + 0.005 * N / surf.scale_)
    assert float((fo - 0.005).abs().max()) < 1e-4
    g = torch.Generator().manual_seed(2)
    Q = torch.rand(5000, 3, dtype=torch.float64, generator=g) * 0.8 - 0.4
    assert iou(surf.predict(Q), Q.norm(dim=1) < 0.3) >= 0.95
    verts, faces = surf.extract_mesh(resolution=40)
    assert faces.dtype == torch.int64 and verts.dtype == torch.float64
    assert float((verts.norm(dim=1) - 0.3).abs().max()) < 0.01
    import trimesh
    mesh = trimesh.Trimesh(verts.numpy(), faces.numpy())
    assert mesh.volume > 0                       # faces oriented outwards
    dense = torch.randn(20000, 3, dtype=torch.float64, generator=g)
    assert chamfer_l1(verts, 0.3 * dense / dense.norm(dim=1, keepdim=True)) < 0.008


def test_mesh_extraction_progress_is_opt_in(sphere, capsys):
    P, N = sphere
    surf = KernelSurface(nu=0.5, length_scale=0.5).fit(P, N)
    v_quiet, _ = surf.extract_mesh(resolution=12)
    assert capsys.readouterr().err == ""          # not a terminal: silent
    v_loud, _ = surf.extract_mesh(resolution=12, verbose=True)
    assert "mesh extraction (12³ grid)" in capsys.readouterr().err
    assert torch.equal(v_quiet, v_loud)


def test_the_mesh_takes_the_kind_of_the_points_fit_was_given(sphere, tmp_path):
    # issue 68: numpy points in, a numpy mesh out (extract_mesh takes no array of its own),
    # the same values as the tensor fit's; the kind survives save/load
    P, N = sphere
    kw = dict(nu=0.5, length_scale=0.5)
    vt, ft = KernelSurface(**kw).fit(P, N).extract_mesh(resolution=12)
    surf = KernelSurface(**kw).fit(P.numpy(), N.numpy())
    vn, fn = surf.extract_mesh(resolution=12)
    assert isinstance(vt, torch.Tensor) and isinstance(ft, torch.Tensor)
    assert isinstance(vn, np.ndarray) and isinstance(fn, np.ndarray) and fn.dtype == np.int64
    np.testing.assert_allclose(vn, vt.numpy(), rtol=1e-12, atol=1e-12)
    assert np.array_equal(fn, ft.numpy())
    back = KernelSurface.load(surf.save(tmp_path / "s.safetensors"))
    assert isinstance(back.extract_mesh(resolution=12)[0], np.ndarray)


def test_translation_scale_invariance_and_predict_matches(sphere):
    P, N = sphere
    g = torch.Generator().manual_seed(3)
    Q = torch.rand(2000, 3, dtype=torch.float64, generator=g) * 0.8 - 0.4
    a = KernelSurface().fit(P, N)
    b = KernelSurface().fit(P * 3.0 + torch.tensor([1.0, -2.0, 5.0], dtype=torch.float64), N)
    occ_a = a.predict(Q)
    occ_b = b.predict(Q * 3.0 + torch.tensor([1.0, -2.0, 5.0], dtype=torch.float64))
    assert occ_a.dtype == torch.bool
    assert bool((occ_a == occ_b).all())
    torch.testing.assert_close(a.decision_function(Q), b.decision_function(
        Q * 3.0 + torch.tensor([1.0, -2.0, 5.0], dtype=torch.float64)), atol=1e-9, rtol=1e-7)


def test_arccos_and_nystrom_reconstruct():
    pts, nrm, inside = make_shape("bumpy_sphere", 300, seed=0)
    g = torch.Generator().manual_seed(4)
    Q = torch.rand(5000, 3, dtype=torch.float64, generator=g) * 0.8 - 0.4
    exact = iou(KernelSurface().fit(pts, nrm).predict(Q), inside(Q))
    arc = iou(KernelSurface(kernel="arccos").fit(pts, nrm).predict(Q), inside(Q))
    ny = iou(KernelSurface(n_centers=600, seed=0).fit(pts, nrm).predict(Q), inside(Q))
    assert exact > 0.85 and arc > 0.8 and ny > exact - 0.02


def test_numpy_float32_input_not_modified_and_seeded():
    pts, nrm, _ = make_shape("spheres", 100, seed=1)
    P, N = pts.numpy().astype(np.float32), (nrm * 2).numpy().astype(np.float32)
    P0, N0 = P.copy(), N.copy()
    s = KernelSurface(n_centers=50, seed=7).fit(P, N)
    assert s.alpha_.dtype == torch.float32
    np.testing.assert_array_equal(P, P0)
    np.testing.assert_array_equal(N, N0)
    t = KernelSurface(n_centers=50, seed=7).fit(P, N)
    torch.testing.assert_close(s.centers_, t.centers_)
    torch.testing.assert_close(s.alpha_, t.alpha_)


def test_clone_and_params():
    s = KernelSurface(nu=2.5, length_scale=0.2, n_centers=10)
    c = clone(s)
    assert c.get_params() == s.get_params() and not hasattr(c, "alpha_")
    assert c.set_params(nu=0.5).nu == 0.5
    with pytest.raises(ValueError, match="bogus"):
        c.set_params(bogus=1)


def test_save_load_round_trip(tmp_path, sphere):
    P, N = sphere
    s = KernelSurface(nu="inf", length_scale=0.3, reg=1e-5).fit(P, N)
    path = s.save(tmp_path / "surf.pt")
    t = KernelSurface.load(path)
    Q = P[:50] * 0.9
    torch.testing.assert_close(s.decision_function(Q), t.decision_function(Q))
    with pytest.raises(ValueError, match="path"):
        KernelSurface.load(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="path"):
        KernelSurface.load(tmp_path / "junk.pt")


def test_cholesky_retry_warns_then_raises():
    pts, nrm, _ = make_shape("torus", 60, seed=0)
    with pytest.warns(RuntimeWarning, match="jitter"):
        KernelSurface(nu="inf", length_scale=5.0, reg=0.0).fit(pts, nrm)


def test_readers_and_writer(tmp_path):
    import trimesh
    pts, nrm, _ = make_shape("torus", 50, seed=0)
    P, N = pts.numpy(), nrm.numpy()
    np.savetxt(tmp_path / "c.xyz", np.hstack([P, N]))
    np.savez(tmp_path / "c.npz", points=P, normals=N)
    trimesh.PointCloud(P).export(tmp_path / "nonormals.ply")
    from trimesh.exchange.ply import export_ply  # noqa: F401  (trimesh writes normals below)
    header = ("ply\nformat ascii 1.0\nelement vertex 50\nproperty float x\nproperty float y\n"
              "property float z\nproperty float nx\nproperty float ny\nproperty float nz\n"
              "end_header\n")
    body = "\n".join(" ".join(f"{v:.9g}" for v in row) for row in np.hstack([P, N]))
    (tmp_path / "c.ply").write_text(header + body + "\n")
    for name in ("c.xyz", "c.npz", "c.ply"):
        p, n = read_point_cloud(tmp_path / name)
        assert p.dtype == torch.float64 and p.shape == (50, 3)
        np.testing.assert_allclose(p.numpy(), P, atol=1e-6)
        np.testing.assert_allclose(n.numpy(), N, atol=1e-6)
    with pytest.raises(ValueError, match="normals"):
        read_point_cloud(tmp_path / "nonormals.ply")
    np.savetxt(tmp_path / "bad.xyz", P)
    with pytest.raises(ValueError, match="6 columns"):
        read_point_cloud(tmp_path / "bad.xyz")
    (tmp_path / "garbage.txt").write_text("a b c\n")
    with pytest.raises(ValueError, match="path"):
        read_point_cloud(tmp_path / "garbage.txt")
    with pytest.raises(ValueError, match="path"):
        read_point_cloud(tmp_path / "missing.ply")
    with pytest.raises(ValueError, match="path"):
        read_point_cloud(tmp_path / "c.csv")
    verts = torch.tensor([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    faces = torch.tensor([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    for suffix in (".ply", ".obj", ".stl"):
        m = trimesh.load(write_mesh(tmp_path / f"m{suffix}", verts, faces), force="mesh")
        assert len(m.faces) == 4
    with pytest.raises(ValueError, match="faces"):
        write_mesh(tmp_path / "m.ply", verts, faces + 10)
    with pytest.raises(ValueError, match="path"):
        write_mesh(tmp_path / "m.off", verts, faces)


def test_shapes_oriented_and_area_uniform():
    for name in ("bumpy_sphere", "torus", "spheres"):
        p, n, inside = make_shape(name, 3000, seed=0)
        torch.testing.assert_close(n.norm(dim=1), torch.ones(3000, dtype=torch.float64))
        assert float(inside(p + 0.002 * n).float().mean()) < 0.01
        assert float(inside(p - 0.002 * n).float().mean()) > 0.99
    # torus: area-uniform means the outer half (cos v > 0) holds ~ (1 + 2r/(pi R))/2 of points
    p, n, _ = make_shape("torus", 20000, seed=1)
    frac = float((n[:, :2] * p[:, :2]).sum(1).gt(0).double().mean())
    assert abs(frac - (0.5 + 0.05 / (math.pi * 0.3))) < 0.015
    a, b = make_shape("torus", 10, seed=5)[0], make_shape("torus", 10, seed=5)[0]
    torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="name"):
        make_shape("cube", 10, seed=0)
    with pytest.raises(ValueError, match="n_points"):
        make_shape("torus", 0, seed=0)


def test_metrics():
    assert iou(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 1, 0])) == pytest.approx(1 / 3)
    assert iou([False, False], [False, False]) == 1.0
    with pytest.raises(ValueError, match="occ_pred"):
        iou([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="occ_pred"):
        iou([2, 0], [1, 0])
    X = np.array([[0.0, 0, 0], [1, 0, 0]])
    assert chamfer_l1(X, X + [0, 0.1, 0]) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="columns"):
        chamfer_l1(X, X[:, :2])


def _pts():
    return make_shape("bumpy_sphere", 30, seed=0)[:2]


@pytest.mark.parametrize("mutate, kw, exc, arg", [
    (lambda P, N: (P[:, :2], N), {}, ValueError, "points"),
    (lambda P, N: (P, N[:-1]), {}, ValueError, "same length"),
    (lambda P, N: (P.clone().index_put_((torch.tensor([0]),), torch.tensor(float("nan"),
                                                                            dtype=P.dtype)),
                   N), {}, ValueError, "points"),
    (lambda P, N: (P, N * torch.tensor([[0.0]] * 5 + [[1.0]] * 25, dtype=N.dtype)), {},
     ValueError, "normals"),
    (lambda P, N: (P[:9], N[:9]), {}, ValueError, "at least 10"),
    (lambda P, N: (torch.cat([P, P[3:4]]), torch.cat([N, N[3:4]])), {}, ValueError,
     r"duplicates \(indices \[3, 30\]"),
    (lambda P, N: (P * torch.tensor([1.0, 1.0, 0.0], dtype=P.dtype), N), {}, ValueError,
     "flat"),
    (lambda P, N: (P.long(), N), {}, TypeError, "points"),
    (lambda P, N: (P, N.bool()), {}, TypeError, "normals"),
    (lambda P, N: (P, N), {"kernel": "rbf"}, ValueError, "kernel"),
    (lambda P, N: (P, N), {"nu": 3.5}, ValueError, "nu"),
    (lambda P, N: (P, N), {"length_scale": 0.0}, ValueError, "length_scale"),
    (lambda P, N: (P, N), {"offset": -1.0}, ValueError, "offset"),
    (lambda P, N: (P, N), {"variance": 0.0}, ValueError, "variance"),
    (lambda P, N: (P, N), {"reg": -1e-3}, ValueError, "reg"),
    (lambda P, N: (P, N), {"n_centers": 0}, ValueError, "n_centers"),
    (lambda P, N: (P, N), {"n_centers": 91}, ValueError, "n_centers"),
    (lambda P, N: (P, N), {"n_centers": 2.5}, TypeError, "n_centers"),
])
def test_fit_errors(mutate, kw, exc, arg):
    P, N = mutate(*_pts())
    with pytest.raises(exc, match=arg):
        KernelSurface(**kw).fit(P, N)


def test_use_before_fit_and_bad_queries():
    s = KernelSurface()
    for call in (lambda: s.predict(torch.zeros(2, 3)), lambda: s.extract_mesh(),
                 lambda: s.decision_function(torch.zeros(2, 3))):
        with pytest.raises(NotFittedError):
            call()
    s.fit(*_pts())
    with pytest.raises(ValueError, match="resolution"):
        s.extract_mesh(resolution=4)
    with pytest.raises(ValueError, match="Q"):
        s.decision_function(torch.zeros(2, 2, dtype=torch.float64))
    with pytest.raises(TypeError, match="Q"):
        s.decision_function(torch.zeros(2, 3, dtype=torch.int64))


def test_cli_reconstruct(tmp_path):
    from typer.testing import CliRunner

    from iclr25.matern.cli import app
    pts, nrm, _ = make_shape("bumpy_sphere", 200, seed=0)
    np.savetxt(tmp_path / "c.xyz", np.hstack([pts.numpy(), nrm.numpy()]))
    out = tmp_path / "mesh.obj"
    r = CliRunner().invoke(app, ["reconstruct", str(tmp_path / "c.xyz"), "--resolution", "24",
                                 "--nu", "0.5", "--length-scale", "0.2", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert out.is_file()
    for args, word in ((["--nu", "3"], "--nu"), (["--resolution", "4"], "--resolution"),
                       (["--out", str(tmp_path / "m.off")], "--out"),
                       (["--length-scale", "0"], "--length-scale"),
                       (["--precision", "half"], "--precision")):
        r = CliRunner().invoke(app, ["reconstruct", str(tmp_path / "c.xyz"), *args])
        assert r.exit_code == 2 and word in r.output
    r = CliRunner().invoke(app, ["reconstruct", str(tmp_path / "none.xyz")])
    assert r.exit_code == 2 and "no such file" in r.output


def test_warning_free_default_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelSurface().fit(*make_shape("torus", 100, seed=0)[:2])


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5, float("inf")])
def test_fused_evaluation_equals_kernel_matrix_product(nu):
    from iclr25.matern.kernels import matern_apply, matern_from_distance
    g = torch.Generator().manual_seed(3)
    C = torch.rand(3001, 3, generator=g, dtype=torch.float64) - 0.5
    a = torch.randn(3001, generator=g, dtype=torch.float64)
    Q = torch.cat([torch.rand(250, 3, generator=g, dtype=torch.float64) - 0.5, C[:7]])
    r = (Q[:, None] - C[None]).square().sum(-1).sqrt()       # exact, unlike cdist's Gram form
    want = matern_from_distance(r, nu, 0.3) @ a
    for rows in (1, 13, 10**6):      # cache-sized blocks (87 rows here), a cap, one row
        got = matern_apply(Q, C, a, nu, 0.3, rows)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-10)
    got = matern_apply(Q.float(), C.float(), a.float(), nu, 0.3, 64)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), want, rtol=0, atol=2e-3 * float(a.abs().sum()) / 1e3)


def test_kernel_slopes_of_the_single_error_bound():
    from iclr25.matern.kernels import _SLOPES
    s = np.linspace(0.0, 40.0, 400_001)
    ex = np.exp(-s)
    dk = {0.5: -ex, 1.5: -s * ex, 2.5: -s * (1 + s) / 3 * ex,    # k'(s), by hand
          math.inf: -2 * s * np.exp(-s * s)}
    for nu, (l1, l2) in _SLOPES.items():
        assert np.abs(dk[nu]).max() <= l1 <= 1.001 * np.abs(dk[nu]).max()
        assert np.abs(s * dk[nu]).max() <= l2 <= 1.001 * np.abs(s * dk[nu]).max()


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5, float("inf")])
def test_single_precision_within_stated_bound(nu):
    from iclr25.matern.kernels import matern_apply, single_error_bound
    g = torch.Generator().manual_seed(5)
    C = torch.rand(2000, 3, generator=g, dtype=torch.float64) - 0.5
    a = torch.randn(2000, generator=g, dtype=torch.float64) * 1e3
    Q = torch.cat([torch.rand(400, 3, generator=g, dtype=torch.float64) * 1.1 - 0.55, C[:9]])
    for h in (0.1, 0.5):
        want = matern_apply(Q, C, a, nu, h, 10**6)
        got = matern_apply(Q, C, a, nu, h, 10**6, precision="single")
        assert got.dtype == torch.float64
        err, bound = float((got - want).abs().max()), single_error_bound(Q, C, a, nu, h)
        assert 0 < err <= bound < 1e-4 * float(a.abs().sum())
    # the estimator: same bound, on its normalised queries
    pts, nrm, _ = make_shape("bumpy_sphere", 150, seed=0)
    s = KernelSurface(nu=nu, length_scale=0.3).fit(pts, nrm)
    Qs = Q[:200] * 1.2
    err = (s.decision_function(Qs, precision="single") - s.decision_function(Qs)).abs().max()
    assert float(err) <= s.single_error_bound(Qs)


def _split_case():
    g = torch.Generator().manual_seed(6)
    C = torch.rand(500, 3, generator=g, dtype=torch.float64) - 0.5
    a = torch.randn(500, generator=g, dtype=torch.float64)
    Q = torch.cat([torch.rand(3001, 3, generator=g, dtype=torch.float64) - 0.5, C[:5]])
    return Q, C, a


def test_rows_split_across_threads_equal_one_thread():
    from iclr25.matern.kernels import matern_apply
    Q, C, a = _split_case()
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = {p: matern_apply(Q, C, a, 1.5, 0.4, 64, precision=p) for p in ("double", "single")}
        torch.set_num_threads(2)
        for p, want in one.items():
            torch.testing.assert_close(matern_apply(Q, C, a, 1.5, 0.4, 64, precision=p), want,
                                       rtol=0, atol=1e-12)
        assert torch.get_num_threads() == 2  # restored after the split
    finally:
        torch.set_num_threads(before)


def _child_evaluates(conn):
    from iclr25.matern.kernels import matern_apply
    torch.set_num_threads(2)
    Q, C, a = _split_case()
    conn.send(float(matern_apply(Q, C, a, 1.5, 0.4, 64).sum()))


def test_split_works_in_a_forked_child():
    # the kept thread pool must not be inherited: its threads do not exist after fork
    import multiprocessing as mp

    from iclr25.matern.kernels import matern_apply
    Q, C, a = _split_case()
    before, child = torch.get_num_threads(), None
    try:
        torch.set_num_threads(2)
        want = float(matern_apply(Q, C, a, 1.5, 0.4, 64).sum())  # the parent's pool exists
        recv, send = mp.get_context("fork").Pipe(duplex=False)
        child = mp.get_context("fork").Process(target=_child_evaluates, args=(send,))
        child.start()
        assert recv.poll(60), "the forked child hung in matern_apply"
        assert recv.recv() == pytest.approx(want, rel=1e-12)
        child.join(10)
    finally:
        torch.set_num_threads(before)
        if child is not None and child.is_alive():
            child.kill()


def test_precision_choice_and_errors(sphere):
    P, N = sphere
    fine = KernelSurface(nu=0.5, length_scale=0.5).fit(P, N)
    smooth = KernelSurface(nu=2.5, length_scale=0.5).fit(P, N)
    ax = torch.linspace(-0.55, 0.55, 128, dtype=torch.float64)
    assert fine._single_suits(ax) and not smooth._single_suits(ax)
    v32, _ = fine.extract_mesh(resolution=24, precision="single")
    v64, _ = fine.extract_mesh(resolution=24, precision="double")
    assert v32.shape == v64.shape and float((v32 - v64).abs().max()) < 1e-4
    for call in (lambda: fine.decision_function(P, precision="half"),
                 lambda: fine.decision_function(P, precision="auto"),
                 lambda: fine.extract_mesh(12, precision="float"),
                 lambda: KernelSurface(kernel="arccos").fit(P, N).decision_function(
                     P, precision="single")):
        with pytest.raises(ValueError, match="precision"):
            call()


def test_the_cholesky_runs_on_torchs_thread_count(sphere, monkeypatch):
    """scipy's BLAS defaults to every core whatever --threads says (and spins on a busy
    machine); the exact solve gives it torch's count."""
    import scipy.linalg
    from threadpoolctl import threadpool_info

    seen = []
    factor = scipy.linalg.cho_factor

    def spy(*args, **kwargs):
        seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
        return factor(*args, **kwargs)

    monkeypatch.setattr(scipy.linalg, "cho_factor", spy)
    KernelSurface(nu=1.5, length_scale=0.5).fit(*sphere)
    assert seen and set(seen) == {torch.get_num_threads()}
