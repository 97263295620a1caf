"""
Db-TSW — Move a point cloud onto another with the tree-sliced Wasserstein distance
==================================================================================

:func:`iclr25.dbtsw.db_tsw` is the Distance-based Tree-Sliced Wasserstein distance (Db-TSW,
ICLR 2025) between two weighted point clouds, with POT's calling convention
(``db_tsw(X_s, X_t, a, b)``) and differentiable in the points. Like sliced Wasserstein it
costs ``O(L n log n)`` for ``L`` projections, but each "slice" is a tree of lines through a
shared root, with mass split between lines by distance.

Here a Gaussian blob flows onto scikit-learn's two moons by gradient descent on Db-TSW; we
compare it with POT's sliced Wasserstein at the same number of projections, measuring the
exact Wasserstein distance to the target (POT's ``emd2``) along the way.
"""

import matplotlib.pyplot as plt
import ot
import torch
from sklearn.datasets import make_moons

from iclr25 import dbtsw

target = torch.tensor(make_moons(400, noise=0.06, random_state=0)[0], dtype=torch.float32)
start = torch.randn(400, 2, generator=torch.Generator().manual_seed(0)) * 0.5


def flow(loss, steps=300, lr=0.02):
    x = start.clone().requires_grad_(True)
    opt = torch.optim.Adam([x], lr=lr)
    w2 = []
    for t in range(steps):
        opt.zero_grad()
        loss(x, t).backward()
        opt.step()
        if t % 30 == 29:
            w2.append(ot.emd2([], [], ot.dist(x.detach().numpy(), target.numpy())))
    return x.detach(), w2


# 25 trees of 4 lines = 100 projections, a fresh draw at every step
x_tsw, w2_tsw = flow(lambda x, t: dbtsw.db_tsw(x, target, n_trees=25, n_lines=4, p=2, seed=t))
x_sw, w2_sw = flow(lambda x, t: ot.sliced_wasserstein_distance(x, target, n_projections=100,
                                                                 seed=t))
print(f"W2^2 to the moons after 300 steps: Db-TSW {w2_tsw[-1]:.2e}, SW {w2_sw[-1]:.2e}")

# %%
# On this 2-D flow sliced Wasserstein ends closer to the target; the reproduction's
# ``dbtsw.flow_2d`` claim does not hold at full scale either (see the method page), while
# Db-TSW's gains over SW and TSW-SL in higher dimension do.
fig, axes = plt.subplots(1, 3, figsize=(10, 3.3))
for ax, pts, title in ((axes[0], x_tsw, "Db-TSW flow"), (axes[1], x_sw, "sliced W flow")):
    ax.scatter(*target.T, s=4, c="lightgray", label="target")
    ax.scatter(*pts.T, s=4, label="moved")
    ax.set_title(title)
    ax.set_aspect("equal")
steps = range(30, 301, 30)
axes[2].semilogy(steps, w2_tsw, label="Db-TSW")
axes[2].semilogy(steps, w2_sw, label="SW")
axes[2].set_xlabel("step")
axes[2].set_ylabel("exact W2² to target")
axes[2].legend()
fig.tight_layout()
plt.show()
