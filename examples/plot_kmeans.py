"""
Consistent k-means — Cluster a stream of locations without reshuffling the centres
==================================================================================

A service that places k depots (or k cache servers, or k moderators) as requests arrive
wants good clusters *and* few changes: every moved centre costs something.
:class:`iclr25.kmeans.ConsistentKMeans` is online k-means with nearly optimal consistency
(ICLR 2025): its cost stays within a constant factor of the offline optimum while the total
number of centre changes grows only logarithmically with the stream.

Here the stream is a CSV log of 3,000 pickup locations whose busy areas appear over time
(scikit-learn's ``make_blobs``, sorted so that new areas show up late), read in batches of 100.
We compare with re-running scikit-learn's ``KMeans`` on everything seen so far after each
batch.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from iclr25 import kmeans

X, blob = make_blobs(3000, centers=8, cluster_std=1.2, random_state=0)
order = np.argsort(blob + np.random.default_rng(0).uniform(0, 5, len(blob)), kind="stable")
path = Path(tempfile.mkdtemp()) / "pickups.csv"
np.savetxt(path, X[order], delimiter=",", header="x,y", comments="")

stream = np.loadtxt(path, delimiter=",", skiprows=1)
online = kmeans.ConsistentKMeans(8, seed=0)
changes, refit_changes, ratio = [], [], []
previous = None
for t in range(100, len(stream) + 1, 100):
    online.partial_fit(stream[t - 100:t])
    refit = KMeans(8, n_init=3, random_state=0).fit(stream[:t]).cluster_centers_
    if previous is not None:  # a refit centre with no old centre within 0.1 is a change
        gap = np.linalg.norm(refit[:, None] - previous[None], axis=2).min(1)
        refit_changes.append(refit_changes[-1] + int((gap > 0.1).sum()))
    else:
        refit_changes.append(len(refit))
    previous = refit
    changes.append(online.n_center_changes_)
    ratio.append(online.cost_ / kmeans.clustering_cost(stream[:t], refit))
print(f"centre changes: consistent {changes[-1]}, refitting KMeans {refit_changes[-1]}; "
      f"final cost / KMeans cost {ratio[-1]:.3f}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
seen = np.arange(100, len(stream) + 1, 100)
axes[0].plot(seen, changes, label="ConsistentKMeans")
axes[0].plot(seen, refit_changes, label="KMeans refit on the prefix")
axes[0].set_xlabel("points seen")
axes[0].set_ylabel("centre changes so far")
axes[0].legend()
axes[1].scatter(*stream.T, s=2, c=online.labels_, cmap="tab10")
axes[1].scatter(*np.asarray(online.cluster_centers_).T, marker="x", c="k", s=60)
axes[1].set_title(f"final centres (cost {ratio[-1]:.2f} × KMeans)")
fig.tight_layout()
plt.show()
