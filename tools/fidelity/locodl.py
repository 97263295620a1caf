"""LoCoDL fixture: the paper's Algorithm 1 solved by hand on a two-client ridge problem (the
paper has no public code; its Algorithm 1 is the reference).

Problem: d = 1, client 0 holds the row (a, b) = (1, 2), client 1 holds (2, 0); alpha = 1, so
f_i(x) = (a_i x - b_i)^2 / 2 + x^2 / 4 and g(y) = y^2 / 4 (mu = 1/2 each): grad f_0 = 1.5 x - 2,
grad f_1 = 4.5 x, grad g = y / 2; L = 4.5. Algorithm 1 with gamma = 0.2, p = 1 (every step
communicates), rho = chi = 1, no compression (omega = 0), so c = p chi / (gamma (1 + 2 omega))
= 5; start x = u = y = v = 0.

- t = 1: x^ = (0.4, 0), y^ = 0; d = (0.4, 0), dbar = (1/2n) sum d = 0.1; x = y^ + dbar =
  (0.1, 0.1), u = 5 (dbar - d) = (-1.5, 0.5), y = 0.1, v = 5 dbar = 0.5.
- t = 2: x^ = (0.1 - 0.2 (0.15 - 2 + 1.5), 0.1 - 0.2 (0.45 - 0.5)) = (0.17, 0.11),
  y^ = 0.1 - 0.2 (0.05 - 0.5) = 0.19; d = (-0.02, -0.08), dbar = -0.025; x = (0.165, 0.165),
  u = (-1.525, 0.775), y = 0.165, v = 0.375.
- Fixed point: x* = (A^T A + alpha N)^-1 A^T b = 2/7, u_i = grad f_i(x*) = (-11/7, 9/7),
  v = grad g(x*) = 1/7; (1/n) sum u_i + v = 0 at every step.

    python tools/fidelity/locodl.py
"""

import numpy as np
from _common import parse, save

args = parse(__doc__, official=False)
save(args.out, "locodl", "hand-solved from the paper's Algorithm 1 (no official code)",
     A=[[1.0], [2.0]], b=[2.0, 0.0], alpha=1.0, gamma=0.2,
     X1=[0.1, 0.1], U1=[-1.5, 0.5], y1=0.1, v1=0.5,
     X2=[0.165, 0.165], U2=[-1.525, 0.775], y2=0.165, v2=0.375,
     x_star=2 / 7, U_star=[-11 / 7, 9 / 7], v_star=1 / 7, L=4.5, mu=0.5)
print(np.load(args.out / "locodl.npz")["U_star"])
