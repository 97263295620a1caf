"""SchNetCHA: SchNet with a second message branch on SCHull edges (paper §3.3)."""

from __future__ import annotations

import math

import torch
from torch import nn

from iclr25._checks import check_int, check_range
from iclr25._contract import checked
from iclr25.schull.features import schull_features
from iclr25.schull.neighbors import radius_graph

__all__ = ["SchNetCHA"]


class _SSP(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.softplus(x) - math.log(2.0)


class _Interaction(nn.Module):
    def __init__(self, hidden: int, gaussians: int, width_r: int, cutoff: float):
        super().__init__()
        self.cutoff = cutoff
        self.width_h = hidden - width_r
        self.filt = nn.Sequential(nn.Linear(gaussians, hidden), _SSP(), nn.Linear(hidden, hidden))
        self.lin = nn.Linear(hidden, hidden, bias=False)
        self.out = nn.Sequential(nn.Linear(hidden, hidden), _SSP(), nn.Linear(hidden, width_r))
        if self.width_h:
            self.filt_h = nn.Sequential(nn.Linear(7, hidden), _SSP(), nn.Linear(hidden, hidden))
            self.lin_h = nn.Linear(hidden, hidden, bias=False)
            self.out_h = nn.Sequential(nn.Linear(hidden, hidden), _SSP(),
                                       nn.Linear(hidden, self.width_h))
        self.cat = nn.Linear(hidden, hidden)
        self.act = _SSP()

    def forward(self, h, edge_index, gauss, dist, hull_index, hull_fea):
        j, i = edge_index
        env = 0.5 * (torch.cos(dist * math.pi / self.cutoff) + 1.0)
        m = self.lin(h)[j] * self.filt(gauss) * env[:, None]
        # messages summed in h's dtype (float32 under bf16 autocast, where m is bfloat16)
        parts = [self.out(torch.zeros_like(h).index_add_(0, i, m.to(h.dtype)))]
        if self.width_h:
            a, b = hull_index
            mh = self.lin_h(h)[a] * self.filt_h(hull_fea)
            parts.append(self.out_h(torch.zeros_like(h).index_add_(0, b, mh.to(h.dtype))))
        return h + self.act(self.cat(torch.cat(parts, dim=1)))


@checked
class SchNetCHA(nn.Module):
    """SchNet on a radius graph plus a SCHull branch; ``cha_rate=1`` is plain SchNet.

    Each interaction splits its output: ``⌊cha_rate·hidden⌋`` channels from continuous
    filters on radius edges (25 Gaussians on [0, cutoff], cosine envelope) and the rest from
    filters on the 7 SCHull features (:func:`schull_features`, recomputed from ``pos`` so
    forces by autograd see the hull too); the two are concatenated and mixed, with a
    residual. Energy is a sum of per-atom outputs.

    Args:
        hidden: channels. layers: interactions. cutoff: radius-graph cutoff (Å).
        cha_rate: fraction of channels from the radius branch, in (0, 1].
        gaussians: radial basis size. max_z: largest atomic number.

    Raises:
        ValueError: out-of-range arguments (named).
    """

    def __init__(self, hidden: int = 64, layers: int = 3, cutoff: float = 2.5,
                 cha_rate: float = 0.5, gaussians: int = 25, max_z: int = 100):
        super().__init__()
        check_int(hidden, "hidden", 2)
        check_int(layers, "layers", 1)
        check_range(cutoff, "cutoff", 0.0, low_open=True)
        check_range(cha_rate, "cha_rate", 0.0, 1.0, low_open=True)
        check_int(gaussians, "gaussians", 1)
        check_int(max_z, "max_z", 1)
        self.hidden, self.cutoff, self.cha_rate = hidden, float(cutoff), float(cha_rate)
        width_r = max(1, int(math.floor(cha_rate * hidden)))
        self.embed = nn.Embedding(max_z + 1, hidden)
        self.register_buffer("centres", torch.linspace(0.0, float(cutoff), gaussians))
        self.gamma = 0.5 / (float(cutoff) / max(gaussians - 1, 1)) ** 2
        self.blocks = nn.ModuleList(_Interaction(hidden, gaussians, width_r, float(cutoff))
                                    for _ in range(layers))
        self.head = nn.Sequential(nn.Linear(hidden, hidden // 2), _SSP(),
                                  nn.Linear(hidden // 2, 1))

    @property
    def uses_hull(self) -> bool:
        return self.blocks[0].width_h > 0

    def forward(self, z: torch.Tensor, pos: torch.Tensor, batch: torch.Tensor | None = None,
                schull_edge_index: torch.Tensor | None = None) -> torch.Tensor:
        """Energies (B,) of the structures in ``batch`` (z (N,), pos (N, 3), batch (N,))."""
        if batch is None:
            batch = torch.zeros(len(z), dtype=torch.int64, device=z.device)
        if self.uses_hull and schull_edge_index is None:
            raise ValueError("schull_edge_index is needed when cha_rate < 1")
        ei = radius_graph(pos, self.cutoff, batch, max_num_neighbors=64)
        dist = (pos[ei[0]] - pos[ei[1]]).norm(dim=1)
        gauss = torch.exp(-self.gamma * (dist[:, None] - self.centres) ** 2)
        fea = (schull_features(pos, schull_edge_index, batch) if self.uses_hull else None)
        h = self.embed(z)
        for blk in self.blocks:
            h = blk(h, ei, gauss, dist, schull_edge_index, fea)
        e = self.head(h).squeeze(1)
        nb = int(batch.max()) + 1
        return torch.zeros(nb, dtype=e.dtype, device=e.device).index_add_(0, batch, e)
