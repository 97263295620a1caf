"""The trifeatures experiment's shared work is the same computation: arms pre-trained in
lockstep on shared views, and several reads of one encoding, equal the one-at-a-time path."""

import torch
from torch import nn

from iclr25._train import fit_minibatch
from iclr25.comm.claim import _augment, _build
from iclr25.comm.training import features_many, objective_loss, pretrain_together

OBJECTIVES = ("comm", "cross", "cross_self")


def _alone(model, xs, objective, *, epochs, batch_size, seed):
    """One model pre-trained alone, as the experiment did before (fit_minibatch driving a
    step that draws its own views; AdamW's per-parameter loop)."""
    gen = torch.Generator().manual_seed(seed)
    augment = _augment()

    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, idx):
            batch = [x[idx] for x in xs]
            v1 = [a(x, seed=gen) for a, x in zip(augment, batch, strict=True)]
            v2 = [a(x, seed=gen) for a, x in zip(augment, batch, strict=True)]
            return objective_loss(self.model, v1, v2, objective)

    n = len(xs[0])
    ids = torch.arange(n)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4, foreach=False)

    def batches(_):
        return [i for i in torch.randperm(n, generator=gen).split(batch_size) if len(i) >= 2]

    return fit_minibatch(Step(), lambda loss, _: loss, ids, ids, epochs=epochs,
                         batch_size=batch_size, optimizer=opt, seed=gen, batches=batches)


def test_pretrain_together_equals_each_model_trained_alone():
    g = torch.Generator().manual_seed(0)
    xs = [torch.rand(41, 3, 16, 16, generator=g) for _ in range(2)]  # last batch of 9
    widths = (8, 8)
    together = [_build(100, widths) for _ in OBJECTIVES]
    curves = pretrain_together(together, xs, augment=_augment(), objectives=OBJECTIVES,
                               epochs=2, batch_size=16, lr=1e-3, weight_decay=1e-4, seed=4)
    for obj, m, curve in zip(OBJECTIVES, together, curves, strict=True):
        alone = _build(100, widths)
        assert _alone(alone, xs, obj, epochs=2, batch_size=16, seed=4) == curve
        for (name, p), q in zip(m.named_parameters(), alone.parameters(), strict=True):
            assert torch.equal(p, q), (obj, name)
        assert not m.training


def test_features_many_equals_each_read_encoded_alone():
    g = torch.Generator().manual_seed(1)
    xs = [torch.rand(30, 3, 16, 16, generator=g) for _ in range(2)]
    model = _build(7, (8, 8)).eval()
    fused, cross = features_many(model, xs, ("comm", "cross"), batch_size=16)
    with torch.no_grad():
        assert torch.equal(fused, torch.cat([model(list(c)) for c in zip(
            xs[0].split(16), xs[1].split(16), strict=True)]))
        assert torch.equal(cross, torch.cat([torch.cat(model.embeddings(
            list(c), torch.eye(2, dtype=torch.bool)), 1) for c in zip(
            xs[0].split(16), xs[1].split(16), strict=True)]))


def test_cached_position_embedding_serves_training_after_inference_mode():
    from iclr25.comm import PatchTokenizer

    tok = PatchTokenizer(8, 16, seed=0)
    x = torch.rand(2, 8, 5, 3)  # a shape no other test asks for: the first call caches
    with torch.inference_mode():
        first = tok(x)
    out = tok(x.requires_grad_())
    out.sum().backward()
    assert torch.equal(out.detach(), first) and x.grad is not None
