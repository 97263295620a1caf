"""
LOS — Re-train a classifier head on long-tailed data with label over-smoothing
==============================================================================

Decoupled training for long-tailed recognition learns features on the imbalanced data, then
re-trains only the classifier head. Label Over-Smoothing (LOS, ICLR 2025) re-trains it with
a heavily smoothed target, which shrinks the head classes' logit magnitudes and lifts the tail.
:class:`iclr25.los.RetrainedClassifier` is that stage-2 step as a scikit-learn estimator.

Here the "features" are scikit-learn's digits made long-tailed (imbalance ratio 20: digit 0
keeps 100 images, digit 9 keeps 5); the test set stays balanced. We re-train the head with plain
cross-entropy and with LOS and compare the per-class recall.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from iclr25 import los

X, y = load_digits(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.4, stratify=y, random_state=0)
scaler = StandardScaler().fit(X_tr)
X_tr = torch.tensor(scaler.transform(X_tr), dtype=torch.float32)
X_te = scaler.transform(X_te).astype(np.float32)
X_lt, y_lt, counts = los.make_long_tailed(X_tr, torch.tensor(y_tr), imbalance_ratio=20,
                                          n_max=100, seed=0)
print("training images per class:", counts.tolist())

recall = {}
for method in ("ce", "los"):
    clf = los.RetrainedClassifier(method, epochs=30, seed=0).fit(X_lt, y_lt)
    pred = clf.predict(X_te)
    recall[method] = los.per_class_accuracy(torch.as_tensor(pred), torch.as_tensor(y_te), 10)
    print(f"{method}: balanced accuracy {los.balanced_accuracy(pred, y_te, 10):.3f}")

# %%
# LOS gives back recall on the tail classes (right), at little cost on the head.
fig, ax = plt.subplots(figsize=(7, 3.5))
k = np.arange(10)
ax.bar(k - 0.2, recall["ce"], width=0.4, label="cross-entropy re-training")
ax.bar(k + 0.2, recall["los"], width=0.4, label="LOS re-training")
ax.set_xticks(k, [f"{d}\n({c})" for d, c in zip(k, counts.tolist(), strict=True)])
ax.set_xlabel("digit (training images)")
ax.set_ylabel("test recall")
ax.legend(loc="lower left")
plt.show()
