"""CoMM fixture: Duplums/CoMM ``losses/comm_loss.py:CoMMLoss.forward`` and its gradients.

Official module run unchanged (single process, so ``all_gather_batch_with_grad`` is the
identity); ``utils.py``'s training-only imports (omegaconf, pytorch_lightning, tensorboard)
are stubbed when absent. Inputs (seed 0, float64): two views of n + 1 = 4 embeddings
(3 modality masks, the full one last = ``prototype`` 3), batch 16, width 8, with view 2 =
view 1 + N(0, 0.5^2) noise; temperature 0.1; unweighted, and
weights (0.5, 1.5, 1, 1) (summing to n + 1, where the official mean(w L) equals our
normalised sum). Outputs: both losses and the unweighted loss's gradients.

    python tools/fidelity/comm.py --official /path/to/CoMM
"""

import torch
from _common import commit, parse, save, stub

args = parse(__doc__)
stub("omegaconf", "pytorch_lightning", "tensorboard", "tensorboard.backend",
     "tensorboard.backend.event_processing",
     "tensorboard.backend.event_processing.event_accumulator")
from losses.comm_loss import CoMMLoss  # noqa: E402

g = torch.Generator().manual_seed(0)
z1 = torch.randn(4, 16, 8, generator=g, dtype=torch.float64)
z2 = z1 + 0.5 * torch.randn(4, 16, 8, generator=g, dtype=torch.float64)
a, b = z1.clone().requires_grad_(True), z2.clone().requires_grad_(True)
loss = CoMMLoss(temperature=0.1)({"aug1_embed": list(a), "aug2_embed": list(b), "prototype": 3})
loss["loss"].backward()
w = [0.5, 1.5, 1.0, 1.0]
lw = CoMMLoss(temperature=0.1, weights=w)({"aug1_embed": list(z1), "aug2_embed": list(z2),
                                            "prototype": 3})["loss"]
save(args.out, "comm", commit(args.official), z1=z1, z2=z2, loss=loss["loss"].detach(),
     grad_z1=a.grad, grad_z2=b.grad, weights=w, loss_weighted=lw)
