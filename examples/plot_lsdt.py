"""
LSDT — Train a long-short decision transformer on an offline D4RL-style dataset
===============================================================================

The Long-Short Decision Transformer (LSDT, ICLR 2025) splits each block of a Decision
Transformer into an attention branch, for long-range dependencies, and a dynamic-convolution
branch, for the local Markovian ones, and fuses them.
:class:`iclr25.lsdt.LongShortDecisionTransformer` is that policy; :func:`iclr25.lsdt.train`
fits it to an offline dataset CleanRL-style and :func:`iclr25.lsdt.evaluate` rolls it out
in a gymnasium environment, conditioned on a target return.

Here the dataset is a D4RL-layout HDF5 file of Pendulum-v1 swing-ups of mixed quality (half
random, half a noisy controller: ``medium-replay``), and we compare LSDT with the plain
Decision Transformer (:func:`iclr25.lsdt.decision_transformer`) trained the same way.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from iclr25 import lsdt
from iclr25.datasets.control import OfflineDataset

path = Path(tempfile.mkdtemp()) / "pendulum-medium-replay.hdf5"
lsdt.pendulum_dataset("medium-replay", 20, seed=0).save(path)
data = OfflineDataset.load(path)
print(f"{data.n_episodes} episodes; returns from {data.returns().min():.0f} "
      f"to {data.returns().max():.0f}")

size = dict(hidden=64, n_blocks=2, context=20, max_timestep=200)
models = {"LSDT": lsdt.LongShortDecisionTransformer(data.obs_dim, data.act_dim, **size),
          "Decision Transformer": lsdt.decision_transformer(data.obs_dim, data.act_dim, **size)}
curves, scores = {}, {}
for name, model in models.items():
    curves[name] = lsdt.train(model, data, steps=300, batch_size=32, lr=1e-3, warmup=30,
                              seed=0)
    result = lsdt.evaluate(model, "Pendulum-v1", target_return=-150.0, n_episodes=4, seed=0)
    scores[name] = lsdt.normalized_score(result.returns)
    print(f"{name}: mean return {result.mean_return:.0f}, normalised score {scores[name]:.2f}")

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
for name, losses in curves.items():
    smooth = np.convolve(losses, np.ones(20) / 20, mode="valid")
    ax.semilogy(smooth, label=f"{name} (score {scores[name]:.2f})")
ax.set_xlabel("training step")
ax.set_ylabel("action MSE (moving average)")
ax.legend()
plt.show()
