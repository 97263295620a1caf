"""
COX — Teach a new sensor from an aligned model and a handful of pairs
=====================================================================

Out-of-modal generalisation (COX, ICLR 2025): you have a modality with good, labelled
embeddings (the "in-modal" one, e.g. images through a pretrained encoder) and a new sensor
with hardly any labels or paired recordings. :class:`iclr25.cox.COX` connects the new
modality to the known embeddings through a variational information bottleneck on a few
pairs, then explores: rows where the two sides agree become new pseudo-labelled pairs.

Here the in-modal embedding is a normalised 16-dimensional PCA of scikit-learn's digit
images, with labels; the new sensor reads the same 1,200 digits as a 40-channel nonlinear,
noisy signal. Only 30 recordings are paired with their image and labelled. We compare COX
with a classifier trained on those 30 labelled sensor rows alone.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression

from iclr25 import cox

rng = np.random.default_rng(0)
X_img, y = load_digits(return_X_y=True)
X_img, y = X_img[:1200], y[:1200]
Z = PCA(16, random_state=0).fit_transform(X_img)
Z /= np.linalg.norm(Z, axis=1, keepdims=True)                  # the aligned IM embedding
sensor = np.tanh(X_img @ rng.normal(0, 0.05, (64, 40))) + rng.normal(0, 0.1, (1200, 40))

paired = rng.choice(1200, 30, replace=False)
y_oom = np.full(1200, -1)
y_oom[paired] = y[paired]
t = dict(dtype=torch.float32)
# floor="off": COX's own head (by default fit also checks it against a logistic regression
# on the labelled rows by cross-validation and returns the regression unless COX's head wins
# clearly, by a sign test; see the guide)
model = cox.COX(10, steps=400, hidden=128, bottleneck=64, seed=0, floor="off").fit(
    torch.tensor(sensor, **t), im={"image": torch.tensor(Z, **t)},
    im_labels={"image": torch.tensor(y)},
    pairs=torch.tensor(np.stack([paired, paired], 1)), y_oom=torch.tensor(y_oom))

rest = np.setdiff1d(np.arange(1200), paired)
acc_cox = model.score(torch.tensor(sensor[rest], **t), torch.tensor(y[rest]))
alone = LogisticRegression(max_iter=2000).fit(sensor[paired], y[paired])
acc_alone = alone.score(sensor[rest], y[rest])
print(f"accuracy on the 1,170 unpaired sensor rows: COX {acc_cox:.3f}, "
      f"logistic regression on the 30 labelled rows {acc_alone:.3f}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
axes[0].plot(model.loss_.numpy())
axes[0].set_xlabel("step")
axes[0].set_ylabel("COX objective")
axes[1].bar(["30 labelled rows\nalone", "COX (30 pairs +\naligned IM)"], [acc_alone, acc_cox])
axes[1].set_ylabel("accuracy on the new sensor")
fig.tight_layout()
plt.show()
