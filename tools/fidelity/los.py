"""LOS fixture: bilibili/LOS stage 2 (``train/train.py:train_base`` epochs with the criterion,
optimiser and scheduler of ``main_stage2.py:train_stage2``) re-training a linear head.

``train_base`` is imported and run unchanged (``progress`` stubbed when absent; ``.cuda()``
made the identity so it runs on CPU). ``train_stage2`` itself cannot be imported
(``main_stage2.py`` parses the command line and opens log files at import), so its set-up
is re-stated below with torch's own API (CrossEntropyLoss(label_smoothing), SGD on
``model.fc`` with momentum 0.9, CosineAnnealingLR(epochs, eta_min 0), one
``scheduler.step()`` per epoch).

Inputs (seed 0, float64): 300 frozen features (d 8) of 5 long-tailed classes (counts
150/75/40/20/15, class means ~ N(0, 1.5^2 I), noise N(0, I)); the head starts from fixed
weights ~ N(0, 0.1^2); smoothing 0.98, lr 0.05 (10x the paper's 5e-4 so 3 epochs move the
head measurably), weight decay 0, batch 64, 3 epochs. Batch order: ``iclr25._train.
shuffled_batches`` with a seed-0 generator (the official loader is a sampler of the same
index batches). Output: the trained head.

    python tools/fidelity/los.py --official /path/to/LOS
"""

import torch
from _common import commit, parse, save, stub
from torch import nn, optim
from torch.optim import lr_scheduler

args = parse(__doc__)
stub("progress", "progress.bar")
from train.train import train_base  # noqa: E402

from iclr25._train import shuffled_batches  # noqa: E402  (batch order only)

torch.Tensor.cuda = lambda self, *a, **k: self
g = torch.Generator().manual_seed(0)
counts = [150, 75, 40, 20, 15]
y = torch.cat([torch.full((c,), k) for k, c in enumerate(counts)])
means = 1.5 * torch.randn(5, 8, generator=g, dtype=torch.float64)
X = means[y] + torch.randn(len(y), 8, generator=g, dtype=torch.float64)
W0 = 0.1 * torch.randn(5, 8, generator=g, dtype=torch.float64)
b0 = 0.1 * torch.randn(5, generator=g, dtype=torch.float64)
eps, lr, epochs, bs = 0.98, 0.05, 3, 64


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 5).double()
        with torch.no_grad():
            self.fc.weight.copy_(W0)
            self.fc.bias.copy_(b0)

    def forward(self, x):
        return self.fc(x)


model = Net()
# the set-up of main_stage2.py:train_stage2 (lines 35-38, 45, 50): same loss, optimiser, schedule
train_criterion = nn.CrossEntropyLoss(label_smoothing=eps)
optimizer = optim.SGD(model.fc.parameters(), lr=lr, momentum=0.9, weight_decay=0.0)
scheduler = lr_scheduler.CosineAnnealingLR(optimizer, epochs, eta_min=0.0)
order = torch.Generator().manual_seed(0)
losses = []
for _ in range(epochs):
    loader = [(X[i], y[i]) for i in shuffled_batches(len(y), bs, order)]
    losses.append(train_base(loader, model, optimizer, train_criterion)[0])
    scheduler.step()
save(args.out, "los", commit(args.official), X=X, y=y, W0=W0, b0=b0, smoothing=eps, lr=lr,
     epochs=epochs, batch_size=bs, weight=model.fc.weight.detach(), bias=model.fc.bias.detach(),
     epoch_loss=losses)
