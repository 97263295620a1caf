"""iclr25.datasets.control: the offline-dataset container, LaneReach, experts, rollouts."""

import numpy as np
import pytest
import torch

pytest.importorskip("gymnasium")
gym = pytest.importorskip("gymnasium")

from iclr25.datasets.control import (  # noqa: E402
    LANE_REACH_ID,
    LaneReachEnv,
    LaneReachVec,
    OfflineDataset,
    inverted_pendulum_lqr,
    lane_demos,
    lane_expert,
    make_vec,
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


def test_lane_reach_step_is_euler_by_hand():
    env = LaneReachVec(2)
    env.reset(seed=0)
    env.state = torch.tensor([[0.95, 0.2, 1.0, -0.5], [0.0, 0.0, 0.0, 0.0]])
    obs, r, term, trunc, info = env.step(torch.tensor([[0.5, 2.0], [-1.0, 0.0]]))
    dt = 0.1
    expect0 = [0.95 + dt * 1.0, 0.2 + dt * -0.5, 1.0 + dt * 0.5, -0.5 + dt * 1.0]  # a clipped
    assert torch.allclose(obs[0], torch.tensor(expect0))
    assert torch.allclose(obs[1], torch.tensor([0.0, 0.0, -0.1, 0.0]))
    assert r.tolist() == [1.0, 0.0] and not term.any() and not trunc.any() and info == {}


def test_gym_env_matches_batched_env():
    env = gym.make(LANE_REACH_ID)
    assert isinstance(env.unwrapped, LaneReachEnv)
    policy = lane_expert(0.4)
    a = rollout(env, policy, 1, seed=3)
    b = rollout(LaneReachVec(1), policy, 1, seed=3)
    assert len(a) == len(b) == 40
    # same dynamics from each start: the factor follows the lane in both
    assert abs(float(a.episode_factors[0]) - 0.4) < 0.05
    assert abs(float(b.episode_factors[0]) - 0.4) < 0.05
    assert bool(a.timeouts[-1]) and bool(b.timeouts[-1])


def test_lane_expert_keeps_its_lane_and_reaches_goal():
    lanes = torch.tensor([-0.8, -0.4, 0.0, 0.4, 0.8])
    ds = rollout(LaneReachVec(5), lane_expert(lanes, 0.1, seed=0), 5, seed=0)
    assert torch.all((ds.episode_factors - lanes).abs() < 0.05)
    final_x = ds.observations.view(5, 40, 4)[:, -1, 0] + 0.1 * ds.observations.view(5, 40, 4)[
        :, -1, 2]
    assert torch.all(final_x >= 1.0)
    assert torch.all(ds.returns() > 0)


def test_lane_demos_seeded_and_shaped():
    a = lane_demos([-0.8, 0.0, 0.8], 4, seed=1)
    b = lane_demos([-0.8, 0.0, 0.8], 4, seed=1)
    c = lane_demos([-0.8, 0.0, 0.8], 4, seed=2)
    assert len(a) == 12 * 40 and a.n_episodes == 12
    assert torch.equal(a.actions, b.actions) and not torch.equal(a.actions, c.actions)
    assert a.actions.abs().max() <= 1.0
    assert torch.allclose(a.episode_factors.view(3, 4).mean(1), torch.tensor([-0.8, 0, 0.8]),
                          atol=0.05)


def test_lane_errors():
    with pytest.raises(ValueError, match="lanes"):
        lane_demos([], 3)
    with pytest.raises(ValueError, match="n_per_lane"):
        lane_demos([0.0], 0)
    with pytest.raises(ValueError, match="noise"):
        lane_expert(0.0, -1.0)
    with pytest.raises(ValueError, match="n_episodes"):
        rollout(LaneReachVec(4), lane_expert(0.0), 6, seed=0)
    with pytest.raises(ValueError, match="env_id"):
        make_vec("CartPole-v1", 2)


def test_lqr_holds_inverted_pendulum_near_target():
    for target in (-0.5, 0.4):
        env = gym.make("InvertedPendulum-v5")
        data = rollout(env, inverted_pendulum_lqr(target), 1, seed=0)
        assert len(data) >= 200  # never fell (the env terminates when |angle| > 0.2)
        assert abs(float(data.observations[199, 0]) - target) < 0.05
    with pytest.raises(ValueError, match="target_position"):
        inverted_pendulum_lqr(1.5)
