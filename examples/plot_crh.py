"""
CRH — Probe whether a trained network's representations align with its gradients and weights
============================================================================================

The Canonical Representation Hypothesis (CRH, ICLR 2025) says that, after training with
weight decay, a layer's representation covariance, its gradient covariance and its weight
Gram matrix align. :class:`iclr25.crh.AlignmentProbe` streams a data loader through any
PyTorch model once and scores the six CRH relations of each linear layer, with a rotation null
for chance level.

Here we train a small MLP on scikit-learn's digits with weight decay, probe its hidden layer
on the training data, and compare each relation's score with the null of random rotations.
"""

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

from iclr25 import crh

X, y = load_digits(return_X_y=True)
X = torch.tensor(X / 16.0, dtype=torch.float32)
y = torch.tensor(y)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32),
                            torch.nn.Tanh(), torch.nn.Linear(32, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)
for _ in range(60):
    for idx in torch.randperm(len(y)).split(64):
        opt.zero_grad()
        F.cross_entropy(model(X[idx]), y[idx]).backward()
        opt.step()

loader = list(zip(X.split(256), y.split(256), strict=True))
result = crh.AlignmentProbe(model, layers="2").run(loader)["2"]
# chance level: the 95th percentile of |score| over 100 random rotations
null = {rel: s.abs().quantile(0.95).item() for rel, s in result.null_scores(seed=0).items()}
for rel, score in result.scores.items():
    print(f"{rel}: {score:+.3f}  (rotation null, 95%: {null[rel]:.3f})")

# %%
# Each relation's score against the chance level of a random rotation of the same spectrum.
fig, ax = plt.subplots(figsize=(6, 3.5))
names = list(crh.RELATIONS)
ax.bar(names, [result.scores[n] for n in names], label="trained layer")
ax.plot(names, [null[n] for n in names], "k_", markersize=20,
        label="rotation null (95th percentile)")
ax.set_ylabel("alignment score")
ax.legend()
plt.show()
