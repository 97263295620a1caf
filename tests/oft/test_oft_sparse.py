"""OFT-Sinkhorn on arc lists (layout="sparse", torch sparse C): the dense fixed point, the
exact solvers' optima, DIMACS files and NETGEN-like instances."""

import math

import networkx as nx
import numpy as np
import pytest
import torch

from iclr25.oft import (
    flow_cost,
    flow_violations,
    make_layered,
    make_netgen,
    min_cost_flow,
    oft_sinkhorn,
    read_dimacs,
    write_dimacs,
)
from iclr25.oft.arcs import SPARSE_DENSITY, use_sparse

INF = math.inf


def _sparse(C):
    """A dense cost matrix (inf = no arc) as a torch sparse tensor of its arcs."""
    i, j = torch.nonzero(torch.isfinite(C) & ~torch.eye(C.shape[-1], dtype=torch.bool)).T
    return torch.sparse_coo_tensor(torch.stack([i, j]), C[i, j], C.shape,
                                   check_invariants=True).coalesce()


@pytest.fixture(scope="module")
def layered():
    return make_layered(5, 4, 5, seed=3)


NODE_CAP = torch.tensor([INF] * 5 + [0.2] * 4 + [INF] * 5, dtype=torch.float64)

CASES = {  # each path of the solver: Newton, scaling alone, log domain, both clips, node caps
    "newton": dict(reg=1e-2, stopThr=1e-12),
    "newton-small-reg": dict(reg=1e-3, stopThr=1e-12),
    "scaling": dict(reg=1e-2, stopThr=1e-12, newton=False, numItermax=100000),
    "log-newton": dict(reg=1e-2, stopThr=1e-12, method="sinkhorn_log"),
    "capacity": dict(reg=5e-2, stopThr=1e-10, capacity=0.12),
    "capacity-paper-clip": dict(reg=5e-2, stopThr=1e-10, capacity=0.12, capacity_clip="paper"),
    "capacity-log": dict(reg=5e-2, stopThr=1e-10, capacity=0.12, method="sinkhorn_log"),
    "node-capacity": dict(reg=1e-2, stopThr=1e-10, node_capacity=NODE_CAP),
    "one-stage-underflow": dict(reg=1e-3, epsilon_scaling=False, numItermax=300),
}


@pytest.mark.parametrize("case", list(CASES))
def test_sparse_layout_reaches_the_dense_fixed_point(layered, case, one_thread):
    s, C = layered
    kw = CASES[case]
    with pytest.warns(RuntimeWarning) if "underflow" in case else _nothing():
        Fd, ld = oft_sinkhorn(s, C, layout="dense", log=True, **kw)
    with pytest.warns(RuntimeWarning) if "underflow" in case else _nothing():
        Fs, ls = oft_sinkhorn(s, C, layout="sparse", log=True, **kw)
    assert Fs.shape == Fd.shape and not Fs.is_sparse
    assert float((Fs - Fd).abs().max()) <= 1e-10
    assert ls["converged"] == ld["converged"]
    assert ls["dropped_edges"] == ld["dropped_edges"]
    for key in ("cost", "capacity_violation", "node_capacity_violation"):
        assert ls[key] == pytest.approx(ld[key], rel=1e-9, abs=1e-12)
    # Newton's last step differs (dense: Cholesky, sparse: CG to a forcing tolerance), so
    # the residuals agree only to within stopThr (the unconverged case to 1e-9 relative)
    tol = kw.get("stopThr", 1e-9) * float(s.clamp_min(0).sum())
    if ld["converged"]:
        assert max(ls["balance_violation"], ld["balance_violation"]) <= tol
    else:
        assert ls["balance_violation"] == pytest.approx(ld["balance_violation"], rel=1e-9)
    if "capacity" in kw:  # the caps bind: the capacitated optimum is dearer
        assert (min_cost_flow(s, C, capacity=kw["capacity"], log=True)[1]["cost"]
                > min_cost_flow(s, C, log=True)[1]["cost"] * 1.001)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_sparse_input_gives_a_sparse_flow_on_its_arcs(layered, one_thread):
    s, C = layered
    Cs = _sparse(C)
    tight = {"stopThr": 1e-12}  # both layouts at the fixed point, not anywhere within 1e-9
    Fd = oft_sinkhorn(s, C, 1e-2, layout="dense", **tight)
    Fs, lg = oft_sinkhorn(s, Cs, 1e-2, log=True, **tight)  # auto: sparse C -> arc list
    assert Fs.is_sparse and Fs._nnz() == Cs._nnz()
    assert torch.equal(Fs.indices(), Cs.indices())
    assert float((Fs.to_dense() - Fd).abs().max()) <= 1e-10
    # a sparse C on the dense layout (explicit override) gives the same sparse flow back
    Fo = oft_sinkhorn(s, Cs, 1e-2, layout="dense", **tight)
    assert Fo.is_sparse and float((Fo.to_dense() - Fd).abs().max()) <= 1e-10
    # flow_cost and flow_violations read sparse flows and costs
    assert flow_cost(Fs, Cs) == pytest.approx(flow_cost(Fd, C), rel=1e-12)
    assert flow_cost(Fs, C) == pytest.approx(lg["cost"], rel=1e-12)
    assert flow_cost(Fd, Cs) == pytest.approx(flow_cost(Fd, C), rel=1e-12)
    Fds = torch.sparse_coo_tensor(Fs.indices(), Fd[tuple(Fs.indices())], Fd.shape,
                                  check_invariants=True)  # one flow, two representations
    vs, vd = flow_violations(Fds, s, capacity=0.1), flow_violations(Fd, s, capacity=0.1)
    for key in vd:
        assert torch.allclose(vs[key], vd[key], rtol=1e-9, atol=1e-14)


def test_batched_sparse_equals_per_instance(one_thread):
    inst = [make_layered(4, 3, 4, seed=k) for k in range(3)]
    s = torch.stack([i[0] for i in inst])
    C = torch.stack([i[1] for i in inst])
    C[1, 0, 5] = INF  # instances with different arc sets
    cap = torch.tensor([0.2, 0.15, 0.3], dtype=torch.float64).view(3, 1, 1)
    Cs = torch.stack([_sparse(c) for c in C]).coalesce()
    Fb, lb = oft_sinkhorn(s, Cs, 5e-2, capacity=cap, log=True)
    assert Fb.is_sparse and Fb.shape == (3, 11, 11) and lb["cost"].shape == (3,)
    for k in range(3):
        Fk = oft_sinkhorn(s[k], C[k], 5e-2, capacity=cap[k, 0, 0], layout="dense")
        assert float((Fb.to_dense()[k] - Fk).abs().max()) <= 1e-10
    # one sparse C for a batch of supplies
    Fs = oft_sinkhorn(s[:2], _sparse(C[0]), 5e-2, stopThr=1e-12)
    assert Fs.shape == (2, 11, 11)
    F0 = oft_sinkhorn(s[1], C[0], 5e-2, layout="dense", stopThr=1e-12)
    assert float((Fs.to_dense()[1] - F0).abs().max()) <= 1e-10


def test_netgen_instance_against_highs_networkx_and_dense(one_thread):
    s, C, cap = make_netgen(60, 400, seed=1)
    Fx, lx = min_cost_flow(s, C, capacity=cap, log=True)
    assert Fx.is_sparse and float(flow_violations(Fx, s)["balance_violation"]) <= 1e-8
    Cd = C.to_dense().masked_fill(C.to_dense() == 0, INF)  # make_netgen costs are >= 1
    assert lx["cost"] == pytest.approx(min_cost_flow(s, Cd, capacity=cap.to_dense(),
                                                     log=True)[1]["cost"])
    G = nx.DiGraph()
    G.add_nodes_from((k, {"demand": -int(v)}) for k, v in enumerate(s.tolist()))
    for (i, j), w, c in zip(C.indices().T.tolist(), C.values().tolist(),
                            cap.values().tolist(), strict=True):
        G.add_edge(i, j, weight=int(w), capacity=int(c))
    assert lx["cost"] == pytest.approx(nx.min_cost_flow_cost(G))
    # uncapacitated: Newton on the arc list (conjugate gradients) to the dense fixed point
    F, lg = oft_sinkhorn(s, C, 1e-3, stopThr=1e-12, log=True)
    Fd, ld = oft_sinkhorn(s, Cd, 1e-3, stopThr=1e-12, layout="dense", log=True)
    assert lg["converged"] and float((F.to_dense() - Fd).abs().max()) <= 1e-10 * s.abs().max()
    opt = min_cost_flow(s, C, log=True)[1]["cost"]
    assert -1e-9 <= (lg["cost"] - opt) / opt <= 2e-3  # optimal here, up to the stop


@pytest.mark.parametrize("layout", ["sparse", "dense"])
def test_capacitated_netgen_converges_to_the_exact_optimum(layout, one_thread):
    # issue 73: here Newton one ε stage at a time needed 3038 iterations (the scaling between
    # the stages); through the stages, on active arcs that only grow, a few hundred
    s, C, cap = make_netgen(100, 1000, seed=0)
    G = nx.DiGraph()
    G.add_nodes_from((k, {"demand": -int(v)}) for k, v in enumerate(s.tolist()))
    for (i, j), w, c in zip(C.indices().T.tolist(), C.values().tolist(),
                            cap.values().tolist(), strict=True):
        G.add_edge(i, j, weight=int(w), capacity=int(c))
    opt = nx.min_cost_flow_cost(G)  # exact (network simplex on the integer data)
    assert opt == pytest.approx(min_cost_flow(s, C, capacity=cap, log=True)[1]["cost"])
    F, lg = oft_sinkhorn(s, C, 1e-3, capacity=cap, stopThr=1e-6, layout=layout, log=True)
    mass = float(s.clamp_min(0).sum())
    assert lg["converged"] and lg["n_iter"] <= 1000
    v = flow_violations(F, s, capacity=cap)
    assert float(v["balance_violation"]) <= 1e-6 * mass
    assert float(v["capacity_violation"]) <= 1e-9 * float(cap.values().max())
    assert -1e-6 <= (lg["cost"] - opt) / opt <= 2e-3  # entropic cost above the optimum


def test_dimacs_roundtrip_dense_and_sparse(tmp_path):
    s, C, cap = make_netgen(40, 200, seed=0)
    f = tmp_path / "g.min"
    write_dimacs(f, s, C, cap, comment="netgen-like")
    s2, C2, cap2 = read_dimacs(f, sparse=True)
    assert torch.equal(s2, s) and C2.is_sparse and cap2.is_sparse
    assert torch.equal(C2.indices(), C.indices()) and torch.equal(C2.values(), C.values())
    assert torch.equal(cap2.values(), cap.values())
    s3, C3, cap3 = read_dimacs(f)  # dense: the same arcs
    assert torch.equal(C3, C2.to_dense().masked_fill(C2.to_dense() == 0, INF))
    assert torch.equal(cap3, cap2.to_dense())
    text = f.read_text().splitlines()
    assert text[0] == "c netgen-like" and text[1] == "p min 40 200"
    # parallel arcs merge (capacities add) in the sparse reading too
    g = tmp_path / "p.min"
    g.write_text("p min 3 3\nn 1 2\nn 3 -2\na 1 2 0 1 4\na 1 2 0 1 4\na 2 3 0 2 1\n")
    _, Cp, capp = read_dimacs(g, sparse=True)
    assert Cp._nnz() == 2 and capp.to_dense()[0, 1] == 2 and Cp.to_dense()[0, 1] == 4


def test_make_netgen_is_feasible_seeded_and_simple():
    s, C, cap = make_netgen(100, 700, seed=4)
    s2, C2, _ = make_netgen(100, 700, seed=torch.Generator().manual_seed(4))
    assert torch.equal(s, s2) and torch.equal(C.values(), C2.values())
    i, j = C.indices()
    assert C._nnz() == 700 and bool((i != j).all())  # coalesced: no duplicates
    assert float(s.sum()) == 0 and float(s.clamp_min(0).sum()) == 500  # 5 sources x 100
    assert min_cost_flow(s, C, capacity=cap, log=True)[1]["cost"] > 0  # feasible
    _, _, cap_u = make_netgen(100, 700, capacitated=False, seed=4)
    assert bool((cap_u.values() == 500).all())
    with pytest.raises(ValueError, match="n_arcs"):
        make_netgen(10, 5)
    with pytest.raises(TypeError, match="capacitated"):
        make_netgen(10, 20, capacitated=1)


def test_layout_rule():
    n = 100
    pairs = n * (n - 1)
    assert use_sparse("auto", True, pairs, pairs)  # a sparse C stays sparse
    assert use_sparse("auto", False, int(SPARSE_DENSITY * pairs), pairs)
    assert not use_sparse("auto", False, int(SPARSE_DENSITY * pairs) + 1, pairs)
    assert not use_sparse("dense", True, 1, pairs) and use_sparse("sparse", False, pairs, pairs)


def test_sparse_input_errors(layered):
    s, C = layered
    Cs = _sparse(C)
    dup = torch.sparse_coo_tensor(torch.tensor([[0, 0], [5, 5]]), torch.tensor([1.0, 2.0]),
                                  C.shape, check_invariants=True)
    neg = torch.sparse_coo_tensor(Cs.indices(), -Cs.values(), C.shape, check_invariants=True)
    part = torch.sparse_coo_tensor(Cs.indices()[:, :3], Cs.values()[:3], C.shape,
                                   check_invariants=True)
    hybrid = torch.sparse_coo_tensor(torch.tensor([[0]]), torch.ones(1, 14), C.shape,
                                     check_invariants=True)
    for args, kw, exc, msg in [
        ((s, C), {"layout": "csr"}, ValueError, "layout"),
        ((s, dup), {}, ValueError, "duplicate"),
        ((s, neg), {}, ValueError, "C must be >= 0"),
        ((s, hybrid), {}, ValueError, "sparse in every dimension"),
        ((s, Cs), {"capacity": part}, ValueError, "every arc"),
        ((s, C), {"capacity": _sparse(C)}, ValueError, "only when C is sparse"),
        ((s[:3], Cs), {}, ValueError, "s must be"),
    ]:
        with pytest.raises(exc, match=msg):
            oft_sinkhorn(*args, **kw)
    with pytest.raises(ValueError, match="supply node 1 has no out-edge"):
        oft_sinkhorn(s, part)  # the arcs are the stored entries: naming the node as dense does
    assert np.isfinite(float(oft_sinkhorn(s, Cs, 1e-2).values().sum()))
