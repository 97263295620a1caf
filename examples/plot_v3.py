"""
V3 — Separate what is written from how it is written, without labels
====================================================================

V3 (ICLR 2025) disentangles content from style in sequences of observations by a statistical
insight: content varies *within* a sequence and repeats across sequences, while style stays
fixed within a sequence and varies across them. :class:`iclr25.v3.V3` trains an autoencoder
whose content passes through a discrete codebook, with V3's variance/invariance hinges on the
latents; :meth:`~iclr25.v3.V3.reconstruct` can then swap one sequence's style onto another's
content.

Here each sequence is a row of 10 handwritten digits (scikit-learn's 8×8 digits) written in
one ink colour, the style; nobody labels either. We fit V3, check how well its 10 codes name
the digits against k-means on the raw pixels, and swap inks.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.datasets import load_digits

from iclr25 import v3

rng = np.random.default_rng(0)
digits = load_digits()
by_digit = [np.flatnonzero(digits.target == d) for d in range(10)]
n_seq = 600
content = np.stack([rng.permutation(10) for _ in range(n_seq)])          # (B, N) digits
picks = np.vectorize(lambda d: rng.choice(by_digit[d]))(content)
ink = rng.uniform(0.2, 1.0, size=(n_seq, 3))                                 # (B, 3) style
images = digits.images[picks] / 16.0                                         # (B, N, 8, 8)
X = torch.tensor(ink[:, None, :, None, None] * images[:, :, None], dtype=torch.float32)
print("sequences:", tuple(X.shape), "(sequence, position, RGB, 8, 8)")

model = v3.V3(n_codes=10, epochs=40, batch_size=32, seed=0).fit(X)
codes = model.predict(X)
print(f"codes as digit names (one-to-one): V3 {v3.codebook_accuracy(codes, content):.3f}, "
      f"k-means on pixels {v3.codebook_accuracy(v3.kmeans_codes(X, 10), content):.3f}")

# %%
# At this small budget the codes name the digits worse than k-means on the raw pixels; the
# reproduction's ``v3.codebook_accuracy`` claim does not hold at full scale either (see the
# method page). The style path works: the ink comes from the sequence's style vector.
#
# Top: two sequences. Bottom: each decoded with the other's style (its ink).
swapped = model.reconstruct(X[:2], style_from=X[[1, 0]]).clamp(0, 1)
fig, axes = plt.subplots(4, 10, figsize=(9, 4))
for row, seqs in enumerate((X[0], X[1], swapped[0], swapped[1])):
    for j in range(10):
        axes[row, j].imshow(seqs[j].permute(1, 2, 0).numpy())
        axes[row, j].set_axis_off()
axes[0, 0].set_title("inputs", loc="left")
axes[2, 0].set_title("content of each, style of the other", loc="left")
plt.show()
