"""ToSS pseudo-label fixture: Algorithm 1 ("Covariance Pseudo-Label") of the paper, transcribed
line by line as a dense brute-force loop (ToSS's own repository, vita-epfl/ToSS, cannot be had
here: no snapshot and nothing indexed; the algorithm box is an image in the paper, also on the
authors' project page: meghshukla/meghshukla.github.io @ 3b1fe9bd,
``files/images/toss/pseudolabel.png``).

Algorithm 1, for each observation x of 𝒳 (its own row included):
    Σ = Cov(𝒳);  d = (𝒳 − x) Σ⁻¹ (𝒳 − x)ᵀ          (one squared distance per sample)
    dist, idx = bottom-k(d, k)                        (x itself is among them, at d = 0)
    w = softmax(−dist)   [printed "softmax(dist)"; its text and Figure 3 weigh closer
                          neighbours more, hence the minus sign]
    μ̃ = Σ_j w_j y_idx[j];  Σ̃ = Σ_j w_j (y_idx[j] − μ̃)(y_idx[j] − μ̃)ᵀ
Here everything is dense: every pairwise distance through an explicit inverse of torch.cov,
``torch.topk`` and ``torch.softmax`` (iclr25 whitens by a Cholesky factor and searches with
sklearn). Inputs (float64, seed 0): 120 points X ~ N(0, A Aᵀ) in 3-D (A ~ N(0, 1)),
Y = (X₀, X₁ − X₂) + |X₀| ε, ε ~ N(0, I₂); k = 16. Stored: X, Y, k and Σ̃ (120, 2, 2); also
Σ̃ with x left out of its own neighbours (k + 1 nearest, x dropped), the former iclr25 default.

    python tools/fidelity/toss_pseudo.py
"""

import torch
from _common import parse, save


def algorithm_1(X: torch.Tensor, Y: torch.Tensor, k: int, leave_out: bool = False):
    inv = torch.linalg.inv(torch.cov(X.T))
    out = []
    for i in range(len(X)):
        diff = X - X[i]
        d = ((diff @ inv) * diff).sum(1)
        if leave_out:
            d[i] = float("inf")
        dist, idx = torch.topk(d, k, largest=False)
        w = torch.softmax(-dist, 0)
        mu = (w[:, None] * Y[idx]).sum(0)
        r = Y[idx] - mu
        out.append((w[:, None, None] * r[:, :, None] * r[:, None, :]).sum(0))
    return torch.stack(out)


args = parse(__doc__, official=False)
g = torch.Generator().manual_seed(0)
f64 = torch.float64
A = torch.randn(3, 3, generator=g, dtype=f64)
X = torch.randn(120, 3, generator=g, dtype=f64) @ A.T
Y = torch.stack([X[:, 0], X[:, 1] - X[:, 2]], 1) + X[:, :1].abs() * torch.randn(
    120, 2, generator=g, dtype=f64)
save(args.out, "toss_pseudo", "paper algorithm 1 (transcribed; ToSS's repository cannot be "
     "had here)", X=X, Y=Y, k=16, cov=algorithm_1(X, Y, 16),
     cov_leave_out=algorithm_1(X, Y, 16, leave_out=True))
