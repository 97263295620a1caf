"""GSD fixture: CORE-Robotics-Lab/GSD ``code/core_nn/nn_gsdr.py:PairDiscriminator.forward``,
the bounded discriminator D = c sigmoid(f) + b and its offset-free ``pure_reward`` score.

Official module run unchanged, configured as the official GSD runs build it
(``use_action_not_next_state=True``, ``offset_reward=True``, clip c = 10, tanh hidden
layers); ``my_utils`` imports gym for environments, stubbed when absent. Run with
``PATH/code`` on ``sys.path``. Inputs (seed 0, float64): obs dim 3, action dim 2, hidden
(64, 64); the official initialisation from ``torch.manual_seed(0)``, then the offset set to
-3.7 (not its -c/2 init, so a swapped offset would show); 16 (s, a) pairs ~ N(0, 2^2).
Outputs: the weights, D, the pure score, and dD/d(s, a) summed over pairs.

    python tools/fidelity/gsd.py --official /path/to/GSD
"""

import sys

import torch
from _common import commit, parse, save, stub

args = parse(__doc__)
sys.path.insert(0, str(args.official / "code"))
stub("gym")
from core_nn.nn_gsdr import PairDiscriminator  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
D = PairDiscriminator(3, 2, use_action_not_next_state=True, offset_reward=True,
                      hidden_size=(64, 64), clip=10)
with torch.no_grad():
    D.reward_offset.fill_(-3.7)
x = (2 * torch.randn(16, 5, generator=torch.Generator().manual_seed(1))).requires_grad_(True)
d = D(x)
d.sum().backward()
with torch.no_grad():
    pure = D(x, pure_reward=True)
save(args.out, "gsd", commit(args.official), x=x.detach(), D=d.detach(), pure=pure,
     grad_x=x.grad, **{f"w.{k}": v for k, v in D.state_dict().items()})
