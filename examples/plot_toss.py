"""
ToSS — Predict where a robot arm ends up, and how uncertain that is
===================================================================

Heteroscedastic regression predicts a target's mean and its input-dependent covariance
Σ(x). :class:`iclr25.toss.HeteroscedasticRegressor` trains an MLP with ToSS (ICLR 2025): the
2-Wasserstein bound between Gaussians, supervised by neighbourhood pseudo-labels of the
covariance, so no covariance label is needed.

Here the data are what a robot logs: the two joint angles of a planar arm (links 1.0 and
0.7 m) and the measured position of its hand, with joint encoders that jitter by 0.05 rad. The
hand's noise is then Σ(x) = J(x) Σ_q J(x)ᵀ, elongated in a direction that turns with the
arm. We fit ToSS and the Gaussian NLL on the same data and compare their covariance error.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.patches import Ellipse

from iclr25 import toss

g = torch.Generator().manual_seed(0)
n, l1, l2, jitter = 3000, 1.0, 0.7, 0.05


def hand(q):
    return torch.stack([l1 * torch.cos(q[:, 0]) + l2 * torch.cos(q[:, 0] + q[:, 1]),
                        l1 * torch.sin(q[:, 0]) + l2 * torch.sin(q[:, 0] + q[:, 1])], 1)


q = torch.rand(n, 2, generator=g, dtype=torch.float64) * torch.tensor([np.pi / 2, 2.0]) + 0.3
Y = hand(q + jitter * torch.randn(n, 2, generator=g, dtype=torch.float64))
J = torch.func.vmap(torch.func.jacrev(lambda x: hand(x[None])[0]))(q)   # (n, 2, 2)
cov_true = jitter**2 * J @ J.mT

# The hand's mean position curves within a neighbourhood of joint angles, so the
# pseudo-labels subtract a local linear fit rather than the neighbours' mean.
models = {loss: toss.HeteroscedasticRegressor(loss=loss, epochs=30, batch_size=64,
                                              n_neighbors=64, center="local_linear",
                                              seed=0).fit(q, Y)
          for loss in ("toss", "nll")}
for loss, m in models.items():
    print(f"{loss}: covariance error {toss.cov_error(m.predict_cov(q), cov_true):.3f}")

# %%
# One-standard-deviation ellipses of the hand's position at a few arm configurations.
fig, ax = plt.subplots(figsize=(6, 5))
ax.scatter(*Y[:600].T, s=2, c="lightgray")
test = torch.tensor([[0.4, 0.5], [0.9, 1.2], [1.4, 2.0], [0.6, 2.2], [1.8, 0.6]],
                    dtype=torch.float64)
Jt = torch.func.vmap(torch.func.jacrev(lambda x: hand(x[None])[0]))(test)
covs = {"truth": jitter**2 * Jt @ Jt.mT, **{k: m.predict_cov(test) for k, m in models.items()}}
mean = models["toss"].predict(test)
for (name, cov), colour in zip(covs.items(), ("k", "C0", "C1"), strict=True):
    for mu, S in zip(mean, cov, strict=True):
        w, v = np.linalg.eigh(S.numpy())
        angle = np.degrees(np.arctan2(v[1, 1], v[0, 1]))
        ax.add_patch(Ellipse(mu.numpy(), *(2 * 3 * np.sqrt(w[::-1])), angle=angle,
                             fill=False, color=colour, lw=1.5))
    ax.plot([], [], color=colour, label=name)
ax.set_aspect("equal")
ax.set_title("hand position: 3-sigma ellipses")
ax.legend()
plt.show()
