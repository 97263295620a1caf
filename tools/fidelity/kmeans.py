"""Online k-means fixture: a hand-traced stream (the paper has no official code).

k = 2, eps = 0.5, z = 2, the offline solver is the exact 1-D 2-means (best split of the
sorted prefix, centres the means); stream 0, 10, 1, 11, 0.5, 30. Traced by hand with the
rule of ``ConsistentKMeans`` (re-solve when cost > (1 + eps) ref; best single swaps towards
S' until cost <= (1 + eps/2) min(cost(S'), cost); replace if still > (1 + eps) cost(S')):

- t=1, 2: 0 and 10 open slots 0 and 1 (cost 0, ref 0).
- t=3 (x=1): cost 1 > 1.5 * 0: S' = {0.5, 10} (cost 0.5), goal 1.25 * 0.5 = 0.625; the best
  swap, slot 0: 0 -> 0.5, gives 0.5 <= 0.625. ref = 0.5.
- t=4 (x=11): cost 0.5 + 1 = 1.5 > 0.75: S' = {0.5, 10.5} (cost 1), goal 1.25; slot 1:
  10 -> 10.5 gives 1. ref = 1.
- t=5 (x=0.5): cost 1 + 0 = 1 <= 1.5, nothing.
- t=6 (x=30): cost 1 + 380.25 > 1.5: S' = {4.5, 30} (split {0, .5, 1, 10, 11 | 30}, cost
  121), goal 151.25; swap costs from {0.5, 10.5}: slot 0 -> 4.5: 429.25, slot 0 -> 30: 301,
  slot 1 -> 4.5: 723.25, slot 1 -> 30: 201 (best, > goal); then from {0.5, 30}: slot 0 ->
  4.5: 121 <= 151.25. 121 <= 1.5 * 121: no replacement.

Result: log (1, 0, open), (2, 1, open), (3, 0, swap), (4, 1, swap), (6, 1, swap),
(6, 0, swap); centres (4.5, 30); cost 121; 3 offline calls; labels 0 0 0 0 0 1.

    python tools/fidelity/kmeans.py
"""

import numpy as np
from _common import parse, save

args = parse(__doc__, official=False)
save(args.out, "kmeans", "hand-traced (no official code)",
     X=np.array([0, 10, 1, 11, 0.5, 30.0])[:, None], eps=0.5,
     log_t=[1, 2, 3, 4, 6, 6], log_slot=[0, 1, 0, 1, 1, 0],
     log_kind=["open", "open", "swap", "swap", "swap", "swap"],
     centers=[[4.5], [30.0]], cost=121.0, n_reclusterings=3, labels=[0, 0, 0, 0, 0, 1])
