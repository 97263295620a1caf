"""Two gloo processes give the iterates of one process; the sparse wire equals the dense."""

import torch

from iclr25.locodl import ClientLogistic, locodl
from iclr25.locodl.distributed import spawn_runs


def test_gloo_two_processes_match_simulated_sparse_and_dense():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(80, 20, generator=g, dtype=torch.float64)
    y = (X[:, 0] > 0).long()
    clients = torch.arange(80) % 4
    spec = dict(kind="logistic", X=X, y=y, clients=clients, alpha=0.1)
    kw = dict(compressor="rand-3", max_iter=200, seed=7)
    sparse, dense = spawn_runs(spec, [dict(sparse=True, **kw), dict(sparse=False, **kw)], 2)
    ref = locodl(ClientLogistic(X, y, clients, 0.1), **kw)
    for r in (sparse, dense):
        assert torch.allclose(r["x"], ref.x, atol=1e-10, rtol=0)
        assert r["rounds"] == ref.rounds and r["uplink_bits"] == ref.uplink_bits
    assert sparse["wire_bytes"] == ref.rounds * 3 * (8 + 8)
    assert dense["wire_bytes"] == ref.rounds * 20 * 8
