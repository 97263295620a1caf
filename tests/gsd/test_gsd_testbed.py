"""iclr25.gsd.testbed: LaneReach (batched and gymnasium), its PD expert and demos, LQR expert."""

import pytest
import torch

gym = pytest.importorskip("gymnasium")

from iclr25.datasets.control import rollout  # noqa: E402
from iclr25.gsd.testbed import (  # noqa: E402
    LANE_REACH_ID,
    LaneReachEnv,
    LaneReachVec,
    inverted_pendulum_lqr,
    lane_demos,
    lane_expert,
    make_vec,
)


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
