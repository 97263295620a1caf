"""Offline demonstration data (D4RL layout) and rollouts, generated locally.

Shared by the imitation / offline-RL methods (``gsd``, ``lsdt``). Needs the ``rl`` extra
(gymnasium; h5py for .hdf5 files); it is not imported by ``iclr25.datasets``. The environments and
data generators that serve one method live in its ``testbed.py`` (LaneReach in
``iclr25.gsd.testbed``; DelayedCue and the Pendulum quality tiers in ``iclr25.lsdt.testbed``).

What is here:

- :class:`OfflineDataset`: flat per-step arrays in the D4RL layout (``observations``,
  ``actions``, ``rewards``, ``terminals``, ``timeouts``) as tensors, validated, with
  ``episodes()``, ``returns()``, ``returns_to_go()`` and ``save``/``load`` (.npz, .hdf5).
- :func:`rollout`: run a policy in a gymnasium ``Env`` or a torch-batched env into an
  :class:`OfflineDataset`.
- :func:`env_maker` and :func:`outlasting`: the evaluation rollouts' horizon
  (``max_episode_steps``, ``--max-episode-steps``) and the warning where it outlasts the data's
  longest episode; ``lsdt`` and ``gsd`` evaluate with them.
- :func:`pendulum_swingup`: a scripted Pendulum-v1 expert (energy pumping, then PD once
  cos θ > 0.9), return ≈ −145.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr25._checks import as_tensor, check_int, check_range, resolve_seed
from iclr25._contract import NonNegative, Probability, checked
from iclr25._io import read_npz
from iclr25._optional import require

gym = require("gymnasium", "rl")

__all__ = [
    "OfflineDataset",
    "env_maker",
    "outlasting",
    "pendulum_swingup",
    "rollout",
]

Policy = Callable[[torch.Tensor], torch.Tensor]
_KEYS = ("observations", "actions", "rewards", "terminals", "timeouts")


# --- the container ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class OfflineDataset:
    """Transitions of whole episodes in the D4RL layout, rows are time steps.

    Args:
        observations: (N, obs_dim) float.
        actions: (N, act_dim) float.
        rewards: (N,) float.
        terminals: (N,) bool, True where the episode ended in a terminal state.
        timeouts: (N,) bool, True where the episode was cut by a time limit.
        episode_factors: optional (E,) float, one behaviour factor per episode (e.g. the lane
            a demonstrator kept), E = number of episodes.

    Every episode must end with a terminal or a timeout; the arrays are copied into tensors
    (float32, bool) on the device of ``observations``.

    Raises:
        ValueError: mismatched lengths, empty, NaN/inf, wrong rank, an unfinished last
            episode, or ``episode_factors`` not one per episode.
        TypeError: non-numeric arrays.
    """

    observations: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    terminals: torch.Tensor
    timeouts: torch.Tensor
    episode_factors: torch.Tensor | None = None

    def __post_init__(self) -> None:
        obs = as_tensor(self.observations, "observations", ndim=2, dtype=torch.float32)
        dev = obs.device
        # floats: an integer (discrete) action would be cast, hiding the mix-up
        act = as_tensor(self.actions, "actions", ndim=2, dtype=torch.float32, device=dev,
                        floating=True)
        rew = as_tensor(self.rewards, "rewards", ndim=1, dtype=torch.float32, device=dev)
        ter = as_tensor(self.terminals, "terminals", ndim=1, device=dev).to(torch.bool)
        tim = as_tensor(self.timeouts, "timeouts", ndim=1, device=dev).to(torch.bool)
        lengths = {"observations": len(obs), "actions": len(act), "rewards": len(rew),
                   "terminals": len(ter), "timeouts": len(tim)}
        if len(set(lengths.values())) > 1:
            desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
            raise ValueError(f"mismatched lengths: {desc}")
        if not bool(ter[-1] | tim[-1]):
            raise ValueError("terminals/timeouts: the last episode has no terminal or timeout "
                             "(every episode must end with one)")
        fac = self.episode_factors
        n_ep = int((ter | tim).sum())
        if fac is not None:
            fac = as_tensor(fac, "episode_factors", ndim=1, dtype=torch.float32, device=dev)
            if len(fac) != n_ep:
                raise ValueError(f"episode_factors must have one value per episode ({n_ep}), "
                                 f"got {len(fac)}")
        # copies, so later changes to the caller's arrays do not reach the dataset
        for name, v in zip(_KEYS, (obs, act, rew, ter, tim), strict=True):
            object.__setattr__(self, name, v.clone())
        object.__setattr__(self, "episode_factors", None if fac is None else fac.clone())

    # -- shape facts
    def __len__(self) -> int:
        return len(self.observations)

    @property
    def obs_dim(self) -> int:
        return self.observations.shape[1]

    @property
    def act_dim(self) -> int:
        return self.actions.shape[1]

    @property
    def episode_ends(self) -> torch.Tensor:
        """(E,) int64 index one past the last step of each episode."""
        return torch.nonzero(self.terminals | self.timeouts).flatten() + 1

    @property
    def n_episodes(self) -> int:
        return len(self.episode_ends)

    @property
    def longest_episode(self) -> int:
        """Steps of the longest episode: returns of longer rollouts sum more steps than any
        of the data's (issue 68 walk 9: 300-step demos of a 1000-step env)."""
        ends = self.episode_ends
        return int(torch.diff(ends, prepend=ends.new_zeros(1)).max())

    def episode_index(self) -> torch.Tensor:
        """(N,) int64 episode number of every step."""
        done = (self.terminals | self.timeouts).to(torch.int64)
        return torch.cumsum(done, 0) - done

    # -- views
    def episodes(self) -> list[dict[str, torch.Tensor]]:
        """Each episode as a dict of the five arrays (views, not copies), in order."""
        ends = self.episode_ends.tolist()
        starts = [0, *ends[:-1]]
        return [{k: getattr(self, k)[s:e] for k in _KEYS}
                for s, e in zip(starts, ends, strict=True)]

    def returns(self) -> torch.Tensor:
        """(E,) undiscounted return of each episode."""
        out = torch.zeros(self.n_episodes, dtype=self.rewards.dtype, device=self.rewards.device)
        return out.index_add_(0, self.episode_index(), self.rewards)

    def returns_to_go(self, scale: float = 1.0) -> torch.Tensor:
        """(N,) reward still to come in the episode at each step (``R̂_t``), divided by ``scale``.

        Raises:
            ValueError: ``scale`` not positive and finite.
        """
        scale = check_range(scale, "scale", 0.0, low_open=True)
        ep = self.episode_index()
        total = torch.cumsum(self.rewards, 0)
        before = total - self.rewards            # reward collected before step t overall
        start = torch.zeros_like(self.returns())
        ends = self.episode_ends
        start[1:] = total[ends[:-1] - 1]         # reward collected before each episode began
        return (self.returns()[ep] - (before - start[ep])) / scale

    # -- files
    def save(self, path: str | Path) -> Path:
        """Write ``.npz`` (numpy) or ``.hdf5``/``.h5`` (h5py, D4RL's format); return the path.

        Raises:
            ValueError: another suffix.
        """
        path = Path(path)
        arrays = {k: getattr(self, k).cpu().numpy() for k in _KEYS}
        if self.episode_factors is not None:
            arrays["episode_factors"] = self.episode_factors.cpu().numpy()
        if path.suffix == ".npz":
            np.savez_compressed(path, **arrays)
        elif path.suffix in (".hdf5", ".h5"):
            h5py = require("h5py", "rl")
            with h5py.File(path, "w") as f:
                for k, v in arrays.items():
                    f.create_dataset(k, data=v, compression="gzip")
        else:
            raise ValueError(f"path must end in .npz, .hdf5 or .h5, got {path.name!r}")
        return path

    @classmethod
    def load(cls, path: str | Path, *, device: torch.device | str | None = None
             ) -> OfflineDataset:
        """Read a file written by :meth:`save` (or any D4RL-layout .npz/.hdf5), or a Minari
        dataset folder (``<dataset id>/`` or its ``data/``, HDF5 or Arrow storage, read with
        ``minari``): its episodes become the D4RL layout (each episode's final observation
        dropped; ``terminations`` -> ``terminals``, ``truncations`` -> ``timeouts``). The
        steps are held in memory, as the trainers draw windows from every episode.

        Raises:
            ValueError: missing file, unknown suffix, unreadable file or missing keys (named);
                a folder that is not a Minari dataset, or one with dict/tuple spaces.
        """
        path = Path(path)
        if path.is_dir():
            data = _read_minari(path)
        elif not path.is_file():
            raise ValueError(f"path {str(path)!r} does not exist")
        elif path.suffix not in (".npz", ".hdf5", ".h5"):
            raise ValueError(f"path must be a .npz, .hdf5 or .h5 file (D4RL layout) or a "
                             f"Minari dataset folder, got {path.name!r}")
        elif path.suffix == ".npz":
            data = read_npz(path, "path", _KEYS, ("episode_factors",))
        else:
            h5py = require("h5py", "rl")
            try:
                with h5py.File(path, "r") as f:
                    data = {k: f[k][()] for k in f.keys() if isinstance(f[k], h5py.Dataset)}
            except (OSError, EOFError, KeyError, ValueError, zlib.error) as exc:
                raise ValueError(f"path {str(path)!r} is not a readable dataset file ({exc})"
                                 ) from None
            missing = [k for k in _KEYS if k not in data]
            if missing:
                raise ValueError(f"path {str(path)!r} is missing key(s): {', '.join(missing)}")
        t = {k: torch.as_tensor(np.asarray(data[k]), device=device) for k in data}
        return cls(*(t[k] for k in _KEYS), episode_factors=t.get("episode_factors"))


def _read_minari(path: Path) -> dict[str, np.ndarray]:
    """The D4RL-layout arrays of a Minari dataset folder, read episode by episode."""
    data = path / "data" if (path / "data" / "metadata.json").is_file() else path
    if not (data / "metadata.json").is_file():
        raise ValueError(f"path {str(path)!r} is a folder but not a Minari dataset (no "
                         f"data/metadata.json); give a .npz, .hdf5 or .h5 file (D4RL layout) "
                         f"or a Minari dataset folder")
    require("minari", "rl")
    from minari.dataset.minari_dataset import MinariDataset

    try:
        episodes = list(MinariDataset(data).iterate_episodes())
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"path {str(path)!r} is not a readable Minari dataset ({exc})"
                         ) from None
    parts: dict[str, list] = {k: [] for k in _KEYS}
    for ep in episodes:
        if not (isinstance(ep.observations, np.ndarray) and isinstance(ep.actions, np.ndarray)):
            raise ValueError(f"path {str(path)!r}: dict or tuple observation/action spaces "
                             f"are not read here (flatten them to Box spaces)")
        parts["observations"].append(ep.observations[:-1])
        parts["actions"].append(ep.actions)
        parts["rewards"].append(ep.rewards)
        parts["terminals"].append(ep.terminations)
        parts["timeouts"].append(ep.truncations)
    if not episodes:
        raise ValueError(f"path {str(path)!r}: the Minari dataset holds no episodes")
    return {k: np.concatenate(v) for k, v in parts.items()}


# --- rollouts --------------------------------------------------------------------------------

def rollout(env, policy: Policy, n_episodes: int, *,
            seed: int | torch.Generator | None = None) -> OfflineDataset:
    """Run ``policy`` for ``n_episodes`` episodes and collect them as an :class:`OfflineDataset`.

    Args:
        env: a gymnasium ``Env`` (episodes run one after another, numpy in/out) or a
            torch-batched env such as :class:`~iclr25.gsd.testbed.LaneReachVec` (any object
            with ``num_envs``, ``horizon`` and tensor ``reset(seed=)``/``step``; ``num_envs``
            episodes per batch, actions clipped to [-1, 1]; ``n_episodes`` must be a multiple
            of ``num_envs``).
        policy: ``policy(obs (n, obs_dim) tensor) -> actions (n, act_dim) tensor``.
        n_episodes: how many episodes.
        seed: seeds the env resets.

    Returns:
        The dataset; ``episode_factors`` is filled when the env reports ``info["factor"]``.

    Raises:
        ValueError: ``n_episodes < 1`` or not a multiple of a batched env's ``num_envs``.
    """
    n_episodes = check_int(n_episodes, "n_episodes", 1)
    gen = resolve_seed(seed)
    if not isinstance(env, gym.Env) and hasattr(env, "num_envs"):  # torch-batched
        return _rollout_batched(env, lambda obs: policy(obs).clamp(-1.0, 1.0), n_episodes, gen)
    parts: dict[str, list] = {k: [] for k in (*_KEYS, "factor")}
    for _ in range(n_episodes):
        obs, _ = env.reset(seed=int(torch.randint(2**31 - 1, (1,), generator=gen)))
        done = False
        while not done:
            a = policy(torch.as_tensor(obs, dtype=torch.float32)[None])[0]
            a_np = a.detach().cpu().numpy()
            nxt, r, term, trunc, info = env.step(a_np)
            for k, v in zip(_KEYS, (obs, a_np, r, term, trunc), strict=True):
                parts[k].append(np.asarray(v, np.float32))
            obs, done = nxt, bool(term or trunc)
        if "factor" in info:
            parts["factor"].append(float(info["factor"]))
    arrays = {k: torch.as_tensor(np.stack(parts[k])) for k in _KEYS}
    factors = torch.tensor(parts["factor"]) if len(parts["factor"]) == n_episodes else None
    return OfflineDataset(*(arrays[k] for k in _KEYS), episode_factors=factors)


def _rollout_batched(env, policy: Policy, n_episodes: int,
                     gen: torch.Generator) -> OfflineDataset:
    """``n_episodes`` episodes of a torch-batched env, ``num_envs`` at a time, episode-major;
    ``episode_factors`` from the last step's ``info["factor"]`` when every batch has one."""
    if n_episodes % env.num_envs:
        raise ValueError(f"n_episodes ({n_episodes}) must be a multiple of env.num_envs "
                         f"({env.num_envs}) for a batched env")
    chunks = []
    for _ in range(n_episodes // env.num_envs):
        obs = env.reset(seed=gen)
        steps = []
        for _t in range(env.horizon):
            with torch.no_grad():
                a = policy(obs)
            nxt, r, term, trunc, info = env.step(a)
            steps.append((obs, a, r, term, trunc))
            obs = nxt
        # (T, n, ...) -> episode-major (n * T, ...)
        cols = [torch.stack(c).transpose(0, 1).flatten(0, 1) for c in zip(*steps, strict=True)]
        chunks.append((cols, info.get("factor")))
    cols = [torch.cat([c[0][i] for c in chunks]) for i in range(5)]
    factors = [c[1] for c in chunks]
    return OfflineDataset(*cols, episode_factors=None if any(f is None for f in factors)
                          else torch.cat(factors))


def env_maker(env_id: str, max_episode_steps: int | None = None,
              **kwargs: object) -> Callable[[], gym.Env]:
    """A maker of ``gymnasium.make(env_id, **kwargs)`` envs whose episodes end after at most
    ``max_episode_steps`` steps (gymnasium's time limit; None: the env's own), the horizon of
    ``lsdt``'s and ``gsd``'s evaluation rollouts: data whose episodes are shorter than the
    env's limit are compared with rollouts as long (:func:`outlasting`).

    Raises:
        ValueError: ``max_episode_steps < 1`` (which ``gymnasium.make`` refuses at 0 and
            ignores below, keeping the env's limit), before any env is made.
        TypeError: ``max_episode_steps`` not an int.
    """
    kw = {} if max_episode_steps is None else {
        "max_episode_steps": check_int(max_episode_steps, "max_episode_steps", 1)}
    return functools.partial(gym.make, env_id, **kw, **kwargs)


def outlasting(longest: float | None, horizon: int | None, option: str,
               what: str = "returns") -> list[str]:
    """The warning (a list of one; empty where there is none) that rollouts of up to
    ``horizon`` steps outlast the training data's ``longest`` episode, so that their ``what``
    run over more steps than any of the data's (issue 68, walk 9: 300-step HalfCheetah-v5
    demos beside the env's 1000-step rollouts); the remedy is ``option`` (how the caller
    spells the horizon: ``"--max-episode-steps "``, ``"max_episode_steps="``) at ``longest``.
    None for either: unknown, no warning."""
    if longest is None or horizon is None or horizon <= longest:
        return []
    return [f"the training data's episodes last at most {longest:.0f} steps and the rollouts "
            f"up to {horizon}: their {what} run over more steps than the data's "
            f"({option}{longest:.0f} rolls out as long as the data's episodes)"]


@checked
def pendulum_swingup(noise: NonNegative = 0.0, random_frac: Probability = 0.0, *,
                     seed: int | torch.Generator | None = None):
    """A scripted Pendulum-v1 policy: energy pumping, then PD −(15θ + 3θ̇) near the top.

    Args:
        noise: std of Gaussian noise added to the torque (clipped to ±2).
        random_frac: probability of a uniform random torque instead.
        seed: seeds the noise.

    Returns:
        ``policy(obs (n, 3)) -> (n, 1)`` torques.
    """
    noise = check_range(noise, "noise", 0.0)
    random_frac = check_range(random_frac, "random_frac", 0.0, 1.0)
    g = resolve_seed(seed)

    def policy(obs: torch.Tensor) -> torch.Tensor:
        c, s, w = obs[:, 0], obs[:, 1], obs[:, 2]
        theta = torch.atan2(s, c)
        energy = 0.5 * w**2 / 3.0 + 5.0 * (c - 1.0)                   # 0 at upright rest
        pump = torch.sign(w) * torch.where(energy < 0, 2.0, -2.0)
        pump = torch.where(w == 0, torch.full_like(w, 2.0), pump)
        u = torch.where(c > 0.9, -(15.0 * theta + 3.0 * w), pump)
        # drawn on the generator's device, so that obs may live on any device
        z, r, v = (f(u.shape, generator=g).to(u.device)
                   for f in (torch.randn, torch.rand, torch.rand))
        u = torch.where(r < random_frac, v * 4 - 2, u + noise * z)
        return u.clamp(-2.0, 2.0)[:, None]

    return policy


class _Lockstep:
    """``n`` copies of a gymnasium env (``gymnasium.vector.SyncVectorEnv``) behind the
    torch-batched interface :func:`_rollout_batched` steps; one reset seed drawn per env."""

    def __init__(self, env_id: str, n: int) -> None:
        self._envs = gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(n)])
        self.num_envs, self.horizon = n, self._envs.envs[0].spec.max_episode_steps

    def reset(self, *, seed: torch.Generator) -> torch.Tensor:
        obs, _ = self._envs.reset(seed=[int(torch.randint(2**31 - 1, (1,), generator=seed))
                                        for _ in range(self.num_envs)])
        return torch.as_tensor(obs, dtype=torch.float32)

    def step(self, action: torch.Tensor) -> tuple:
        obs, *rest, info = self._envs.step(action.numpy())
        return (torch.as_tensor(obs, dtype=torch.float32),
                *(torch.as_tensor(x) for x in rest), info)

    def close(self) -> None:
        self._envs.close()


def _rollout_lockstep(policy, n: int, gen: torch.Generator) -> OfflineDataset:
    """``n`` Pendulum-v1 episodes stepped together, one policy call per step for all of them
    (10x faster than one episode after another); episodes end by the 200-step time limit."""
    envs = _Lockstep("Pendulum-v1", n)
    try:
        return _rollout_batched(envs, policy, n, gen)
    finally:
        envs.close()
