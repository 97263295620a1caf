"""
CoMM — Learn one embedding of two sensors without labels
========================================================

CoMM (ICLR 2025) learns a multimodal representation by contrasting augmented versions of the
*fused* input, so it can pick up information that only the combination of modalities
carries, not just what they share. :class:`iclr25.comm.CoMMEmbedder` applies it to
row-aligned tables of features (one per modality), scikit-learn style; a missing modality is
passed as ``None`` and simply dropped from the fusion.

Here the two "sensors" are the left and right halves of scikit-learn's 8×8 digit images
(32 pixels each). We learn a 32-dimensional embedding without labels, then measure what a
linear classifier can read from it, with both halves and with one of them missing.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from iclr25 import comm

X, y = load_digits(return_X_y=True)
images = X.reshape(-1, 8, 8)
left, right = images[:, :, :4].reshape(-1, 32), images[:, :, 4:].reshape(-1, 32)
idx_tr, idx_te = train_test_split(np.arange(len(y)), test_size=0.3, random_state=0)

embedder = comm.CoMMEmbedder(dim=32, epochs=30, batch_size=128, seed=0)
embedder.fit([left[idx_tr], right[idx_tr]])


def probe(train, test):
    clf = LogisticRegression(max_iter=2000).fit(train, y[idx_tr])
    return clf.score(test, y[idx_te])


both = embedder.transform([left, right])
only_left = embedder.transform([left, None])
print(f"linear probe on the CoMM embedding: both halves {probe(both[idx_tr], both[idx_te]):.3f}, "
      f"left half only {probe(only_left[idx_tr], only_left[idx_te]):.3f}")
print(f"linear probe on the raw pixels:     both halves {probe(X[idx_tr], X[idx_te]):.3f}")

# %%
# The embedding, projected on its first two principal components, coloured by digit.
fig, ax = plt.subplots(figsize=(5.5, 4.5))
Z = PCA(2).fit_transform(both[idx_te])
points = ax.scatter(*Z.T, c=y[idx_te], cmap="tab10", s=8)
fig.colorbar(points, ax=ax, label="digit (not used for training)")
ax.set_title("CoMM embedding of (left half, right half)")
plt.show()
