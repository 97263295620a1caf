"""
LoCoDL — Federated logistic regression with a compressed uplink
===============================================================

LoCoDL (ICLR 2025) trains a model across clients with two tricks at once: local steps (the
clients talk only now and then) and compression (they send a few coordinates, not the whole
vector). What it saves is uplink bits. :class:`iclr25.locodl.LoCoDLClassifier` is a
scikit-learn classifier trained that way; :func:`iclr25.locodl.locodl`,
:func:`~iclr25.locodl.gd` and :func:`~iclr25.locodl.diana` run the algorithms on a
:class:`~iclr25.locodl.ClientLogistic` objective to compare their bits.

Here the data are a LibSVM file, the format federated-optimisation benchmarks come in: the
breast-cancer set of scikit-learn, standardised and split over 10 clients (hospitals).
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.datasets import dump_svmlight_file, load_breast_cancer, load_svmlight_file
from sklearn.preprocessing import scale

from iclr25 import locodl

X, y = load_breast_cancer(return_X_y=True)
path = Path(tempfile.mkdtemp()) / "cancer.libsvm"
dump_svmlight_file(scale(X), 2 * y - 1, str(path))

X, y = load_svmlight_file(str(path))
clf = locodl.LoCoDLClassifier(alpha=1e-2, n_clients=10, seed=0).fit(X, y)
print(f"training accuracy {clf.score(X, y):.3f}; each client sent "
      f"{clf.uplink_bits_ / 8e3:.1f} kB in {clf.n_rounds_} rounds")

# %%
# The same objective, three algorithms, the error to the optimum against the bits each client
# sends. Clients: contiguous blocks of 57 rows.
Xt = torch.tensor(X.toarray())
yt = torch.tensor((y > 0).astype(np.int64))
f = locodl.ClientLogistic(Xt, yt, torch.arange(len(yt)) * 10 // len(yt), alpha=1e-2)
x_star = f.solve()
runs = {"LoCoDL (rand-3)": locodl.locodl(f, "rand-3", x_star=x_star, tol=1e-6),
        "DIANA (rand-3)": locodl.diana(f, "rand-3", x_star=x_star, tol=1e-6),
        "GD (uncompressed)": locodl.gd(f, x_star=x_star, tol=1e-6)}
fig, ax = plt.subplots(figsize=(6, 3.8))
for name, run in runs.items():
    ax.loglog(run.history[:, 1], run.history[:, 2], label=f"{name}: {run.uplink_bits:.2g} bits")
ax.set_xlabel("uplink bits per client")
ax.set_ylabel("‖x − x*‖")
ax.legend()
plt.show()
