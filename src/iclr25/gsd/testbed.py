"""GSD's testbed: the LaneReach environment, its PD expert and demonstrations, an LQR expert.

- ``iclr25/LaneReach-v0``: a point mass that must reach ``x >= 1`` while keeping a lane
  ``y``; :class:`LaneReachVec` is the torch-batched version (any device), :class:`LaneReachEnv`
  the registered plain ``gymnasium.Env``. Behaviour factor ``info["factor"]`` = mean ``y``
  over the last 20 steps. :func:`make_vec` gives the torch-batched version of an env id.
- :func:`lane_expert` (PD controller) and :func:`lane_demos` (seeded demonstrations).
- :func:`inverted_pendulum_lqr`: an LQR expert holding ``InvertedPendulum-v5`` at a target
  cart position (the GSD paper's pendulum domain).

Needs the ``rl`` extra (gymnasium; mujoco for the LQR expert).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from iclr25._checks import as_tensor, check_int, check_range, resolve_seed
from iclr25._optional import require
from iclr25.datasets.control import OfflineDataset, Policy, rollout

gym = require("gymnasium", "rl")

__all__ = [
    "LANE_REACH_ID",
    "LaneReachEnv",
    "LaneReachVec",
    "inverted_pendulum_lqr",
    "lane_demos",
    "lane_expert",
    "make_vec",
]

# --- LaneReach -------------------------------------------------------------------------------

LANE_REACH_ID = "iclr25/LaneReach-v0"
_DT, _HORIZON, _FACTOR_STEPS = 0.1, 40, 20


class LaneReachVec:
    """``num_envs`` LaneReach point masses stepped together as tensors (any device).

    State (x, y, vx, vy), action = acceleration in [-1, 1]^2 (clipped), explicit Euler with
    dt 0.1: ``p' = p + dt v``, ``v' = v + dt a``. Reward +1 per step once ``x' >= 1``. Every
    episode lasts exactly 40 steps (truncated, never terminated), so all envs finish together
    and the caller resets. At the last step ``info`` holds ``"factor"`` (mean y over the last
    20 steps, (num_envs,)) and ``"success"`` (x >= 1, bool). The returned ``terminated`` and
    ``truncated`` flags are shared between steps: read them, do not write them.

    Start state: x = 0, y ~ U(-0.1, 0.1), v = 0 (drawn from the ``reset`` seed).
    """

    obs_dim, act_dim, horizon = 4, 2, _HORIZON

    def __init__(self, num_envs: int, *, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float32) -> None:
        self.num_envs = check_int(num_envs, "num_envs", 1)
        self.device = torch.device(device or "cpu")
        self.dtype = dtype
        self.state = torch.zeros(self.num_envs, 4, device=self.device, dtype=dtype)
        self.t = 0
        self._ysum = torch.zeros(self.num_envs, device=self.device, dtype=dtype)
        # the done flags are constant (never terminated; truncated at the horizon): made once
        # and returned every step, read-only (at 10^3 envs each op of a step costs as much as
        # its arithmetic)
        self._false = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        self._true = torch.ones_like(self._false)

    def reset(self, *, seed: int | torch.Generator | None = None) -> torch.Tensor:
        gen = resolve_seed(seed)
        y0 = torch.rand(self.num_envs, generator=gen) * 0.2 - 0.1
        self.state = torch.zeros(self.num_envs, 4, device=self.device, dtype=self.dtype)
        self.state[:, 1] = y0.to(self.device, self.dtype)
        self.t = 0
        self._ysum.zero_()
        return self.state.clone()

    def step(self, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                  torch.Tensor, dict[str, torch.Tensor]]:
        """Advance all envs; returns ``(obs, reward, terminated, truncated, info)``."""
        if self.t >= self.horizon:
            raise RuntimeError("episode is over: call reset()")
        if action.device != self.device or action.dtype != self.dtype:
            action = action.to(self.device, self.dtype)
        # p' = p + dt v and v' = v + dt a as one product and one sum (the same roundings as
        # two of each): at 10^3 envs a step costs microseconds per op, so fewer ops is faster
        rate = torch.cat([self.state[:, 2:], action.clamp(-1.0, 1.0)], dim=1).mul_(_DT)
        self.state = self.state + rate
        self.t += 1
        if self.t > self.horizon - _FACTOR_STEPS:
            self._ysum += self.state[:, 1]
        reward = (self.state[:, 0] >= 1.0).to(self.dtype)
        truncated = self._true if self.t == self.horizon else self._false
        info: dict[str, torch.Tensor] = {}
        if self.t == self.horizon:
            info["factor"] = self._ysum / _FACTOR_STEPS
            info["success"] = self.state[:, 0] >= 1.0
        return self.state.clone(), reward, self._false, truncated, info


class LaneReachEnv(gym.Env):
    """LaneReach as a plain single ``gymnasium.Env`` (numpy), registered as
    ``iclr25/LaneReach-v0``; same dynamics as :class:`LaneReachVec`."""

    metadata = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.state = np.zeros(4, np.float32)
        self.t = 0
        self._ysum = 0.0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.state = np.zeros(4, np.float32)
        self.state[1] = self.np_random.uniform(-0.1, 0.1)
        self.t, self._ysum = 0, 0.0
        return self.state.copy(), {}

    def step(self, action):
        a = np.clip(np.asarray(action, np.float32), -1.0, 1.0)
        pos, vel = self.state[:2], self.state[2:]
        self.state = np.concatenate([pos + _DT * vel, vel + _DT * a]).astype(np.float32)
        self.t += 1
        if self.t > _HORIZON - _FACTOR_STEPS:
            self._ysum += float(self.state[1])
        reward = float(self.state[0] >= 1.0)
        truncated = self.t == _HORIZON
        info = {}
        if truncated:
            info = {"factor": self._ysum / _FACTOR_STEPS, "success": bool(self.state[0] >= 1.0)}
        return self.state.copy(), reward, False, truncated, info


if LANE_REACH_ID not in gym.registry:
    gym.register(id=LANE_REACH_ID, entry_point=LaneReachEnv)

_BATCHED: dict[str, type] = {LANE_REACH_ID: LaneReachVec}


def make_vec(env_id: str, num_envs: int, *, device: torch.device | str | None = None
             ) -> LaneReachVec:
    """The torch-batched version of a registered env (``iclr25/LaneReach-v0``).

    Raises:
        ValueError: an env id with no batched version (named).
    """
    if env_id not in _BATCHED:
        raise ValueError(f"env_id must be one of {', '.join(map(repr, _BATCHED))} (the envs "
                         f"with a torch-batched version), got {env_id!r}")
    return _BATCHED[env_id](num_envs, device=device)


# --- experts and demonstrations --------------------------------------------------------------

def lane_expert(lane: float | torch.Tensor, noise: float = 0.0, *,
                seed: int | torch.Generator | None = None) -> Policy:
    """A PD expert for LaneReach that keeps lane ``y = lane`` and cruises to ``x >= 1``.

    ``a_x = 2 (0.6 - vx)``, ``a_y = 4 (lane - y) - 3 vy``, plus N(0, noise²) action noise,
    clipped to [-1, 1]. ``lane`` is a float or one value per env ((n,) tensor).

    Returns:
        ``policy(obs (n, 4)) -> actions (n, 2)``, drawing its noise from ``seed``.

    Examples:
        >>> env = LaneReachVec(3)
        >>> data = rollout(env, lane_expert(torch.tensor([-0.5, 0.0, 0.5])), 3, seed=0)
        >>> [round(f, 1) + 0.0 for f in data.episode_factors.tolist()]
        [-0.5, 0.0, 0.5]
    """
    lane_t = as_tensor(lane, "lane", ndim=(0, 1), dtype=torch.float32)
    noise = check_range(noise, "noise", 0.0)
    gen = resolve_seed(seed)

    def policy(obs: torch.Tensor) -> torch.Tensor:
        x = obs.to(torch.float32)
        target = lane_t.to(x.device)
        a = torch.stack([2.0 * (0.6 - x[:, 2]), 4.0 * (target - x[:, 1]) - 3.0 * x[:, 3]], 1)
        if noise > 0:
            a = a + noise * torch.randn(a.shape, generator=gen).to(a.device)
        return a.clamp(-1.0, 1.0).to(obs.dtype)

    return policy


def lane_demos(lanes: Sequence[float], n_per_lane: int, *, noise: float = 0.1,
               seed: int | torch.Generator | None = 0,
               device: torch.device | str | None = None) -> OfflineDataset:
    """Seeded LaneReach demonstrations: ``n_per_lane`` noisy PD-expert episodes per lane.

    Returns:
        :class:`OfflineDataset` of ``len(lanes) * n_per_lane`` 40-step episodes (lanes in
        order), with ``episode_factors`` = measured factor (mean y over the last 20 steps).

    Raises:
        ValueError: empty or non-finite ``lanes``, ``n_per_lane < 1``, ``noise < 0``.
    """
    lanes_t = as_tensor(lanes, "lanes", ndim=1, dtype=torch.float32)
    n = check_int(n_per_lane, "n_per_lane", 1)
    noise = check_range(noise, "noise", 0.0)
    gen = resolve_seed(seed)
    per_env = lanes_t.repeat_interleave(n)
    env = LaneReachVec(len(per_env), device=device)
    return rollout(env, lane_expert(per_env, noise, seed=gen), len(per_env), seed=gen)


# --- InvertedPendulum-v5 LQR expert ----------------------------------------------------------

def inverted_pendulum_lqr(target_position: float = 0.0, *, q: Sequence[float] = (1, 10, 1, 1),
                          r: float = 0.1) -> Policy:
    """An LQR controller that balances ``InvertedPendulum-v5`` with the cart at a target.

    Linearises one env step (``frame_skip`` MuJoCo steps with the model's RK4 integrator) at
    (cart = target, pole upright, at rest) by central differences of ``mujoco.mj_step``
    (``mujoco.mjd_transitionFD`` refuses RK4), solves the discrete Riccati
    equation (``scipy.linalg.solve_discrete_are``) and returns ``u = -K (x - x*)`` clipped to
    the env's [-3, 3]. Observation order (cart pos, pole angle, cart vel, pole vel).

    Raises:
        ValueError: ``target_position`` outside [-0.9, 0.9] (the rail is [-1, 1]).
    """
    target = check_range(target_position, "target_position", -0.9, 0.9)
    mujoco = require("mujoco", "rl")
    from scipy.linalg import solve_discrete_are

    env = gym.make("InvertedPendulum-v5").unwrapped
    model, frame_skip = env.model, env.frame_skip
    data = mujoco.MjData(model)
    nx, eps = 2 * model.nv, 1e-5

    def step(x: np.ndarray, u: float) -> np.ndarray:
        # one env step (frame_skip MuJoCo steps, the model's own RK4 integrator)
        mujoco.mj_resetData(model, data)
        data.qpos[:], data.qvel[:], data.ctrl[:] = x[:model.nq], x[model.nq:], u
        for _ in range(frame_skip):
            mujoco.mj_step(model, data)
        return np.concatenate([data.qpos, data.qvel])

    x0 = np.array([target, 0.0, 0.0, 0.0])
    # central differences of the env step; mjd_transitionFD refuses the RK4 integrator
    A = np.stack([(step(x0 + eps * e, 0.0) - step(x0 - eps * e, 0.0)) / (2 * eps)
                  for e in np.eye(nx)], axis=1)
    B = ((step(x0, eps) - step(x0, -eps)) / (2 * eps))[:, None]
    Ak, Bk = A, B
    env.close()
    P = solve_discrete_are(Ak, Bk, np.diag(q), np.array([[r]]))
    K = np.linalg.solve(r + Bk.T @ P @ Bk, Bk.T @ P @ Ak)
    K_t = torch.as_tensor(K, dtype=torch.float32)
    x_star = torch.tensor([target, 0.0, 0.0, 0.0])

    def policy(obs: torch.Tensor) -> torch.Tensor:
        x = obs.to(torch.float32) - x_star.to(obs.device)
        return (-(x @ K_t.to(obs.device).T)).clamp(-3.0, 3.0).to(obs.dtype)

    return policy
