"""
URLOST — Recover the layout of sensors nobody told you about
============================================================

URLOST (ICLR 2025) learns from data with no known topology: the columns could be pixels in
a scrambled order, electrodes, or genes. Its first step,
:class:`iclr25.urlost.SelfOrganizingClusters`, measures the dependence between columns, builds
a k-nearest-neighbour graph on it and cuts it by density-adjusted spectral clustering into
groups of columns that become the tokens of a masked autoencoder (:class:`iclr25.urlost.URLOST`).

Here the data are 16×16 images (scikit-learn's digits, upsampled and jittered, as a camera
that shakes) whose 256 pixel columns arrive in an unknown, shuffled order. We cluster the
columns without their positions and then put the labels back on the image grid: neighbouring
pixels should share a cluster.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.ndimage import shift, zoom
from sklearn.datasets import load_digits

from iclr25 import urlost

rng = np.random.default_rng(0)
digits = load_digits().images / 16.0
images = np.stack([shift(zoom(im, 2, order=1), rng.uniform(-2, 2, 2), order=1, mode="nearest")
                   for im in digits])
images += rng.normal(0, 0.02, images.shape)        # sensor noise: no column is constant
order = rng.permutation(256)
X = images.reshape(len(images), 256)[:, order]     # what you receive: columns shuffled

soc = urlost.SelfOrganizingClusters(n_clusters=16, n_neighbors=10, seed=0).fit(X)
labels_on_grid = np.empty(256, dtype=np.int64)
labels_on_grid[order] = soc.labels_
tokens = soc.transform(X)
print(f"{soc.n_clusters_} groups of columns; tokens per image: {tuple(tokens.shape[1:])}")

# %%
# Left: one received sample, as it arrives. Right: each column's cluster, drawn at the
# column's true position (which the clustering never saw).
fig, axes = plt.subplots(1, 2, figsize=(8, 4))
axes[0].imshow(X[0].reshape(16, 16), cmap="gray")
axes[0].set_title("a sample, columns shuffled")
axes[1].imshow(labels_on_grid.reshape(16, 16), cmap="tab20")
axes[1].set_title("clusters, put back on the grid")
for ax in axes:
    ax.set_axis_off()
plt.show()
