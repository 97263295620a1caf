"""Same answers on CPU and CUDA: every method's deterministic core functions, compared.

For each of the 19 methods, the core functions (distances, losses, kernels, graph
construction, one iteration, an estimator's predict on fixed fitted parameters, one seeded
training step) run on the CPU and on a second device with the same inputs; the results must
agree within the tolerance stated beside each call, and tensors must come back on the device
of the inputs. Every input is float64 (networks are cast with ``.double()``): ``F64``
(rtol 1e-9) for closed forms, where only the order of floating-point sums differs between
devices; ``ITER`` (rtol 1e-7) for iterations, decompositions and training steps, where that
rounding is carried through several operations; exact for indices, graphs and labels.
Seeded functions are compared too: their draws come from CPU generators, so a seed must give
the same numbers on every device. Chaotic end-to-end training is not compared.

The second device comes from ``ICLR25_PARITY_DEVICE`` (default ``"cuda"``); every test is
marked ``cuda`` and skipped when that device is absent. **The real check needs a GPU**:
``python -m pytest -m cuda tests/core/test_cuda_parity.py``. Without one,
``ICLR25_PARITY_DEVICE=cpu python -m pytest -m cuda tests/core/test_cuda_parity.py`` compares
CPU with CPU, which only shows that the test code runs.
"""

from __future__ import annotations

import copy
import dataclasses
import os

import numpy as np
import pytest
import torch
from torch import nn

pytestmark = pytest.mark.cuda

F64 = dict(rtol=1e-9, atol=1e-10)      # closed-form float64 arithmetic
ITER = dict(rtol=1e-7, atol=1e-9)      # float64 iterations / decompositions (rounding grows)


@pytest.fixture(scope="module")
def dev():
    """The second device: ``ICLR25_PARITY_DEVICE`` (default cuda), skipped when absent."""
    d = torch.device(os.environ.get("ICLR25_PARITY_DEVICE", "cuda"))
    if d.type == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device (set ICLR25_PARITY_DEVICE=cpu to run the test code)")
    try:
        torch.zeros(1, device=d)
    except (RuntimeError, AssertionError) as exc:
        pytest.skip(f"device {d} unavailable: {exc}")
    # TF32 would round float32 matmuls/convs to 10 bits on Ampere+: keep any float32 exact
    old = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield d
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    """Tiny inputs: one thread is fastest and keeps the file far under a minute."""


# --- helpers ---------------------------------------------------------------------------------

def to(x, device):
    """``x`` with every tensor on ``device`` and every module a fresh copy there."""
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, nn.Module):
        return copy.deepcopy(x).to(device)
    if isinstance(x, dict):
        return {k: to(v, device) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(to(v, device) for v in x)
    return x


def on(x, device, where="out"):
    """Every tensor in ``x`` lives on ``device``."""
    if isinstance(x, torch.Tensor):
        assert x.device.type == device.type, f"{where} is on {x.device}, not {device}"
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            on(getattr(x, f.name), device, f"{where}.{f.name}")
    elif isinstance(x, dict):
        for k, v in x.items():
            on(v, device, f"{where}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            on(v, device, f"{where}[{i}]")


def close(a, b, rtol, atol, where="out"):
    """``b`` (second device) equals ``a`` (CPU) within (rtol, atol); discrete values exactly."""
    if isinstance(a, torch.Tensor):
        b = b.detach().cpu()
        if a.is_floating_point() or a.is_complex():
            torch.testing.assert_close(b, a.detach(), rtol=rtol, atol=atol, equal_nan=True,
                                       msg=lambda m: f"{where}: {m}")
        else:
            assert torch.equal(b, a), f"{where}: integer/bool tensors differ"
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=where)
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        for f in dataclasses.fields(a):
            close(getattr(a, f.name), getattr(b, f.name), rtol, atol, f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            close(a[k], b[k], rtol, atol, f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            close(u, v, rtol, atol, f"{where}[{i}]")
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=rtol, abs=atol), where
    else:
        assert a == b, where


def parity(dev, fn, *args, rtol, atol, device_kw=None, **kwargs):
    """Run ``fn`` on CPU inputs and on the same inputs moved to ``dev``; compare; return both.

    Modules are deep-copied for each run, so a training step never sees the other's update.
    ``device_kw`` names a ``device=`` argument for functions that take no tensor.
    """
    cpu = torch.device("cpu")
    a_args, a_kw = to(args, cpu), to(kwargs, cpu)
    b_args, b_kw = to(args, dev), to(kwargs, dev)
    if device_kw:
        a_kw[device_kw], b_kw[device_kw] = cpu, dev
    ref = fn(*a_args, **a_kw)
    out = fn(*b_args, **b_kw)
    on(out, dev)
    close(ref, out, rtol, atol)
    return ref, out


def sgd_step(model, loss_fn, *inputs, lr=0.05):
    """One SGD step on ``loss_fn(model, *inputs)``: (loss, every parameter after the step)."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss = loss_fn(model, *inputs)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach(), [p.detach().clone() for p in model.parameters()]


def mlp(*sizes, seed=0):
    """A float64 tanh MLP with weights from ``seed`` (the global RNG is left alone)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        pairs = zip(sizes[:-1], sizes[1:], strict=False)
        layers = [m for a, b in pairs for m in (nn.Linear(a, b), nn.Tanh())]
        return nn.Sequential(*layers[:-1]).double()


def randn(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def rand(*shape, seed=0, dtype=torch.float64):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# --- the 19 methods ----------------------------------------------------------------------------

def test_comm(dev):
    from iclr25.comm import (
        CoMM,
        FeatureTokenizer,
        clip_loss,
        comm_loss,
        infonce,
        mlp_encoder,
        modality_masks,
        objective_loss,
    )

    z = [randn(8, 4, seed=i) for i in range(6)]
    parity(dev, infonce, z[0], z[1], 0.1, **F64)
    parity(dev, clip_loss, z[0], z[1], 0.1, **F64)
    parity(dev, comm_loss, z[:3], z[3:], 0.1, **F64)
    parity(dev, lambda device: modality_masks(3, device), rtol=0, atol=0, device_kw="device")
    # one training step of a two-modality CoMM (float64) on each objective's loss
    enc = [mlp_encoder(w, 4, 16, seed=i) for i, w in enumerate((5, 3))]
    tok = [FeatureTokenizer(4, 16, seed=10 + i) for i in range(2)]
    model = CoMM(enc, tok, 16, seed=0).double()
    v1 = [randn(12, 5, seed=1), randn(12, 3, seed=2)]
    v2 = [randn(12, 5, seed=3), randn(12, 3, seed=4)]
    for objective in ("comm", "simclr", "cross"):
        parity(dev, sgd_step, model, lambda m, a, b, o=objective: objective_loss(m, a, b, o),
               v1, v2, **ITER)


def test_cox(dev):
    from iclr25.cox import (
        MATCHERS,
        VIB,
        emergent_correspondences,
        entropy_discrepancy,
        prior_kl,
        select_agreement,
        vib_loss,
    )

    a, b = randn(20, 5, seed=0), randn(20, 5, seed=1)
    parity(dev, entropy_discrepancy, a, b, **F64)
    parity(dev, prior_kl, a, torch.softmax(randn(5, seed=2), 0), **F64)
    parity(dev, select_agreement, [3 * a, 3 * a + 0.1 * b], 6, 0.5, **F64)  # indices exact
    parity(dev, vib_loss, randn(10, 6), randn(10, 6, seed=1), randn(10, 3, seed=2),
           randn(10, 3, seed=3), 0.01, **F64)
    Z_im, Z_oom = randn(12, 8, seed=4), randn(10, 8, seed=5)  # small: GW is O(n^3) per step
    for method in MATCHERS:  # matching pairs must be identical
        parity(dev, emergent_correspondences, Z_im, Z_oom, method, **F64)
    vib = VIB(8, 4, 16, seed=0).double()
    parity(dev, lambda m, h: m.eval()(h), vib, Z_im, **F64)
    # a training step, the reparameterisation noise drawn from a CPU generator

    def loss(m, h):
        pred, mu, logvar = m(h, generator=torch.Generator().manual_seed(0))
        return vib_loss(pred, h, mu, logvar, beta=0.01)
    parity(dev, sgd_step, vib.train(), loss, Z_im, **ITER)


def test_crh(dev):
    from iclr25.crh import AlignmentProbe, alignment_score, power_law_exponent, rotation_null

    X = randn(40, 6)
    A, Z = X.T @ X / 40, randn(6, 6, seed=1)
    Z = Z @ Z.T + torch.eye(6, dtype=torch.float64)
    parity(dev, alignment_score, A, Z, **F64)
    parity(dev, power_law_exponent, A, Z, **ITER)
    parity(dev, rotation_null, A, Z, seed=0, n_draws=5, **ITER)  # CPU-drawn rotations
    model = mlp(6, 8, 3)
    y = randn(40, 3, seed=2)
    parity(dev, lambda m, x, t: AlignmentProbe(m, loss_fn=lambda o, u: ((o - u) ** 2).sum())
           .run([(x[:20], t[:20]), (x[20:], t[20:])]), model, X, y, **ITER)


def test_dbtsw(dev):
    from iclr25.dbtsw import DbTSWLoss, db_tsw, sample_trees, tree_wasserstein

    coords, masses = randn(7, 4, 10), randn(7, 4, 10, seed=1)
    parity(dev, tree_wasserstein, coords, masses, 1.0, **F64)
    parity(dev, tree_wasserstein, coords, masses, 2.0, **F64)
    X, Y = randn(30, 3), randn(25, 3, seed=1) + 1
    # trees drawn once on the CPU and handed over: the distance itself
    trees = sample_trees(20, 4, 3, mean=X.mean(0), seed=0, dtype=torch.float64)
    parity(dev, lambda x, y, t: db_tsw(x, y, trees=t), X, Y, trees, **F64)
    a, b = rand(30) + 0.1, rand(25, seed=1) + 0.1
    parity(dev, lambda x, y, u, v, t: db_tsw(x, y, u, v, trees=t, p=2), X, Y, a / a.sum(),
           b / b.sum(), trees, **F64)
    # seeded: trees are drawn on the CPU for an int seed or from a CPU Generator, then moved
    for directions in ("gaussian", "orthogonal"):
        parity(dev, lambda m, d=directions: sample_trees(20, 2, 3, mean=m, seed=0, directions=d),
               X.mean(0), **F64)
        parity(dev, lambda x, y, d=directions: db_tsw(x, y, seed=0, n_trees=20, n_lines=2,
                                                      directions=d),
               X, Y, **F64)
    parity(dev, lambda x, y: db_tsw(x, y, seed=torch.Generator().manual_seed(0), n_trees=20),
           X, Y, **F64)

    def two_calls(x, y):  # the second call continues the loss's stream
        loss = DbTSWLoss(n_trees=20, seed=0)
        return loss(x, y), loss(x, y)
    parity(dev, two_calls, X, Y, **F64)


def test_kmeans(dev):
    from iclr25.kmeans import ConsistentKMeans, clustering_cost, dz_seeding

    X = torch.cat([randn(40, 2) + c for c in (0.0, 8.0, -8.0)]) * torch.tensor([1.0, 2.0])
    C = X[[0, 50, 100]]
    parity(dev, clustering_cost, X, C, **F64)
    parity(dev, lambda x, c: clustering_cost(x, c, z=1), X, C, **F64)
    w = rand(120) + 0.1
    # D^z seeding draws from a CPU generator: the same rows on every device
    parity(dev, lambda x, v: dz_seeding(x, v, 3, torch.Generator().manual_seed(0), n_init=2),
           X, w, rtol=0, atol=0)
    for offline in ("auto", "kmeans++"):
        parity(dev, lambda x, o=offline: (lambda km: (km.change_log_, km.cost_, km.labels_,
               km.cluster_centers_))(ConsistentKMeans(3, offline=o, seed=0).fit(x)), X, **F64)


def test_locodl(dev):
    from iclr25.locodl import ClientLogistic, ClientRidge, gd, locodl, scaffnew

    X, y = randn(60, 5), (randn(60, seed=1) > 0).long()
    clients = torch.arange(60) % 4
    for make in (ClientLogistic, ClientRidge):
        yy = y if make is ClientLogistic else y.double()

        def run(x, t, c, make=make):
            obj = make(x, t, c, 0.1)
            # gd is deterministic; LoCoDL/Scaffnew draw compressors and coins from CPU streams
            return [(r.x, r.history, r.rounds) for r in (
                gd(obj, max_iter=5), locodl(obj, "rand-2", max_iter=20, seed=0),
                scaffnew(obj, max_iter=20, seed=0))]
        parity(dev, run, X, yy, clients, **ITER)


def test_los(dev):
    from iclr25.los import (
        RetrainedClassifier,
        balanced_accuracy,
        class_balanced_weights,
        label_over_smoothing_loss,
        logits_magnitude,
        per_class_accuracy,
        regularized_std,
        retrain_classifier,
        smoothed_targets,
    )

    logits, y = randn(40, 4), torch.arange(40) % 4
    parity(dev, label_over_smoothing_loss, logits, y, 0.98, **F64)
    parity(dev, lambda z, t: label_over_smoothing_loss(z, t, 0.5, reduction="none"), logits, y,
           **F64)
    parity(dev, lambda t: smoothed_targets(t, 4, 0.98, torch.float64), y, **F64)
    parity(dev, logits_magnitude, logits, y, **F64)
    parity(dev, regularized_std, logits, y, **F64)
    parity(dev, class_balanced_weights, torch.tensor([50, 20, 5, 1]), **F64)
    parity(dev, per_class_accuracy, logits.argmax(1), y, 4, **F64)
    parity(dev, balanced_accuracy, logits.argmax(1), y, 4, **F64)
    # one seeded epoch of re-training (CPU-drawn batch order; lws: class-balanced sampling)
    X = randn(40, 6, seed=1)
    init = (0.1 * randn(4, 6, seed=2), torch.zeros(4, dtype=torch.float64))
    for method in ("los", "ce", "lws"):
        parity(dev, lambda f, t, w, m=method: retrain_classifier(f, t, m, init=w, epochs=1,
               batch_size=16, seed=0).state_dict(), X, y, init, **ITER)
    # predict on fixed fitted parameters
    est = RetrainedClassifier(init=init, epochs=1, seed=0).fit(X, y)

    def predict(head, x):
        e = copy.copy(est)
        e.head_ = head
        return e.decision_function(x), e.predict_proba(x), e.predict(x)
    parity(dev, predict, est.head_, X, **F64)


def test_lowlight(dev):
    from iclr25.lowlight import (
        RetinexEnhancer,
        ZeroDCE,
        color_constancy_loss,
        dct_2d,
        exposure_loss,
        frequency_bands,
        idct_2d,
        illumination_tv_loss,
        neighbor_subimages,
        noise_to_signal,
        psnr,
        spatial_consistency_loss,
        ssim,
        zero_reference_loss,
    )

    x, y = rand(2, 3, 16, 16), rand(2, 3, 16, 16, seed=1)
    parity(dev, dct_2d, x, **F64)
    parity(dev, idct_2d, x, **F64)
    parity(dev, frequency_bands, x, seed=0, **F64)  # CPU-drawn permutation
    parity(dev, neighbor_subimages, x, seed=0, **F64)
    parity(dev, color_constancy_loss, x, **F64)
    parity(dev, lambda t: exposure_loss(t, patch=4), x, **F64)
    parity(dev, illumination_tv_loss, x, **F64)
    parity(dev, spatial_consistency_loss, x, y, **F64)
    parity(dev, noise_to_signal, x, **F64)
    parity(dev, psnr, x, y, **F64)
    parity(dev, ssim, x, y, **F64)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        retinex, dce = RetinexEnhancer(8, 8, 8, 1).double(), ZeroDCE(8, 2).double()
    parity(dev, lambda m, t: m.eval()(t), retinex, x, **F64)
    parity(dev, lambda m, t: m.eval()(t), dce, x, **F64)
    # one seeded training step on the zero-reference loss (pairs drawn on the CPU)
    parity(dev, sgd_step, retinex, lambda m, t: zero_reference_loss(m, t, seed=0, patch=4)[0],
           x, **ITER)


def test_lsdt(dev):
    from iclr25.lsdt import LongShortDecisionTransformer, SequenceSampler, delayed_cue_dataset

    ds = delayed_cue_dataset(6, seed=0)
    batch = [t.double() if t.is_floating_point() else t
             for t in SequenceSampler(ds, 4, 3, seed=0).sample()]
    for conv in ("dynamic", "static"):
        with torch.random.fork_rng():
            torch.manual_seed(0)
            model = LongShortDecisionTransformer(ds.obs_dim, ds.act_dim, hidden=16, n_blocks=1,
                                                 context=4, conv=conv, kernel_size=3,
                                                 dropout=0.0, max_timestep=64).double()
        parity(dev, lambda m, r, s, a, t, _: m.eval()(r, s, a, t), model, *batch, **F64)

        def loss(m, r, s, a, t, mask):  # train()'s masked action MSE
            err = ((m(r, s, a, t) - a) ** 2).mean(-1)
            return (err * mask).sum() / mask.sum()
        parity(dev, sgd_step, model.train(), loss, *batch, **ITER)


def test_matern(dev):
    from iclr25.matern import (
        KernelSurface,
        arccos_kernel,
        chamfer_l1,
        farthest_point_sampling,
        make_shape,
        matern_kernel,
    )

    X, Y = randn(30, 3), randn(20, 3, seed=1)
    for nu in (0.5, 1.5, 2.5, "inf"):
        parity(dev, lambda a, b, v=nu: matern_kernel(a, b, nu=v), X, Y, **F64)
    parity(dev, arccos_kernel, X, Y, **F64)
    parity(dev, chamfer_l1, X, Y, **F64)
    parity(dev, farthest_point_sampling, X, 8, seed=0, rtol=0, atol=0)
    P, N, _ = make_shape("torus", 150, seed=0)
    Q = rand(40, 3, seed=2) - 0.5
    for kernel, centers in (("matern", None), ("arccos", None), ("matern", 60)):
        parity(dev, lambda p, n, q, k=kernel, m=centers: KernelSurface(
            k, n_centers=m, seed=0).fit(p, n).decision_function(q), P, N, Q, rtol=1e-6,
            atol=1e-8)  # a Cholesky solve of a kernel matrix: rounding grows with its condition


def test_mother(dev):
    from iclr25.mother import (
        build_forest,
        direction_penalty,
        edge_costs,
        kurtosis_scores,
        pairwise_distances,
    )

    root = {"a.weight": randn(6, 6), "b.weight": randn(6, 6, seed=1)}
    models = [root]
    for i in range(1, 5):  # a chain of fine-tunes: each adds a small update to its parent
        models.append({k: v + 0.05 * randn(*v.shape, seed=10 * i + j)
                       for j, (k, v) in enumerate(models[(i - 1) // 2].items())})
    parity(dev, lambda device: pairwise_distances(models, device=device), device_kw="device",
           **F64)
    parity(dev, lambda device: pairwise_distances(models, metric="l1", device=device),
           device_kw="device", **F64)
    parity(dev, lambda device: kurtosis_scores(models, device=device), device_kw="device", **F64)
    D, ku = pairwise_distances(models), kurtosis_scores(models)
    parity(dev, direction_penalty, ku, **F64)
    parity(dev, edge_costs, D, ku, 0.3, **F64)
    parity(dev, build_forest, D, ku, **F64)


def test_oft(dev):
    from iclr25.oft import flow_cost, flow_violations, make_layered, min_cost_flow, oft_sinkhorn

    s, C = make_layered(3, 4, 3, seed=0)
    ref, _ = parity(dev, oft_sinkhorn, s, C, 0.05, numItermax=200, **ITER)
    parity(dev, lambda a, c: oft_sinkhorn(a, c, 0.05, method="sinkhorn_log", numItermax=200),
           s, C, **ITER)
    parity(dev, flow_cost, ref, C, **F64)
    parity(dev, flow_violations, ref, s, **F64)
    parity(dev, min_cost_flow, s, C, **F64)
    cap = torch.where(torch.isfinite(C), torch.full_like(C, 0.6), torch.zeros_like(C))
    parity(dev, lambda a, c, k: oft_sinkhorn(a, c, 0.05, capacity=k, numItermax=200), s, C, cap,
           **ITER)
    for method in ("sinkhorn", "sinkhorn_log"):  # the arc-list layout (scatter / index_add_)
        parity(dev, lambda a, c, k, m=method: oft_sinkhorn(a, c, 0.05, capacity=k, method=m,
                                                           layout="sparse", numItermax=200),
               s, C, cap, **ITER)
    parity(dev, lambda a, c: oft_sinkhorn(a, c, 0.05, layout="sparse"), s, C, **ITER)  # Newton


def test_schull(dev):
    from iclr25.schull import (
        SchNetCHA,
        is_connected,
        is_rigid,
        knn_graph,
        radius_graph,
        rigidity_rank,
        schull_features,
        schull_graph,
        unit_directions,
    )

    pos = randn(24, 3)
    batch = (torch.arange(24) >= 12).long()
    parity(dev, knn_graph, pos, 4, batch, rtol=0, atol=0)
    parity(dev, radius_graph, pos, 1.5, batch, rtol=0, atol=0)
    parity(dev, unit_directions, pos, batch, **F64)
    ref, _ = parity(dev, schull_graph, pos, batch, **F64)
    ei = ref.edge_index
    parity(dev, schull_features, pos, ei, batch, **F64)
    parity(dev, lambda p, e: (is_connected(e, 24), is_rigid(p[:12], e[:, (e < 12).all(0)]),
                              rigidity_rank(p, e)), pos, ei, rtol=0, atol=0)
    z = torch.randint(1, 10, (24,), generator=torch.Generator().manual_seed(0))
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = SchNetCHA(hidden=16, layers=1, gaussians=8).double()
    parity(dev, lambda m, *a: m.eval()(*a), model, z, pos, batch, ei, **F64)
    parity(dev, sgd_step, model.train(), lambda m, *a: m(*a).square().sum(), z, pos, batch, ei,
           **ITER)


def test_toss(dev):
    from iclr25.toss import (
        CovarianceHead,
        beta_nll_loss,
        cov_error,
        gaussian_nll,
        gaussian_nll_loss,
        gaussian_w2,
        pseudo_covariance,
        sqrtm_psd,
        tac,
        w2_bound,
    )

    A = randn(10, 3, 3)
    cov = A @ A.mT + 0.1 * torch.eye(3, dtype=torch.float64)
    L, mean, y = torch.linalg.cholesky(cov), randn(10, 3, seed=1), randn(10, 3, seed=2)
    parity(dev, sqrtm_psd, cov, **ITER)
    parity(dev, gaussian_w2, mean, cov, y, cov.flip(0), **ITER)
    parity(dev, w2_bound, mean, sqrtm_psd(cov), y, sqrtm_psd(cov.flip(0)), **F64)
    parity(dev, gaussian_nll_loss, mean, L, y, **F64)
    parity(dev, beta_nll_loss, mean, L, y, 0.5, **F64)
    parity(dev, gaussian_nll, mean, cov, y, **F64)
    parity(dev, tac, mean, cov, y, **F64)
    parity(dev, cov_error, cov, cov.flip(0), **F64)
    X, Y = randn(60, 2, seed=3), randn(60, 3, seed=4)
    parity(dev, lambda a, b: pseudo_covariance(a, b, n_neighbors=8), X, Y, **F64)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        head = CovarianceHead(5, 3).double()
    h = randn(10, 5, seed=5)
    parity(dev, lambda m, x: m(x), head, h, **F64)

    def w2_step_loss(m, x, t, s):  # ToSS's W2-bound loss against pseudo covariances
        mu, S = m(x)
        return w2_bound(mu, S, t, s).mean()
    parity(dev, sgd_step, head, w2_step_loss, h, y, sqrtm_psd(cov), **ITER)


def test_urlost(dev):
    from iclr25.urlost import (
        URLOSTMAE,
        density_adjusted_laplacian,
        dependence,
        equal_width_bins,
        foveate,
        group_tokens,
        groups_from_labels,
        knn_affinity,
        retina_sampler,
        spectral_clusters,
    )

    # 12 columns in 3 blocks of strongly dependent features
    base = randn(200, 3)
    X = base.repeat_interleave(4, 1) + 0.3 * randn(200, 12, seed=1)
    parity(dev, dependence, X, **F64)
    parity(dev, lambda x: dependence(x, "mi", bins=4), X, **F64)
    parity(dev, lambda x: equal_width_bins(x, 4), X, rtol=0, atol=0)
    W = dependence(X).abs()
    parity(dev, lambda s: knn_affinity(s, 3), W, **F64)
    parity(dev, density_adjusted_laplacian, W, **F64)
    parity(dev, lambda w: spectral_clusters(w, 3, seed=0), W, rtol=0, atol=0)
    coords, radii = retina_sampler(16, 4, 6, 3)
    parity(dev, foveate, rand(2, 16, 16), coords, radii, **F64)
    groups, _ = groups_from_labels(torch.arange(12) // 4)
    parity(dev, group_tokens, X, groups, **F64)
    mae = URLOSTMAE(groups, dim=16, depth=1, heads=2, seed=0).double()
    parity(dev, lambda m, x: m.eval().encode(x), mae, X[:8], **F64)
    parity(dev, sgd_step, mae.train(),
           lambda m, x: m(x, generator=torch.Generator().manual_seed(0)),
           X[:8], **ITER)


def test_v3(dev):
    from iclr25.v3 import (
        ContentStyleAE,
        EMAVectorQuantizer,
        kmeans,
        kmeans_codes,
        mlp_fragment_nets,
        mpd,
        v3_loss,
    )

    zc, zs = randn(4, 6, 3), randn(4, 6, 3, seed=1)
    zq = zc.round()
    parity(dev, mpd, zc, **F64)
    for variant in ("pure", "adapted"):
        parity(dev, lambda a, b, c, v=variant: v3_loss(a, b, c, variant=v), zc, zq, zs, **F64)
    x = torch.cat([randn(20, 2) + c for c in (0.0, 6.0, -6.0)])
    parity(dev, lambda t: kmeans(t, 3, generator=torch.Generator().manual_seed(0)), x, **F64)
    vq = EMAVectorQuantizer(3, 2, seed=0, dead_code_threshold=0).double()
    parity(dev, lambda m, t: (m.train()(t), m.codebook), vq, x, **F64)  # k-means init + EMA
    enc, dec = mlp_fragment_nets((5,), 3, 3, 16, groups=2, seed=0)
    ae = ContentStyleAE(enc, dec, 3, 3, 4, seed=0).double()
    seqs = randn(4, 6, 5, seed=2)
    parity(dev, lambda m, t: m.eval()(t), ae, seqs, **F64)
    parity(dev, kmeans_codes, seqs, 3, seed=0, rtol=0, atol=0)  # sklearn on the CPU, then back

    def loss(m, t):  # reconstruction + commitment + the V3 hinges, as V3.fit
        out = m(t)
        return ((out["x_hat"] - t) ** 2).mean() + out["commit"] + v3_loss(
            out["z_c"], out["z_c_q"], out["z_s"]).total
    parity(dev, sgd_step, ae.train(), loss, seqs, **ITER)


def test_dcpt(dev):
    from iclr25.dcpt import DegradationClassifier, UNet, dcpt_loss, focal_loss

    logits, y = randn(12, 5), torch.arange(12) % 5
    for gamma in (0.0, 2.0):
        parity(dev, focal_loss, logits, y, gamma, **F64)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        net = UNet(width=4, depth=2).double()
        clf = DegradationClassifier([4], 3, num_res_blocks=1).double()
    lq, gt = rand(3, 3, 16, 16), rand(3, 3, 16, 16, seed=1)
    parity(dev, lambda m, x: m.eval()(x), net, lq, **F64)

    def pretrain_step(m, c, a, b, t):  # one step on both the restorer and the classifier
        opt = torch.optim.SGD([*m.parameters(), *c.parameters()], lr=0.05)
        loss, parts = dcpt_loss(m, c, a, b, t, layers=["decoders.0"], focal_gamma=2.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), parts, [p.detach().clone() for p in m.parameters()]
    parity(dev, pretrain_step, net.train(), clf.train(), lq, gt, torch.tensor([0, 1, 2]), **ITER)


def test_gsd(dev):
    from iclr25.gsd import (
        BoundedDiscriminator,
        GaussianPosterior,
        LatentPolicy,
        infogail_reward,
        recovery_error,
        relevance_constraint,
        select_behaviours,
    )

    obs, act, z = randn(16, 4), randn(16, 2, seed=1), randn(16, 2, seed=2)
    pol = LatentPolicy(4, 2, 2, hidden=(16,), seed=0).double()
    disc = BoundedDiscriminator(4, 2, hidden=(16,), seed=0).double()
    post = GaussianPosterior(4, 2, 2, hidden=(16,), spectral=True, seed=0).double()
    parity(dev, lambda m, o, c: m(o, c), pol, obs, z, **F64)
    parity(dev, lambda m, o, a: m(o, a), disc, obs, act, **F64)
    parity(dev, lambda m, o, a, c: (m.eval()(o, a), m.log_prob(o, a, c)), post, obs, act, z,
           **F64)
    parity(dev, infogail_reward, randn(16, seed=3), randn(16, seed=4), 0.1, **F64)
    parity(dev, relevance_constraint, post.eval(), disc, obs, act, obs.flip(0), act.flip(0),
           clip=10.0, **F64)
    factors, targets = rand(30), rand(5, seed=1)
    parity(dev, recovery_error, factors, targets, 3, **F64)
    parity(dev, select_behaviours, factors, targets, 3, rtol=0, atol=0)

    def disc_loss(m, o, a):  # one discriminator step, demonstrations against policy samples
        return -(m(o[:8], a[:8]).mean() - m(o[8:], a[8:]).mean())
    parity(dev, sgd_step, disc, disc_loss, obs, act, **ITER)


def test_ies(dev):
    from iclr25.ies import (
        IESSampler,
        InstanceEarlyStopping,
        LossThresholdStopping,
        per_sample_cross_entropy,
        record_losses,
    )

    logits, y = randn(20, 3), torch.arange(20) % 3
    parity(dev, per_sample_cross_entropy, logits, y, **F64)
    model = mlp(4, 8, 3)
    X = randn(20, 4, seed=1)

    def five_epochs(m, x, t, device):  # record, update the mastered set, draw the order
        stop = InstanceEarlyStopping(20, delta=0.002, window=2, device=device)
        out = []
        for i in range(5):
            with torch.no_grad():  # a settling model: second differences shrink
                m[2].weight.mul_(1 - 0.3 / (i + 1) ** 2)
            out.append(record_losses(stop, m, x, t, stop.active_indices))
            out.append(stop.step())
        order = list(IESSampler(stop, seed=0))
        assert 0 < len(order) < 20  # some samples mastered, some not: the test can tell
        return out, stop.scores(), order
    parity(dev, five_epochs, model, X, y, device_kw="device", **F64)

    def threshold(x, device):
        stop = LossThresholdStopping(20, 0.5, device=device)
        stop.update(torch.arange(20), x)
        return stop.step()
    parity(dev, threshold, rand(20), device_kw="device", rtol=0, atol=0)
