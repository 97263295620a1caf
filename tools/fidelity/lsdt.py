"""LSDT fixture: WangJinCheng1998/LONG-SHORT-DECISION-TRANSFORMER ``decision_transformer/
LSDT.py:Block`` (MaskedCausalAttention's attention branch, DynamicConvolution branch and
hybrid fusion, then the post-LN MLP), forward output and input gradient.

Official module run unchanged; its hard-coded ``.to('cuda')`` is redirected to the CPU.
Inputs (float64): h_dim 16, 2 heads, conv dim 8 (xi = 0.5; 2 conv heads = 8 // 4), kernel 5,
max_T 9; eval mode (no dropout). Parameters: the official initialisation from
``torch.manual_seed(0)``, then every parameter += 0.1 N(0, 1) (generator seed 0, state_dict
order) so zero-initialised biases are exercised; x ~ N(0, 1) (2 x 9 x 16, generator seed 1).
Outputs: the weights, Block(x) and d(sum Block(x)^2)/dx.

    python tools/fidelity/lsdt.py --official /path/to/LONG-SHORT-DECISION-TRANSFORMER
"""

import torch
from _common import commit, parse, save

args = parse(__doc__)
for cls in (torch.Tensor, torch.nn.Module):
    _to = cls.to
    cls.to = (lambda f: lambda self, *a, **k: f(self, *[("cpu" if x == "cuda" else x)
                                                       for x in a], **k))(_to)
from decision_transformer.LSDT import Block  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
block = Block(16, 9, 2, 0.1, 5, 0.1, 8).eval()
g = torch.Generator().manual_seed(0)
with torch.no_grad():
    for p in block.parameters():
        p.add_(0.1 * torch.randn(p.shape, generator=g))
x = torch.randn(2, 9, 16, generator=torch.Generator().manual_seed(1), requires_grad=True)
y = block(x)
y.square().sum().backward()
save(args.out, "lsdt", commit(args.official), x=x.detach(), y=y.detach(), grad_x=x.grad,
     **{f"w.{k}": v for k, v in block.named_parameters()})
