"""The bookkeeping of a solve: the ε schedule, iteration counts, convergence, history."""

from __future__ import annotations

import math

import torch

from iclr25.oft.problem import _Problem, _Stage

CHECK_EVERY = 50  # iterations between balance checks
STAGE_THR = 1e-4  # x Σs⁺: balance violation that ends an intermediate ε-scaling stage
REG_START = 0.1  # ε-scaling starts at the first reg·4^k >= this (relative to max C)


def _schedule(reg: float) -> list[float]:
    """ε-scaling: ``reg·4^k, …, reg·4, reg``, starting at the first ``>= REG_START``."""
    k = max(0, math.ceil(math.log(REG_START / reg, 4) - 1e-9))
    return [reg * 4.0**j for j in range(k, -1, -1)]


class _Track:
    """Per-instance iteration counts and convergence flags, and the history of the checks."""

    def __init__(self, pb: _Problem, hist: dict[str, list] | None = None) -> None:
        B = pb.s.shape[0]
        self.pb = pb
        self.n_iter = torch.full((B,), pb.iters, dtype=torch.long, device=pb.s.device)
        self.conv = torch.zeros(B, dtype=torch.bool, device=pb.s.device)
        self.hist = hist if hist is not None else {
            "iteration": [], "reg": [], "violation": [], "cost": []}

    def mark(self, it: int, done: torch.Tensor) -> None:
        """Instances ``done`` (B,) converged at iteration ``it`` (first time only)."""
        new = done & ~self.conv
        self.n_iter[new] = it
        self.conv |= new

    def record(self, it: int, reg: float, viol: torch.Tensor, P: torch.Tensor) -> None:
        """A history row: iteration, reg, violation / Σs⁺ and the cost of ``relu(P - Pᵀ)``."""
        arcs = self.pb.arcs
        self.hist["iteration"].append(it)
        self.hist["reg"].append(reg)
        self.hist["violation"].append((viol / self.pb.mass).tolist())
        self.hist["cost"].append(arcs.cost(arcs.flow(P)).tolist())

    def check(self, it: int, stage: _Stage, viol: torch.Tensor, P: torch.Tensor) -> bool:
        """Record a balance check; True when the solve ends (budget spent or all converged)."""
        if stage.last:
            self.mark(it, viol <= stage.thr)
        self.record(it, stage.reg, viol, P)
        return it == self.pb.iters or (stage.last and bool(self.conv.all()))

    def result(self, P: torch.Tensor) -> tuple:
        """The solve's result: ``(P, n_iter, converged, history)``."""
        return P, self.n_iter, self.conv, self.hist
