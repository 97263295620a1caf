"""ToSS fixture: the Taylor Induced Covariance of vita-epfl/TIC-TAC (``Multivariate/utils.py:
get_tic_covariance``), the TIC baseline of ToSS by the same authors.

ToSS's own repository (vita-epfl/ToSS) cannot be had here (no snapshot, no indexed file), so
its W2 bound and pseudo-labels have no official fixture; TIC-TAC is the authors' code for the
TIC covariance that ToSS compares against, which iclr25 re-implements (loss ``"tic"``).

Official function run unchanged (matplotlib, imported for plots, must be importable; run from
``PATH/Multivariate`` on ``sys.path``). Inputs (seed 0, float64): iclr25's TIC network
(``toss.model._Net(d=4, q=3, hidden=(16, 16), seed=0, tic=True)``, ELU trunk) wrapped so its
forward returns (mean, _) as the official ``Regressor`` does; 12 inputs ~ N(0, I_4); the
official call gets our raw scale outputs as ``cov_hat[:, -2:]`` and ``L Lᵀ`` as
``psd_matrix``. Stored: the network's weights, the inputs and the official covariance.

    python tools/fidelity/toss.py --official /path/to/TIC-TAC
"""

import sys

import torch
from _common import commit, parse, save

args = parse(__doc__)
sys.path.insert(0, str(args.official / "Multivariate"))
from utils import get_tic_covariance  # noqa: E402

from iclr25.toss.model import _Net  # noqa: E402


class Official(torch.nn.Module):
    """The official Regressor's interface: forward(x) -> (mean, flattened var)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net._mean(x), None


net = _Net(4, 3, (16, 16), seed=0, tic=True).double()
x = torch.randn(12, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
with torch.no_grad():
    mean, L, raw, _, _ = net(x)
    cov = get_tic_covariance(x, Official(net), raw, L @ L.mT)
save(args.out, "toss", commit(args.official), x=x, cov=cov,
     **{f"w.{k}": v for k, v in net.state_dict().items()})
