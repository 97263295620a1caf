"""LSDT's testbed: the DelayedCue memory task and Pendulum-v1 data of D4RL-style quality tiers.

- ``iclr25/DelayedCue-v0`` (:class:`DelayedCueEnv`): observation (cue or 0, t/T); the cue
  c = ±1 is shown only at t = 0; reward 1 at the last step iff sign(a) = c, so the decision
  needs the first observation. :func:`delayed_cue_dataset`: a_t = 0 until the end, then half
  the episodes act right (return 1), half wrong (return 0).
- :func:`pendulum_dataset`: quality tiers of the scripted swing-up expert
  (:func:`~iclr25.datasets.control.pendulum_swingup`); :func:`normalized_score`.

Needs the ``rl`` extra (gymnasium).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch

from iclr25._checks import as_tensor, check_choice, check_int, resolve_seed
from iclr25._contract import FloatArray, checked
from iclr25._optional import require
from iclr25.datasets.control import _KEYS, OfflineDataset, _rollout_lockstep, pendulum_swingup

gym = require("gymnasium", "rl")

__all__ = [
    "DELAYED_CUE_ID",
    "PENDULUM_EXPERT_RETURN",
    "PENDULUM_RANDOM_RETURN",
    "DelayedCueEnv",
    "delayed_cue_dataset",
    "normalized_score",
    "pendulum_dataset",
]

DELAYED_CUE_ID = "iclr25/DelayedCue-v0"
# reference returns of Pendulum-v1 for normalized_score: the expert figure is the for
# this controller (our 20-episode checks of the noise-0.1 tier: -150 and -183); the random
# figure is the mean of 20 uniform-torque episodes (seed 0) measured here: -1388.
PENDULUM_EXPERT_RETURN = -145.0
PENDULUM_RANDOM_RETURN = -1390.0
_Quality = Literal["expert", "medium", "random", "medium-replay"]


@checked
class DelayedCueEnv(gym.Env):
    """A cue ±1 at t = 0 only; reward 1 at t = T − 1 iff sign(action) = cue."""

    def __init__(self, horizon: int = 6) -> None:
        self.horizon = check_int(horizon, "horizon", 2)
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self._t, self._cue = 0, 1.0

    def _obs(self) -> np.ndarray:
        return np.array([self._cue if self._t == 0 else 0.0, self._t / self.horizon],
                        np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._t, self._cue = 0, float(self.np_random.choice([-1.0, 1.0]))
        return self._obs(), {"cue": self._cue}

    def step(self, action: FloatArray):
        a = float(np.asarray(action).reshape(-1)[0])
        last = self._t == self.horizon - 1
        reward = float(last and np.sign(a) == self._cue)
        self._t += 1
        return self._obs(), reward, False, last, {"cue": self._cue}


if DELAYED_CUE_ID not in gym.registry:
    gym.register(DELAYED_CUE_ID, entry_point=DelayedCueEnv)


@checked
def delayed_cue_dataset(n_episodes: int, horizon: int = 6, *,
                        seed: int | torch.Generator | None = None) -> OfflineDataset:
    """DelayedCue episodes: a = 0 until the last step, then ``cue`` (first half) or ``-cue``.

    Returns are exactly 1 for the right half and 0 for the wrong half.

    Raises:
        ValueError: ``n_episodes < 2`` or ``horizon < 2``.
    """
    n = check_int(n_episodes, "n_episodes", 2)
    T = check_int(horizon, "horizon", 2)
    g = resolve_seed(seed)
    cue = torch.randint(2, (n,), generator=g).float() * 2 - 1
    right = (torch.arange(n) < n // 2).float() * 2 - 1               # +1 right, -1 wrong
    t = torch.arange(T).float()
    obs = torch.stack([torch.zeros(n, T), (t / T).expand(n, T)], -1)
    obs[:, 0, 0] = cue
    act = torch.zeros(n, T, 1)
    act[:, -1, 0] = cue * right
    rew = torch.zeros(n, T)
    rew[:, -1] = (right > 0).float()
    timeouts = torch.zeros(n, T, dtype=torch.bool)
    timeouts[:, -1] = True
    return OfflineDataset(obs.reshape(n * T, 2), act.reshape(n * T, 1), rew.flatten(),
                          torch.zeros(n * T, dtype=torch.bool), timeouts.flatten())


@checked
def pendulum_dataset(quality: _Quality, n_episodes: int, *,
                     seed: int | torch.Generator | None = None) -> OfflineDataset:
    """Pendulum-v1 episodes (200 steps each) of one quality tier.

    ``expert``: noise 0.1; ``medium``: noise 1.0 with 30 % random torques (≈ −270 in the
    issue's pilot); ``random``: uniform torques; ``medium-replay``: half random, half medium.

    Raises:
        ValueError: unknown ``quality``, ``n_episodes < 1`` (``< 2`` for medium-replay).
    """
    quality = check_choice(quality, "quality", _Quality)
    n = check_int(n_episodes, "n_episodes", 2 if quality == "medium-replay" else 1)
    g = resolve_seed(seed)
    tiers = {"expert": (0.1, 0.0), "medium": (1.0, 0.3), "random": (0.0, 1.0)}
    if quality == "medium-replay":
        parts = [pendulum_dataset("random", n // 2, seed=g),
                 pendulum_dataset("medium", n - n // 2, seed=g)]
        return OfflineDataset(*(torch.cat([getattr(p, k) for p in parts]) for k in _KEYS))
    return _rollout_lockstep(pendulum_swingup(*tiers[quality], seed=g), n, g)


@checked
def normalized_score(returns: float | torch.Tensor, env_id: str = "Pendulum-v1") -> float:
    """(R − R_random) / (R_expert − R_random), mean over episodes (D4RL's score / 100).

    Raises:
        ValueError: an env without reference returns.
    """
    refs = {"Pendulum-v1": (PENDULUM_RANDOM_RETURN, PENDULUM_EXPERT_RETURN),
            DELAYED_CUE_ID: (0.0, 1.0)}
    env_id = check_choice(env_id, "env_id", tuple(refs))
    lo, hi = refs[env_id]
    r = as_tensor(returns, "returns", ndim=(0, 1), floating=True).double().mean()
    return float((r - lo) / (hi - lo))
