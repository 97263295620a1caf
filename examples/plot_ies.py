"""
IES — Stop training the samples a classifier has already mastered
=================================================================

Instance-dependent early stopping (IES, Yuan et al., ICLR 2025) drops a training sample from
back-propagation once the second-order difference of its loss stays near zero. It plugs into
an ordinary PyTorch loop: :class:`iclr25.ies.InstanceEarlyStopping` masks the per-sample
loss, and :meth:`~iclr25.ies.InstanceEarlyStopping.step` recomputes the active set after each
epoch.

Here a small MLP learns scikit-learn's handwritten digits; we count how many samples are
still back-propagated each epoch and compare the test accuracy with plain training.
"""

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from iclr25 import ies

X, y = load_digits(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X / 16.0, y, test_size=0.3, random_state=0)
X_tr, X_te = (torch.tensor(a, dtype=torch.float32) for a in (X_tr, X_te))
y_tr, y_te = (torch.tensor(a) for a in (y_tr, y_te))


def run(use_ies: bool, epochs: int = 40):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    stopper = ies.InstanceEarlyStopping(len(y_tr), delta=1e-3)
    gen = torch.Generator().manual_seed(0)
    for _ in range(epochs):
        for idx in torch.randperm(len(y_tr), generator=gen).split(64):
            losses = F.cross_entropy(model(X_tr[idx]), y_tr[idx], reduction="none")
            loss = stopper.masked_loss(losses, idx) if use_ies else losses.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        stopper.step()
    acc = (model(X_te).argmax(1) == y_te).float().mean().item()
    return stopper, acc


stopper, acc_ies = run(use_ies=True)
_, acc_plain = run(use_ies=False)
print(f"test accuracy: IES {acc_ies:.3f}, plain training {acc_plain:.3f}")
print(f"back-propagations saved by IES: {stopper.saved_fraction:.1%}")

# %%
# The active set shrinks as samples are mastered; a sample whose loss curves again re-enters.
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot([n / len(y_tr) for n in stopper.active_per_epoch])
ax.set_xlabel("epoch")
ax.set_ylabel("fraction of samples back-propagated")
ax.set_title(f"IES on digits: test accuracy {acc_ies:.3f} (plain {acc_plain:.3f})")
plt.show()
