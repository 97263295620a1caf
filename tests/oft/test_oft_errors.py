"""Bad input raises ValueError/TypeError naming the argument, before any work."""

import math

import pytest
import torch

from iclr25.oft import min_cost_flow, oft_sinkhorn

INF = math.inf


def _toy():
    C = torch.tensor([[0, 1.0, 3.0], [INF, 0, 1.0], [INF, INF, 0]], dtype=torch.float64)
    s = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64)
    return s, C


@pytest.mark.parametrize("solver", [oft_sinkhorn, min_cost_flow])
def test_problem_errors(solver):
    s, C = _toy()
    cases = [
        ((s, C[:2]), ValueError, "C must be"),
        ((s[:2], C), ValueError, "s must be"),
        ((s, C.unsqueeze(0).unsqueeze(0)), ValueError, "C must be"),
        ((s, torch.where(C == 1, math.nan, C)), ValueError, "C contains .* NaN"),
        ((torch.tensor([1.0, math.nan, -1.0]), C), ValueError, "s contains .* NaN"),
        ((s, torch.where(C == 3, -1.0, C)), ValueError, "C must be >= 0"),
        ((torch.tensor([1.0, 0.0, -0.5]), C), ValueError, "s must sum to 0"),
        ((torch.zeros(3), C), ValueError, "s is all zero"),
        ((s.bool(), C), TypeError, "s must be .*real"),
        ((s, C.to(torch.complex128)), TypeError, "C must be .*real"),
        ((torch.stack([s, s]), torch.stack([C, C, C])), ValueError, "batch size"),
    ]
    for args, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            solver(*args)


@pytest.mark.parametrize("solver", [oft_sinkhorn, min_cost_flow])
def test_capacity_errors(solver):
    s, C = _toy()
    with pytest.raises(ValueError, match="capacity must be >= 0"):
        solver(s, C, capacity=-1.0)
    with pytest.raises(ValueError, match="capacity must broadcast"):
        solver(s, C, capacity=torch.ones(2, 2))
    with pytest.raises(ValueError, match="node_capacity must be >= 0"):
        solver(s, C, node_capacity=torch.tensor([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match=r"node_capacity\[0\].*below the supply"):
        solver(s, C, node_capacity=0.5)
    with pytest.raises(ValueError, match="capacity contains .* NaN"):
        solver(s, C, capacity=math.nan)


@pytest.mark.parametrize("solver", [oft_sinkhorn, min_cost_flow])
def test_graph_errors_name_the_node(solver):
    s, C = _toy()
    no_out = C.clone()
    no_out[0, 1:] = INF
    with pytest.raises(ValueError, match="supply node 0 has no out-edge"):
        solver(s, no_out)
    no_in = C.clone()
    no_in[:, 2] = INF
    with pytest.raises(ValueError, match="demand node 2 has no in-edge"):
        solver(s, no_in)
    # node 3 -> 2 is the only way into the demand node, and nothing reaches node 3
    C4 = torch.full((4, 4), INF, dtype=torch.float64)
    C4[0, 1] = 1.0
    C4[3, 2] = 1.0
    s4 = torch.tensor([1.0, 0.0, -1.0, 0.0], dtype=torch.float64)
    with pytest.raises(ValueError, match="demand node 2 is unreachable"):
        solver(s4, C4)
    # zero capacity removes the edge
    with pytest.raises(ValueError, match="supply node 0 has no out-edge"):
        solver(s, C, capacity=torch.tensor([[1.0, 0, 0], [1, 1, 1], [1, 1, 1]]))


def test_solver_argument_errors():
    s, C = _toy()
    for kw, exc, msg in [
        ({"reg": 0.0}, ValueError, "reg"),
        ({"reg": -1.0}, ValueError, "reg"),
        ({"virtual_flow": 0.0}, ValueError, "virtual_flow"),
        ({"method": "exact"}, ValueError, "method"),
        ({"numItermax": 0}, ValueError, "numItermax"),
        ({"numItermax": 1.5}, TypeError, "numItermax"),
        ({"stopThr": -1.0}, ValueError, "stopThr"),
        ({"capacity_clip": "cumulative"}, ValueError, "capacity_clip"),
        ({"epsilon_scaling": 1}, TypeError, "epsilon_scaling"),
        ({"newton": "yes"}, TypeError, "newton"),
    ]:
        with pytest.raises(exc, match=msg):
            oft_sinkhorn(s, C, **kw)


def test_infeasible_capacities_in_exact_solver():
    s, C = _toy()
    with pytest.raises(ValueError, match="capacity"):
        min_cost_flow(s, C, capacity=0.3)


def test_non_convergence_warns():
    s, C = _toy()
    with pytest.warns(RuntimeWarning, match="did not reach stopThr"):
        _, lg = oft_sinkhorn(s, C, 1e-2, numItermax=3, log=True)
    assert lg["converged"] is False and lg["n_iter"] == 3


def test_non_convergence_with_capacities_names_the_feasibility_check():
    # issue 68 walk: an infeasible capacitated network only read "did not reach stopThr";
    # the likeliest cause with capacities, and the exact solver that names it, now in the text
    s, C = _toy()
    with pytest.warns(RuntimeWarning, match="never balance: min_cost_flow says whether"):
        _, lg = oft_sinkhorn(s, C, 1e-2, capacity=0.3, numItermax=50, log=True)
    assert lg["converged"] is False
    with pytest.raises(ValueError, match="capacity"):
        min_cost_flow(s, C, capacity=0.3)                 # which it does: infeasible
    with pytest.warns(RuntimeWarning) as record:          # without capacities: no such words
        oft_sinkhorn(s, C, 1e-2, numItermax=3)
    assert all("min_cost_flow" not in str(w.message) for w in record)
