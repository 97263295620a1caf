"""iclr25.datasets.control: the offline-dataset container and the rollouts both methods use."""

import numpy as np
import pytest
import torch

pytest.importorskip("gymnasium")
gym = pytest.importorskip("gymnasium")

from iclr25.datasets.control import (  # noqa: E402
    OfflineDataset,
    _rollout_lockstep,
    pendulum_swingup,
    rollout,
)


def _toy():
    # two episodes: 3 steps ending in a terminal, 2 steps ending in a timeout
    obs = np.arange(10, dtype=np.float64).reshape(5, 2)
    act = np.zeros((5, 1))
    rew = np.array([1.0, 2.0, 3.0, 10.0, 20.0])
    ter = np.array([0, 0, 1, 0, 0], bool)
    tim = np.array([0, 0, 0, 0, 1], bool)
    return obs, act, rew, ter, tim


def test_episodes_returns_and_returns_to_go_by_hand():
    ds = OfflineDataset(*_toy(), episode_factors=[0.5, -0.5])
    assert ds.n_episodes == 2 and len(ds) == 5 and ds.obs_dim == 2 and ds.act_dim == 1
    assert ds.observations.dtype == torch.float32 and ds.terminals.dtype == torch.bool
    eps = ds.episodes()
    assert [len(e["rewards"]) for e in eps] == [3, 2]
    assert torch.equal(ds.returns(), torch.tensor([6.0, 30.0]))
    assert torch.equal(ds.returns_to_go(), torch.tensor([6.0, 5.0, 3.0, 30.0, 20.0]))
    assert torch.allclose(ds.returns_to_go(2.0), torch.tensor([3.0, 2.5, 1.5, 15.0, 10.0]))
    assert ds.episode_index().tolist() == [0, 0, 0, 1, 1]


def test_input_not_modified_and_copied():
    arrays = _toy()
    before = [a.copy() for a in arrays]
    ds = OfflineDataset(*arrays)
    arrays[2][0] = 99.0
    assert ds.rewards[0] == 1.0
    for a, b in zip(arrays[:2], before[:2], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("change, match", [
    (lambda a: a.__setitem__(1, a[1][:4]), "mismatched lengths"),
    (lambda a: a[0].__setitem__((0, 0), np.nan), "observations"),
    (lambda a: a[2].__setitem__(0, np.inf), "rewards"),
    (lambda a: a[4].__setitem__(4, False), "terminal or timeout"),
    (lambda a: a.__setitem__(0, a[0][:, 0]), "observations"),
])
def test_bad_arrays(change, match):
    arrays = list(_toy())
    change(arrays)
    with pytest.raises(ValueError, match=match):
        OfflineDataset(*arrays)


def test_bad_factors_and_scale():
    with pytest.raises(ValueError, match="episode_factors"):
        OfflineDataset(*_toy(), episode_factors=[1.0])
    with pytest.raises(ValueError, match="observations"):
        OfflineDataset(np.zeros((0, 2)), np.zeros((0, 1)), [], [], [])
    with pytest.raises(ValueError, match="scale"):
        OfflineDataset(*_toy()).returns_to_go(0.0)


@pytest.mark.parametrize("suffix", [".npz", ".hdf5"])
def test_save_load_roundtrip(tmp_path, suffix):
    if suffix == ".hdf5":
        pytest.importorskip("h5py")
    ds = OfflineDataset(*_toy(), episode_factors=[0.5, -0.5])
    back = OfflineDataset.load(ds.save(tmp_path / f"d{suffix}"))
    for k in ("observations", "actions", "rewards", "terminals", "timeouts", "episode_factors"):
        assert torch.equal(getattr(ds, k), getattr(back, k))


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        OfflineDataset.load(tmp_path / "nope.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable"):
        OfflineDataset.load(bad)
    partial = tmp_path / "partial.npz"
    np.savez(partial, observations=np.zeros((2, 2)), actions=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="rewards, terminals, timeouts"):
        OfflineDataset.load(partial)
    with pytest.raises(ValueError, match="path"):
        OfflineDataset(*_toy()).save(tmp_path / "d.csv")


def test_pendulum_lockstep_rollout_equals_one_episode_at_a_time():
    pol = pendulum_swingup(0.0, seed=0)  # deterministic: the two orders draw nothing
    a = rollout(gym.make("Pendulum-v1"), pol, 4, seed=torch.Generator().manual_seed(5))
    b = _rollout_lockstep(pol, 4, torch.Generator().manual_seed(5))
    for k in ("observations", "actions", "rewards", "terminals", "timeouts"):
        assert torch.equal(getattr(a, k), getattr(b, k)), k


class _Walk:
    """A duck-typed single env (not a gymnasium Env, no num_envs): x += a, 3 steps."""

    def reset(self, seed=None):
        self.x, self.t = 0.0, 0
        return np.array([self.x], np.float32), {}

    def step(self, a):
        self.x, self.t = self.x + float(a[0]), self.t + 1
        return np.array([self.x], np.float32), 1.0, False, self.t == 3, {}


def test_rollout_runs_a_duck_typed_single_env_episode_by_episode():
    ds = rollout(_Walk(), lambda obs: torch.full((len(obs), 1), 0.5), 2, seed=0)
    assert ds.n_episodes == 2 and len(ds) == 6
    assert ds.observations[:3, 0].tolist() == [0.0, 0.5, 1.0]
