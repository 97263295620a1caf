"""ToSS W2 fixture: Theorem 1's bound and the exact Gaussian W2, solved by hand (ToSS's own
repository, vita-epfl/ToSS, cannot be had here: no snapshot and nothing indexed).

Non-commuting pair (2-D): mu_1 = (1, 0), Sigma_1 = diag(4, 1) (S_1 = diag(2, 1));
mu_2 = (0, 2), Sigma_2 = [[2.5, 1.5], [1.5, 2.5]] (eigenvalues 4, 1 along (1, 1), (1, -1);
S_2 = [[1.5, 0.5], [0.5, 1.5]]).
- bound = |mu_1 - mu_2|^2 + |S_1 - S_2|_F^2 = 5 + (0.25 + 0.25 + 0.25 + 0.25) = 6.
- exact: tr (S_2 Sigma_1 S_2)^(1/2) is the nuclear norm of S_1 S_2 = [[3, 1], [0.5, 1.5]],
  whose singular values satisfy s1^2 + s2^2 = 12.5 and s1 s2 = |det| = 4, so it is
  sqrt(12.5 + 8) = sqrt(20.5); W2^2 = 5 + 5 + 5 - 2 sqrt(20.5) = 15 - 2 sqrt(20.5) < 6.
Commuting pair: mu's equal, Sigma_1 = diag(4, 1), Sigma_2 = diag(9, 1/4): bound = exact =
(2 - 3)^2 + (1 - 1/2)^2 = 1.25.

    python tools/fidelity/toss_w2.py
"""

import math

from _common import parse, save

args = parse(__doc__, official=False)
save(args.out, "toss_w2", "hand-solved (ToSS's repository cannot be had here)",
     mu1=[1.0, 0.0], S1=[[2.0, 0.0], [0.0, 1.0]], mu2=[0.0, 2.0],
     S2=[[1.5, 0.5], [0.5, 1.5]], bound=6.0, exact=15 - 2 * math.sqrt(20.5),
     C1=[[4.0, 0.0], [0.0, 1.0]], C2=[[9.0, 0.0], [0.0, 0.25]], commuting=1.25)
