"""CRH fixture: hand-solved cases (the paper has no official code).

The alignment score is the Pearson correlation of matrix entries (paper Sec. 5); the PAH
exponent is the least-squares slope of log Rayleigh quotients on log eigenvalues (Sec. 4).
Both are computed here in exact rational arithmetic (``fractions.Fraction``; one final
square root), independently of iclr25, on matrices small enough to check by hand:

- A = [[2, 1, 0], [1, 2, 1/2], [0, 1/2, 2]], B = [[1, 0, 2], [1, 3, 1], [2, 0, 1]]
  (non-symmetric). Off-diagonal entries (row-major, both triangles): a = (1, 0, 1, 1/2, 0,
  1/2), b = (0, 2, 1, 1, 2, 0): centred a.b = -3/2, |a_c| = 1, |b_c| = 2, so alpha = -3/4.
  With the diagonal: the same computation on all nine entries.
- Z = R diag(1, 2, 4, 8) Rᵀ, A = R diag(1, 2, 16, 32) Rᵀ with R a product of two Givens
  rotations with cos 3/5, sin 4/5 (exact rationals): x = log2 (0, 1, 2, 3),
  y = log2 (0, 1, 4, 5): slope 9/5, intercept -log(2)/5, r^2 = 1 - (4/5)/17 = 81/85.
- A = 3 Z^2 with the same Z: slope 2, intercept log 3, r^2 = 1.

    python tools/fidelity/crh.py
"""

import math
from fractions import Fraction as Fr

import numpy as np
from _common import parse, save

args = parse(__doc__, official=False)


def pearson(a, b):
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True))
    den2 = sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)
    return float(num) / math.sqrt(den2)


A = [[Fr(2), Fr(1), Fr(0)], [Fr(1), Fr(2), Fr(1, 2)], [Fr(0), Fr(1, 2), Fr(2)]]
B = [[Fr(1), Fr(0), Fr(2)], [Fr(1), Fr(3), Fr(1)], [Fr(2), Fr(0), Fr(1)]]
off = [(i, j) for i in range(3) for j in range(3) if i != j]
alpha_off = pearson([A[i][j] for i, j in off], [B[i][j] for i, j in off])
assert alpha_off == -0.75
alpha_all = pearson([x for r in A for x in r], [x for r in B for x in r])


def givens(n, i, j, c, s):
    G = [[Fr(int(r == k)) for k in range(n)] for r in range(n)]
    G[i][i], G[j][j], G[i][j], G[j][i] = c, c, -s, s
    return G


def mm(X, Y):
    return [[sum(X[i][k] * Y[k][j] for k in range(len(Y))) for j in range(len(Y[0]))]
            for i in range(len(X))]


def conj(R, d):
    D = [[d[i] if i == j else Fr(0) for j in range(4)] for i in range(4)]
    return mm(mm(R, D), [list(r) for r in zip(*R, strict=True)])


R = mm(givens(4, 0, 1, Fr(3, 5), Fr(4, 5)), givens(4, 1, 3, Fr(3, 5), Fr(4, 5)))
lam = [Fr(1), Fr(2), Fr(4), Fr(8)]
out = {"A3": np.array(A, float), "B3": np.array(B, float), "alpha_offdiag": alpha_off,
       "alpha_full": alpha_all, "Z": np.array(conj(R, lam), float),
       "A_mixed": np.array(conj(R, [Fr(1), Fr(2), Fr(16), Fr(32)]), float),
       "A_power": np.array(conj(R, [3 * x ** 2 for x in lam]), float),
       "mixed_fit": [9 / 5, -math.log(2) / 5, 81 / 85], "power_fit": [2.0, math.log(3), 1.0]}
save(args.out, "crh", "hand-solved (no official code)", **out)
