"""
GSD — Discover new, useful behaviours from a few styles of demonstration
========================================================================

Guided Strategy Discovery (GSD, ICLR 2025) learns a latent-conditioned policy π(a | s, z)
from demonstrations of several styles, and rewards the policy for diverse behaviour *along
the factors the demonstrations vary in*, so that new codes z give new, successful
behaviours (an unseen lane, an unseen swing). :func:`iclr25.gsd.train` trains it with PPO on
any continuous-control environment; :func:`iclr25.gsd.evaluate` rolls out codes drawn from
the prior and measures how close the discovered behaviours come to held-out targets.

Here the demonstrations are a D4RL-layout HDF5 file (``observations``, ``actions``,
``rewards``, ``terminals``, ``timeouts``), as offline-RL data usually comes: 2-D
point-mass drivers on ``iclr25/LaneReach-v0`` who settle in the lane at height −0.8 or +0.8.
We ask for lanes nobody demonstrated: −0.4, 0 and +0.4.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from iclr25 import gsd
from iclr25.datasets.control import OfflineDataset
from iclr25.gsd.testbed import lane_demos

path = Path(tempfile.mkdtemp()) / "drivers.hdf5"
lane_demos([-0.8, 0.8], 8, seed=0).save(path)

demos = OfflineDataset.load(path)
print(f"{demos.n_episodes} episodes, {len(demos)} transitions, obs {demos.obs_dim}-d, "
      f"actions {demos.act_dim}-d")
config = gsd.GSDConfig(num_envs=64, iterations=120)
result = gsd.train("iclr25/LaneReach-v0", demos, config, seed=0)

# %%
# 200 codes from the prior, one episode each: where does each behaviour end up?
targets = [-0.4, 0.0, 0.4]
ev = gsd.evaluate(result.policy, "iclr25/LaneReach-v0", targets=targets, n_codes=200, seed=1)
print(f"VL_10 (mean distance of the best of 10 behaviours to each target): {ev.vl[10]:.3f}; "
      f"success of the selected behaviours {ev.selected_success:.2f}")
fig, ax = plt.subplots(figsize=(6.5, 3.5))
ax.hist(ev.factors.numpy(), bins=40, range=(-1.2, 1.2), color="C0",
        label="behaviours from the prior")
for i, lane in enumerate((-0.8, 0.8)):
    ax.axvline(lane, color="k", lw=2, label="demonstrated lanes" if i == 0 else None)
for i, t in enumerate(targets):
    ax.axvline(t, color="C3", ls="--", label="held-out targets" if i == 0 else None)
ax.set_xlabel("final lane height of the episode")
ax.set_ylabel("codes")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
