"""OFT-Sinkhorn against exact min-cost flow (HiGHS, networkx) and POT's Sinkhorn."""

import math

import networkx as nx
import numpy as np
import pytest
import torch

from iclr25.oft import (
    flow_cost,
    flow_violations,
    from_networkx,
    make_layered,
    min_cost_flow,
    oft_sinkhorn,
)

INF = math.inf


def _gap(F, C, opt):
    return (flow_cost(F, C) - opt) / opt


@pytest.fixture(scope="module")
def layered():
    return make_layered(6, 5, 6, seed=3)


@pytest.fixture(scope="module")
def graph():
    """Layered instance plus an isolated node and a transit node with a single edge pair."""
    s, C = make_layered(5, 4, 5, seed=1)
    n = s.numel()
    C2 = torch.full((n + 2, n + 2), INF, dtype=torch.float64)
    C2[:n, :n] = C
    C2[0, n + 1] = 0.2  # source -> dead-end transit node -> a sink
    C2[n + 1, n - 1] = 0.2
    s2 = torch.cat([s, torch.zeros(2, dtype=torch.float64)])  # node n is isolated
    return s2, C2


def test_networkx_agrees_with_highs(layered):
    s, C = layered
    F, lg = min_cost_flow(s, C, log=True)
    G = nx.DiGraph()
    scale = 10**6
    for i in range(len(s)):
        G.add_node(i, demand=-round(float(s[i]) * scale))
    G.nodes[0]["demand"] -= sum(d for _, d in G.nodes(data="demand"))  # exact integer balance
    for i, j in zip(*np.nonzero(np.isfinite(C.numpy())), strict=True):
        if i != j:
            G.add_edge(int(i), int(j), weight=round(float(C[i, j]) * 10**6))
    nx_cost = nx.min_cost_flow_cost(G) / scale / 10**6
    assert lg["cost"] == pytest.approx(nx_cost, rel=1e-4)
    assert float(flow_violations(F, s)["balance_violation"]) < 1e-9


def test_uncapacitated_near_optimal_and_balanced(graph, one_thread):
    s, C = graph
    opt = min_cost_flow(s, C, log=True)[1]["cost"]
    F, lg = oft_sinkhorn(s, C, 1e-3, log=True)
    assert lg["converged"]
    assert 0 <= _gap(F, C, opt) <= 0.02
    assert lg["balance_violation"] <= 1e-9 * float(s.clamp_min(0).sum()) * 1.0001
    assert torch.allclose(F.sum(-1) - F.sum(-2), s, atol=1e-8)
    assert (F >= 0).all() and (F.diagonal() == 0).all()
    assert (F[~torch.isfinite(C)] == 0).all()  # no flow on non-edges
    assert F[len(s) - 2].abs().sum() < 1e-6  # the isolated node carries nothing


def test_asymmetric_edge_capacity(graph, one_thread):
    s, C = graph
    n = len(s)
    F0 = min_cost_flow(s, C)
    g = torch.Generator().manual_seed(0)
    cap = 0.4 * float(F0.max()) * (0.5 + torch.rand(n, n, generator=g, dtype=torch.float64))
    cap = torch.triu(cap) + 3 * torch.tril(cap, -1)  # cap_ij != cap_ji: a transposed clip fails
    Fx, lx = min_cost_flow(s, C, capacity=cap, log=True)
    assert float((Fx - cap).max()) <= 1e-9
    assert lx["cost"] > flow_cost(F0, C) * 1.001  # the caps bind
    F, lg = oft_sinkhorn(s, C, 1e-3, capacity=cap, log=True)
    assert lg["capacity_violation"] <= 1e-9 * float(cap.min())
    assert float((F - cap).max()) <= 1e-12
    assert lg["balance_violation"] <= 1e-6
    # the clip only ever shrinks K, so EOFT-Sinkhorn sits a little above the capacitated
    # optimum (2.2 % here); the notes' 5 % bound, the claim tracks the issue's 2 %
    assert 0 <= _gap(F, C, lx["cost"]) <= 0.05


def test_node_capacity(one_thread):
    s, C = make_layered(5, 4, 5, seed=2)
    C = C.clone()
    C[:5, 9:] *= 3  # direct source -> sink edges cost more, so transit nodes carry flow
    F0, l0 = min_cost_flow(s, C, log=True)
    through = F0.sum(-1)
    assert float(through[5:9].max()) > 0.1
    ncap = torch.full_like(s, INF)
    ncap[5:9] = 0.5 * through[5:9].max()  # the busiest transit node must shed half its flow
    Fx, lx = min_cost_flow(s, C, node_capacity=ncap, log=True)
    assert float((Fx.sum(-1) - ncap).max()) <= 1e-9
    assert lx["cost"] > l0["cost"] * 1.001  # the node caps bind
    F, lg = oft_sinkhorn(s, C, 1e-3, node_capacity=ncap, log=True)
    assert lg["node_capacity_violation"] <= 1e-6
    assert lg["balance_violation"] <= 1e-6
    assert 0 <= _gap(F, C, lx["cost"]) <= 0.02


def test_bipartite_equals_pot_sinkhorn(one_thread):
    ot = pytest.importorskip("ot")
    g = torch.Generator().manual_seed(0)
    a = torch.rand(5, generator=g, dtype=torch.float64) + 0.5
    b = torch.rand(7, generator=g, dtype=torch.float64) + 0.5
    a, b = a / a.sum(), b / b.sum()
    M = torch.rand(5, 7, generator=g, dtype=torch.float64)
    n = 12
    C = torch.full((n, n), INF, dtype=torch.float64)
    C[:5, 5:] = M
    s = torch.cat([a, -b])
    reg = 0.05
    F = oft_sinkhorn(s, C, reg, stopThr=1e-13, numItermax=50000)
    P = ot.sinkhorn(a.numpy(), b.numpy(), (M / M.max()).numpy(), reg, stopThr=1e-13,
                    numItermax=50000)
    assert np.abs(F[:5, 5:].numpy() - P).max() < 1e-6


def test_log_domain_matches_scaling(layered, one_thread):
    s, C = layered
    F1, l1 = oft_sinkhorn(s, C, 1e-2, log=True)
    F2, l2 = oft_sinkhorn(s, C, 1e-2, method="sinkhorn_log", log=True)
    assert torch.allclose(F1, F2, atol=1e-9)
    assert l1["n_iter"] == l2["n_iter"]


def test_underflow_is_survived_by_scaling_or_the_log_domain(one_thread):
    # exp(-1/1e-4) underflows: the only edge to the demand would vanish
    C = torch.tensor([[0, 1.0, 1e-3], [INF, 0, INF], [INF, INF, 0]], dtype=torch.float64)
    s = torch.tensor([1.0, -1.0, 0.0], dtype=torch.float64)
    F = oft_sinkhorn(s, C, 1e-4)  # ε-scaling: kernels rebuilt from the potentials
    assert float(F[0, 1]) == pytest.approx(1.0, abs=1e-8)
    with pytest.warns(RuntimeWarning, match="switching to method='sinkhorn_log'"):
        F = oft_sinkhorn(s, C, 1e-4, epsilon_scaling=False)
    assert float(F[0, 1]) == pytest.approx(1.0, abs=1e-8)
    F = oft_sinkhorn(s, C, 1e-4, method="sinkhorn_log", epsilon_scaling=False)
    assert float(F[0, 1]) == pytest.approx(1.0, abs=1e-8)


def test_underflow_warns_and_counts_dropped_edges(layered):
    s, C = layered
    with pytest.warns(RuntimeWarning, match="dropped"):
        _, lg = oft_sinkhorn(s, C, 1e-3, numItermax=60, epsilon_scaling=False, log=True)
    assert lg["dropped_edges"] > 0


def test_batched_equals_per_instance(one_thread):
    inst = [make_layered(4, 3, 4, seed=k) for k in range(3)]
    s = torch.stack([i[0] for i in inst])
    C = torch.stack([i[1] for i in inst])
    cap = torch.tensor([0.2, 0.15, 0.3], dtype=torch.float64).view(3, 1, 1)
    Fb, lb = oft_sinkhorn(s, C, 1e-2, capacity=cap, log=True)
    assert Fb.shape == (3, 11, 11) and lb["cost"].shape == (3,)
    for k in range(3):
        Fk, lk = oft_sinkhorn(s[k], C[k], 1e-2, capacity=cap[k, 0, 0], log=True)
        assert torch.allclose(Fb[k], Fk, atol=1e-10)
        assert int(lb["n_iter"][k]) >= lk["n_iter"]
    Fx = min_cost_flow(s, C, capacity=cap)
    assert torch.allclose(Fx[1], min_cost_flow(s[1], C[1], capacity=0.15), atol=1e-9)


def test_float32_numpy_and_no_mutation(layered):
    s, C = layered
    s32, C32 = s.float(), C.float()
    s_copy, C_copy = s32.clone(), C32.clone()
    F = oft_sinkhorn(s32, C32, 1e-2)
    assert F.dtype == torch.float32 and F.device == C32.device
    assert torch.equal(s32, s_copy) and torch.equal(C32, C_copy)
    Fn = oft_sinkhorn(s.numpy(), C.numpy(), 1e-2)
    assert Fn.dtype == torch.float64
    assert torch.allclose(Fn.float(), F, atol=1e-5)


def test_from_networkx_roundtrip():
    G = nx.DiGraph()
    G.add_node("a", demand=-2)
    G.add_node("b", demand=0)
    G.add_node("c", demand=2)
    G.add_edge("a", "b", weight=1, capacity=1)
    G.add_edge("b", "c", weight=1)
    G.add_edge("a", "c", weight=3)
    s, C, cap, nodes = from_networkx(G)
    assert nodes == ["a", "b", "c"]
    assert s.tolist() == [2.0, 0.0, -2.0]
    F, lg = min_cost_flow(s, C, capacity=cap, log=True)
    assert lg["cost"] == pytest.approx(nx.min_cost_flow_cost(G))
    assert float(F[0, 1]) == pytest.approx(1.0)
    with pytest.raises(TypeError, match="G"):
        from_networkx(nx.Graph())


def test_make_layered_seeded_and_shaped():
    s1, C1 = make_layered(3, 2, 4, seed=5)
    s2, C2 = make_layered(3, 2, 4, seed=torch.Generator().manual_seed(5))
    assert torch.equal(s1, s2) and torch.equal(C1, C2)
    assert float(s1[:3].sum()) == pytest.approx(1.0) and float(s1.sum()) == pytest.approx(0)
    assert torch.isinf(C1[3:5, :3]).all()  # nothing flows back to sources
    assert torch.isinf(C1[5:]).all()  # sinks have no out-edges
    assert torch.isfinite(C1[:3, 3:]).all()
    su, _ = make_layered(3, 0, 3, masses="uniform", seed=0)
    assert torch.allclose(su[:3], torch.full((3,), 1 / 3, dtype=torch.float64))


@pytest.mark.parametrize("sizes", [(1, 0, 1), (1, 1, 1), (2, 0, 3), (3, 2, 2)])
def test_defaults_solve_the_smallest_layered_instances(sizes, one_thread):
    # before issue 39: FloatingPointError or an underflow ValueError at the defaults
    for seed in range(3):
        s, C = make_layered(*sizes, seed=seed)
        F, lg = oft_sinkhorn(s, C, log=True)
        assert lg["converged"] and lg["balance_violation"] <= 1e-9
        assert _gap(F, C, min_cost_flow(s, C, log=True)[1]["cost"]) <= 0.02


def test_epsilon_scaling_reaches_the_same_entropic_flow(layered, one_thread):
    s, C = layered
    F1, l1 = oft_sinkhorn(s, C, 1e-2, stopThr=1e-12, numItermax=50000, log=True)
    F2 = oft_sinkhorn(s, C, 1e-2, stopThr=1e-12, numItermax=50000, epsilon_scaling=False)
    assert torch.allclose(F1, F2, atol=1e-9)
    regs = l1["history"]["reg"]
    assert regs[0] == pytest.approx(0.16) and regs[-1] == pytest.approx(1e-2)
    assert regs == sorted(regs, reverse=True)


def test_exact_capacity_clip_beats_the_papers_cumulative_clip(one_thread):
    # the cumulative clip keeps caps that bound only in the transient: dearer flow
    s, C = make_layered(20, 20, 20, seed=0)
    F0, lp = min_cost_flow(s, C, log=True)
    cap = 0.25 * float(F0.max())
    _, lc = min_cost_flow(s, C, capacity=cap, log=True)
    gaps = {}
    for clip in ("exact", "paper"):
        F, lg = oft_sinkhorn(s, C, 1e-3, capacity=cap, capacity_clip=clip, stopThr=1e-6,
                             log=True)
        assert lg["converged"] and lg["capacity_violation"] <= 1e-9 * cap
        gaps[clip] = _gap(F, C, lc["cost"])
    assert 0 <= gaps["exact"] <= 0.005 < gaps["paper"]


def test_newton_reaches_the_scaling_fixed_point(layered, one_thread):
    # the same entropic flow with and without the Newton finish, on both code paths
    s, C = layered
    F0, l0 = oft_sinkhorn(s, C, 1e-2, newton=False, stopThr=1e-12, numItermax=100000, log=True)
    for method in ("sinkhorn", "sinkhorn_log"):
        F1, l1 = oft_sinkhorn(s, C, 1e-2, method=method, stopThr=1e-12, log=True)
        assert l0["converged"] and l1["converged"]
        assert torch.allclose(F1, F0, atol=1e-10)
        assert l1["n_iter"] < l0["n_iter"]


def test_capacitated_newton_reaches_the_scaling_fixed_point(layered, one_thread):
    # semismooth Newton on the capacitated dual: the exact clip's fixed point, both paths
    s, C = layered
    cap = 0.5 * float(min_cost_flow(s, C).max())
    kw = dict(capacity=cap, stopThr=1e-12, log=True)
    F0, l0 = oft_sinkhorn(s, C, 5e-2, newton=False, numItermax=200000, **kw)
    assert l0["converged"]
    for method in ("sinkhorn", "sinkhorn_log"):
        F1, l1 = oft_sinkhorn(s, C, 5e-2, method=method, **kw)
        assert l1["converged"] and l1["n_iter"] < l0["n_iter"]
        assert torch.allclose(F1, F0, atol=1e-10)
        assert l1["capacity_violation"] <= 1e-12
    assert float(F0.max()) == pytest.approx(cap, rel=1e-6)  # the caps bind


def test_capacitated_converges_at_n300(one_thread):
    # the scaling alone stalls near violation 2e-4·Σs⁺ after 20000 iterations here
    s, C = make_layered(100, 100, 100, seed=0)
    cap = 0.25 * float(min_cost_flow(s, C).max())
    _, lc = min_cost_flow(s, C, capacity=cap, log=True)
    F, lg = oft_sinkhorn(s, C, 1e-3, capacity=cap, stopThr=1e-6, log=True)
    assert lg["converged"] and lg["n_iter"] <= 2000
    assert lg["capacity_violation"] <= 1e-9 * cap
    assert float(flow_violations(F, s)["balance_violation"]) <= 1e-6
    assert 0 <= _gap(F, C, lc["cost"]) <= 0.02


def test_newton_converges_at_n300_within_budget(one_thread):
    # the claim's setting: the scaling alone ended at violation 4-6e-6 after 20000 iterations
    s, C = make_layered(100, 100, 100, seed=1)
    opt = min_cost_flow(s, C, log=True)[1]["cost"]
    F, lg = oft_sinkhorn(s, C, 1e-3, stopThr=1e-6, numItermax=20000, log=True)
    assert lg["converged"] and lg["n_iter"] <= 20000
    assert float(flow_violations(F, s)["balance_violation"]) <= 1e-6
    assert 0 <= _gap(F, C, opt) <= 0.02


def test_newton_batched_and_against_the_lp(one_thread):
    # entropic gap shrinks towards the LP optimum (scipy HiGHS) as reg falls; batch = singles
    inst = [make_layered(5, 4, 5, seed=k) for k in range(3)]
    s = torch.stack([i[0] for i in inst])
    C = torch.stack([i[1] for i in inst])
    _, lp = min_cost_flow(s, C, log=True)
    gaps = []
    for reg in (1e-2, 1e-3, 1e-4):
        Fb, lb = oft_sinkhorn(s, C, reg, stopThr=1e-10, log=True)
        assert bool(lb["converged"].all())
        assert float(lb["balance_violation"].max()) <= 1e-10
        gaps.append(((lb["cost"] - lp["cost"]) / lp["cost"]).max())
        for k in range(3):
            assert torch.allclose(Fb[k], oft_sinkhorn(s[k], C[k], reg, stopThr=1e-10),
                                  atol=1e-8)
    assert 0 <= gaps[2] < gaps[1] < gaps[0] and gaps[2] < 1e-3


def test_newton_stops_at_float64_resolution(layered, one_thread):
    # stopThr = 0 cannot be met: Newton stops when no step improves, long before the cap
    s, C = layered
    with pytest.warns(RuntimeWarning, match="did not reach"):
        _, lg = oft_sinkhorn(s, C, 1e-2, stopThr=0.0, numItermax=10**6, log=True)
    assert not lg["converged"]
    assert lg["history"]["iteration"][-1] < 1000
    assert lg["balance_violation"] < 1e-14
