"""Engines that average client messages: all clients in one process, or torch.distributed.

An engine gives each process a contiguous block of clients and averages a message over all
clients: dense rows by ``all_reduce``, or a rand-k payload as a physically sparse
``all_gather`` of (int64 index, value) pairs, summed into a dense vector on every process.
Every process holds identical copies of the server variables (LoCoDL's y and v), so no
broadcast is needed. ``wire_bytes`` counts the payload bytes one client put on the wire.
"""

from __future__ import annotations

import torch

from iclr25._contract import checked


@checked
class SimulatedComm:
    """All n clients as rows of one (n, d) tensor in this process (the paper's setting)."""

    def __init__(self) -> None:
        self.n_clients = 0
        self.wire_bytes = 0

    def setup(self, n_clients: int) -> tuple[int, int]:
        """Register the number of clients; return this process's block (lo, hi)."""
        self.n_clients = n_clients
        self.wire_bytes = 0
        return 0, n_clients

    def _check_setup(self) -> None:
        if self.n_clients < 1:  # dividing by 0 clients would return inf
            raise ValueError("SimulatedComm: call setup(n_clients) before mean")

    def mean(self, M: torch.Tensor) -> torch.Tensor:
        """(1/n) Σ_i M_i over all clients, from this block's rows (m, d) -> (d,)."""
        self._check_setup()
        self.wire_bytes += M.shape[1] * M.element_size()
        return M.sum(0) / self.n_clients

    def mean_sparse(self, idx: torch.Tensor, val: torch.Tensor, d: int) -> torch.Tensor:
        """(1/n) Σ_i of sparse rows given as (index (m, k), value (m, k)) -> dense (d,)."""
        self._check_setup()
        self.wire_bytes += idx.shape[1] * (idx.element_size() + val.element_size())
        out = torch.zeros(d, dtype=val.dtype, device=val.device)
        return out.index_add_(0, idx.reshape(-1), val.reshape(-1)) / self.n_clients

    sparse = True

    def __repr__(self) -> str:
        return "SimulatedComm()"


@checked
class DistributedComm(SimulatedComm):
    """Clients split in contiguous blocks over the ranks of a torch.distributed process group.

    Use gloo on CPU tensors, nccl on CUDA tensors; initialise the group first (``torchrun``
    plus ``dist.init_process_group``). ``sparse=False`` sends rand-k messages densely
    (all_reduce), the reference the sparse wire is checked against.

    Raises:
        ValueError: no initialised process group.
    """

    def __init__(self, group: object = None, *, sparse: bool = True) -> None:
        import torch.distributed as dist

        super().__init__()
        if not (dist.is_available() and dist.is_initialized()):
            raise ValueError("DistributedComm needs an initialised process group "
                             "(torch.distributed.init_process_group, e.g. under torchrun)")
        self.group = group
        self.sparse = bool(sparse)
        self.rank = dist.get_rank(group)
        self.world = dist.get_world_size(group)

    def setup(self, n_clients: int) -> tuple[int, int]:
        if self.world > n_clients:
            raise ValueError(f"n_proc must be <= n_clients ({n_clients}), got {self.world}")
        self.n_clients = n_clients
        self.wire_bytes = 0
        self.bounds = [r * n_clients // self.world for r in range(self.world + 1)]
        self.block = max(b - a for a, b in zip(self.bounds, self.bounds[1:], strict=False))
        return self.bounds[self.rank], self.bounds[self.rank + 1]

    def mean(self, M: torch.Tensor) -> torch.Tensor:
        import torch.distributed as dist

        self.wire_bytes += M.shape[1] * M.element_size()
        s = M.sum(0)
        dist.all_reduce(s, op=dist.ReduceOp.SUM, group=self.group)
        return s / self.n_clients

    def mean_sparse(self, idx: torch.Tensor, val: torch.Tensor, d: int) -> torch.Tensor:
        import torch.distributed as dist

        self.wire_bytes += idx.shape[1] * (idx.element_size() + val.element_size())
        m, k = idx.shape
        if m < self.block:  # pad unequal blocks: index 0 with value 0 adds nothing
            idx = torch.cat([idx, idx.new_zeros(self.block - m, k)])
            val = torch.cat([val, val.new_zeros(self.block - m, k)])
        idxs = [torch.empty_like(idx) for _ in range(self.world)]
        vals = [torch.empty_like(val) for _ in range(self.world)]
        dist.all_gather(idxs, idx.contiguous(), group=self.group)
        dist.all_gather(vals, val.contiguous(), group=self.group)
        out = torch.zeros(d, dtype=val.dtype, device=val.device)
        out.index_add_(0, torch.cat(idxs).reshape(-1), torch.cat(vals).reshape(-1))
        return out / self.n_clients

    def __repr__(self) -> str:
        return f"DistributedComm(rank={self.rank}, world={self.world}, sparse={self.sparse})"
