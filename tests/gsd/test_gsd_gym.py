"""GSD beyond LaneReach: Pendulum-v1 through gymnasium.vector, the user's own demonstrations
from two controllers of different styles, and behaviours told apart by a named statistic."""

import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from iclr25.datasets.control import OfflineDataset, _rollout_lockstep, pendulum_swingup
from iclr25.gsd import GSDConfig, train
from iclr25.gsd.cli import app
from iclr25.gsd.gym import GymVec, demo_factors, evaluate_gym, parse_factor, unit_actions

PENDULUM = "Pendulum-v1"


def _damper(obs: torch.Tensor) -> torch.Tensor:
    """A second style: damp the swing and let the pendulum hang (cos θ -> -1)."""
    return (-0.5 * obs[:, 2:3]).clamp(-2.0, 2.0)


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    """3 swing-up and 3 damping episodes (200 steps each), written as D4RL .hdf5."""
    g = torch.Generator().manual_seed(0)
    parts = [_rollout_lockstep(pendulum_swingup(0.1, seed=1), 3, g),
             _rollout_lockstep(_damper, 3, g)]
    data = OfflineDataset(*(torch.cat([getattr(p, k) for p in parts])
                            for k in ("observations", "actions", "rewards", "terminals",
                                      "timeouts")))
    path = tmp_path_factory.mktemp("gym") / "pendulum_two_styles.hdf5"
    data.save(path)
    return path, data


def test_gymvec_steps_like_gymnasium_with_actions_mapped_to_the_bounds():
    env = GymVec(PENDULUM, 2)
    assert (env.obs_dim, env.act_dim, env.horizon) == (3, 1, 200)
    obs = env.reset(seed=7)
    seeds = torch.randint(2**31 - 1, (2,), generator=torch.Generator().manual_seed(7)).tolist()
    ref = [gym.make(PENDULUM) for _ in range(2)]
    want = np.stack([e.reset(seed=s)[0] for e, s in zip(ref, seeds, strict=True)])
    np.testing.assert_allclose(obs.numpy(), want, rtol=1e-6)
    unit = torch.tensor([[0.5], [-1.5]])  # -> torques 1.0 and -2.0 (clipped to the bound)
    obs, r, term, trunc, _ = env.step(unit)
    for i, torque in enumerate((1.0, -2.0)):
        o, rr, *_ = ref[i].step(np.array([torque], np.float32))
        np.testing.assert_allclose(obs[i].numpy(), o, rtol=1e-6)
        assert float(r[i]) == pytest.approx(rr, rel=1e-6)
    assert not bool(term.any() | trunc.any())
    assert torch.allclose(env.to_unit(torch.tensor([[1.0], [-2.0]])), torch.tensor([[0.5],
                                                                                   [-1.0]]))
    env.close()


def test_two_styles_are_told_apart_by_the_named_statistic(demos):
    _, data = demos
    f = demo_factors(data, parse_factor("obs:0", 3, 1))  # episode mean of cos θ
    assert f.shape == (6,)
    assert bool((f[:3] > 0.3).all()) and bool((f[3:] < -0.5).all())
    episodes = data.actions[:, 0].view(6, 200).numpy(), data.observations[:, 0].view(6, 200)
    np.testing.assert_allclose(demo_factors(data, parse_factor("act:0:std", 3, 1)),
                               episodes[0].std(1), rtol=1e-5)
    np.testing.assert_allclose(demo_factors(data, parse_factor("obs:0:last", 3, 1)),
                               episodes[1][:, -1], rtol=1e-6)
    env = GymVec(PENDULUM, 1)
    scaled = unit_actions(data, env)
    assert torch.allclose(scaled.actions, data.actions / 2.0, atol=1e-6)
    with pytest.raises(ValueError, match="action bounds"):
        unit_actions(OfflineDataset(data.observations, data.actions * 3, data.rewards,
                                    data.terminals, data.timeouts), env)
    for bad, match in (("obs:3", "out of range"), ("x:0", "obs:I"), ("obs:0:max", "obs:I")):
        with pytest.raises(ValueError, match=match):
            parse_factor(bad, 3, 1)


def test_evaluate_gym_recovers_a_scripted_two_style_policy(demos):
    _, data = demos
    swing = pendulum_swingup(0.0, seed=0)

    def policy(obs, z):  # z_0 > 0: swing up; else damp. Unit actions (torque / 2)
        return torch.where(z[:, :1] > 0, swing(obs), _damper(obs)) / 2.0

    fac = parse_factor("obs:0", 3, 1)
    demo_f = demo_factors(data, fac)
    targets = [float(demo_f[:3].mean()), float(demo_f[3:].mean())]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # both styles demonstrated: nothing to warn
        ev = evaluate_gym(policy, PENDULUM, factor=fac, targets=targets, n_codes=12,
                          budgets=(6,), z_dim=2, seed=0, demos=data)
    up = ev.codes[:, 0] > 0
    assert 0 < int(up.sum()) < 12
    assert bool((ev.factors[up] > 0.3).all()) and bool((ev.factors[~up] < -0.5).all())
    assert ev.vl[6] < 0.2
    assert float(ev.returns[up].mean()) > float(ev.returns[~up].mean())  # upright pays
    with pytest.raises(ValueError, match="env_id"):
        evaluate_gym(policy, "NoSuchEnv-v0", factor="obs:0", z_dim=2)


def test_cli_trains_and_evaluates_on_pendulum_through_gymnasium_vector(demos, tmp_path):
    path, _ = demos
    runner = CliRunner()
    p = tmp_path / "p.safetensors"
    r = runner.invoke(app, ["train", str(path), "--env", PENDULUM, "--num-envs", "4",
                            "--iterations", "1", "--out", str(p)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["evaluate", str(p), "--env", PENDULUM, "--factor", "obs:0",
                            "--n-codes", "6", "--budget", "3", "--targets", "0.9,-0.9",
                            "--demos", str(path)])
    assert r.exit_code == 0, r.output
    assert "return    mean" in r.output and "behaviour obs:0:mean" in r.output
    assert "demonstrations' VL" in r.output and "demonstrations: min" in r.output
    assert "(demonstrations: mean" in r.output  # issue 68: the demos' returns beside


def test_a_policy_beyond_the_demos_is_named():
    # issue 68: return -625 against demos' -192 and sin(theta) over -1..1 against +-0.25
    # looked fine beside a good VL; each is now a reason to warn
    from iclr25.gsd.gym import beyond_the_demos

    demo_r, demo_f = torch.tensor([-230.0, -192.0, -150.0]), torch.tensor([-0.25, 0.0, 0.25])
    inside = beyond_the_demos(torch.tensor([-200.0, -180.0]), torch.tensor([-0.3, 0.4]),
                              demo_f, demo_r)
    assert inside == []
    why = beyond_the_demos(torch.tensor([-625.0, -600.0]), torch.linspace(-1, 1, 10),
                           demo_f, demo_r)
    assert len(why) == 2
    head = "the policy does not do what the demos did: "
    assert why[0].startswith(head + "the policy's mean return -612.5 lies below every "
                             "demonstration's")
    assert why[1].startswith(head + "60% of the codes behave outside [-0.5, 0.5]")


def test_a_policy_that_lost_the_demonstrated_styles_is_named():
    # issue 68 walk 6: InvertedPendulum demos parking the cart at -0.3 and +0.3; the policy's
    # 50 codes all stayed within -0.06..0.08 and only the return was named
    from iclr25.gsd.gym import beyond_the_demos

    demo_r, demo_f = torch.tensor([300.0, 300.0]), torch.tensor([-0.276, 0.293])
    why = beyond_the_demos(torch.full((50,), 300.0), torch.linspace(-0.055, 0.079, 50),
                           demo_f, demo_r)
    assert why == ["the policy does not do what the demos did: the codes behave within "
                   "-0.055..0.079, under half the demonstrated -0.276..0.293: some "
                   "demonstrated styles are missing; train longer (more iterations: the "
                   "paper trains for far longer) before relying on it"]
    assert beyond_the_demos(torch.full((2,), 300.0), torch.tensor([-0.2, 0.1]),
                            demo_f, demo_r) == []      # spans over half: both styles reached
    assert beyond_the_demos(torch.full((1,), 300.0), torch.tensor([0.0]), demo_f, demo_r) == []


def test_evaluate_gym_warns_as_the_cli_when_the_policy_leaves_the_demos(demos):
    # issue 68 walk 5: `gsd evaluate --demos` warned, the API was silent. Full torque
    # (act mean 2) lies far outside the demos' -0.1..0.12; the scripted two styles do not
    _, data = demos
    with pytest.warns(UserWarning, match=r"^the policy does not do what the demos did: 100% "
                                         r"of the codes behave outside") as caught:
        evaluate_gym(lambda obs, z: torch.ones(len(obs), 1), PENDULUM, factor="act:0:mean",
                     n_codes=4, budgets=(2,), z_dim=2, demos=data)
    assert caught[0].filename == __file__  # pointed at the caller's line
    with pytest.raises(TypeError, match="demos must be an OfflineDataset"):
        evaluate_gym(lambda obs, z: obs[:, :1], PENDULUM, factor="obs:0", z_dim=2,
                     demos=str(data))


def test_policy_file_records_its_env_and_evaluate_defaults_to_it(demos, tmp_path):
    from dataclasses import replace

    from iclr25.gsd.io import env_of, load, save

    path, data = demos
    res = train(PENDULUM, data, GSDConfig(num_envs=2, iterations=1))
    assert res.env_id == PENDULUM
    p = save(res, tmp_path / "p.safetensors")
    assert env_of(p) == PENDULUM and load(p).env_id == PENDULUM
    runner = CliRunner()
    r = runner.invoke(app, ["evaluate", str(p), "--factor", "obs:0", "--n-codes", "4",
                            "--budget", "2"])
    assert r.exit_code == 0, r.output
    assert "return    mean" in r.output and "behaviour obs:0:mean" in r.output
    r = runner.invoke(app, ["evaluate", str(p)])  # Pendulum needs a --factor: one line
    assert r.exit_code == 2 and "--factor is needed on Pendulum-v1" in r.output
    assert len(r.output.strip().splitlines()) == 1
    old = save(replace(res, env_id=None), tmp_path / "old.safetensors")  # an older file
    assert env_of(old) is None
    r = runner.invoke(app, ["evaluate", str(old), "--factor", "obs:0"])
    assert r.exit_code == 2 and "does not record the env" in r.output and "--env" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = runner.invoke(app, ["evaluate", str(tmp_path / "missing.safetensors")])
    assert r.exit_code == 2 and "POLICY" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_bad_env_and_factor_exit_2_before_any_work(tmp_path, demos):
    path, data = demos
    runner = CliRunner()
    out = str(tmp_path / "p.safetensors")
    for env in ("NoSuchEnv-v0", "CartPole-v1"):  # unknown; discrete actions
        r = runner.invoke(app, ["train", str(tmp_path / "missing.npz"), "--env", env,
                                "--out", out])
        assert r.exit_code == 2 and "--env" in r.output, r.output  # before reading DATA
        assert len(r.output.strip().splitlines()) == 1
    r = runner.invoke(app, ["evaluate", str(tmp_path / "missing.safetensors"),
                            "--env", PENDULUM])
    assert r.exit_code == 2 and "--factor" in r.output
    r = runner.invoke(app, ["evaluate", str(tmp_path / "missing.safetensors"),
                            "--env", PENDULUM, "--factor", "obs:5"])
    assert r.exit_code == 2 and "--factor" in r.output
    with pytest.raises(ValueError, match="env_id"):
        train("NoSuchEnv-v0", data, GSDConfig(num_envs=2, iterations=1))


def test_the_guides_api_block_runs_as_written_on_pendulum(demos, tmp_path, monkeypatch):
    # issue 68 walk: the guide's block called gsd.evaluate on Pendulum-v1, which rolls out
    # only the batched LaneReach (ValueError), and trained Pendulum at num_envs 256 (16x the
    # command line's work per iteration, unsaid); it now evaluates with evaluate_gym
    import re
    from pathlib import Path

    guide = Path(__file__).parents[2] / "docs" / "guide" / "gsd.md"
    (block,) = re.findall(r"## The API in five lines\n\n```python\n(.*?)```", guide.read_text(),
                          re.S)
    assert "GSDConfig(iterations=100, num_envs=16)" in block
    path, _ = demos
    monkeypatch.chdir(tmp_path)
    Path("pendulum_demos.hdf5").write_bytes(path.read_bytes())
    scope: dict = {}
    torch.set_num_threads(1)
    exec(block.replace("iterations=100", "iterations=2"), scope)   # the walk, shortened
    ev = scope["ev"]
    assert ev.returns.shape == (50,) and set(ev.vl) == {10}
    assert ev.factor == parse_factor("act:0:std", 3, 1)


def test_evaluate_on_a_gymnasium_env_points_to_evaluate_gym(demos):
    from iclr25.gsd import evaluate

    _, data = demos
    res = train(PENDULUM, data, GSDConfig(iterations=1, num_envs=4), seed=0)
    with pytest.raises(ValueError, match=r"use iclr25\.gsd\.gym\.evaluate_gym\(policy, "
                                         r"'Pendulum-v1', factor='obs:0'"):
        evaluate(res.policy, PENDULUM, targets=[0.0], n_codes=4, budgets=(2,))


def _cut(data: OfflineDataset, steps: int) -> OfflineDataset:
    """``data``'s 200-step episodes cut into episodes of ``steps`` (each end a timeout)."""
    timeouts = torch.zeros(len(data), dtype=torch.bool)
    timeouts[steps - 1::steps] = True
    return OfflineDataset(data.observations, data.actions, data.rewards,
                          torch.zeros(len(data), dtype=torch.bool), timeouts)


def _calls(log: list):
    """A policy pushing toward the first observation that logs each call (one per step)."""
    def policy(obs: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        log.append(torch.get_num_threads())
        return obs[:, :1]
    return policy


def test_rollouts_are_cut_to_max_episode_steps_and_longer_ones_are_named(demos):
    # issue 68 walk 9: 300-step HalfCheetah-v5 demos against the env's 1000-step rollouts
    # (return -2280 beside the demos' -505..-318): warned, but the rollouts could not be cut
    _, data = demos
    assert data.longest_episode == 200
    short = _cut(data, 40)
    assert short.longest_episode == 40 and short.n_episodes == len(data) // 40
    kw = {"factor": "obs:0", "n_codes": 2, "budgets": (1,), "z_dim": 2, "demos": short}
    full_log, cut_log = [], []
    said = (r"^the training data's episodes last at most 40 steps and the rollouts up to 200: "
            r"their returns and behaviours run over more steps than the data's "
            r"\(max_episode_steps=40 rolls out as long as the data's episodes\)$")
    runs = {}
    for steps, log in ((None, full_log), (40, cut_log), (200, [])):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ev = evaluate_gym(_calls(log), PENDULUM, **kw, max_episode_steps=steps)
        runs[steps] = ev, [str(w.message) for w in caught if w.category is UserWarning]
    (full, said_full), (cut, said_cut), (same, said_same) = runs.values()
    assert re.match(said, said_full[0]) and said_same == said_full    # the first warning
    assert not [m for m in said_cut if "at most" in m]
    assert (len(full_log), len(cut_log)) == (200, 40)      # one policy call per step
    # the same codes and resets: the cut episodes are the full ones' first 40 steps, and
    # Pendulum's rewards are < 0 away from upright, so 40 steps cost less than 200
    assert torch.equal(cut.codes, full.codes) and bool((cut.returns > full.returns).all())
    assert torch.equal(same.returns, full.returns)          # the env's own limit, spelt out
    for bad in (0, -3):          # gymnasium.make refuses 0 and ignores a negative limit
        with pytest.raises(ValueError, match=r"^max_episode_steps must be"):
            evaluate_gym(_calls(cut_log), PENDULUM, **kw, max_episode_steps=bad)
        with pytest.raises(ValueError, match=r"^max_episode_steps must lie in \[1, inf\]"):
            GymVec(PENDULUM, 2, max_episode_steps=bad)
    assert len(cut_log) == 40                               # refused before any rollout
    env = GymVec(PENDULUM, 2, max_episode_steps=40)
    assert env.horizon == 40
    env.close()


def test_cli_evaluate_cuts_rollouts_names_the_option_and_takes_threads(demos, tmp_path,
                                                                       monkeypatch):
    # issue 68 walk 9: `gsd evaluate` could not cut its rollouts to the demos' length, nor
    # set torch's threads (two identical `lsdt evaluate` calls differed by 2.6 in return)
    import iclr25.gsd.gym as gsd_gym
    from iclr25.gsd.io import save

    path, data = demos
    d = _cut(data, 40).save(tmp_path / "short.npz")
    p = save(train(PENDULUM, data, GSDConfig(num_envs=2, iterations=1)),
             tmp_path / "p.safetensors")
    runner, seen, real = CliRunner(), [], gsd_gym.evaluate_gym

    def spy(*args, **kw):
        seen.append((torch.get_num_threads(), kw["max_episode_steps"]))
        return real(*args, **kw)

    monkeypatch.setattr(gsd_gym, "evaluate_gym", spy)
    base = ["evaluate", str(p), "--factor", "obs:0", "--n-codes", "2", "--budget", "1",
            "--demos", str(d)]
    r = runner.invoke(app, base)
    assert r.exit_code == 0, r.output
    warn = r.output.split("warning: ")[1]                   # the first warning
    assert warn.startswith("the training data's episodes last at most 40 steps and the "
                           "rollouts up to 200"), r.output
    assert "(--max-episode-steps 40 rolls out as long as the data's episodes)" in warn
    full = float(r.output.split("return    mean ")[1].split()[0])
    before = torch.get_num_threads()
    r = runner.invoke(app, [*base, "--max-episode-steps", "40", "--threads", str(before + 1)])
    assert r.exit_code == 0 and "at most" not in r.output, r.output
    assert float(r.output.split("return    mean ")[1].split()[0]) > full
    assert seen == [(before, None), (before + 1, 40)] and torch.get_num_threads() == before
    for bad in (["--max-episode-steps", "0"], ["--threads", "0"],
                ["--env", "iclr25/LaneReach-v0", "--max-episode-steps", "40"]):
        r = runner.invoke(app, [*base, *bad])
        assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
        assert r.output.startswith(f"error: {bad[-2]}"), r.output
    assert len(seen) == 2                                   # each refused before any work


def test_train_help_says_the_budget_grows_with_the_env_time_limit():
    # issue 68, walk 11: the help promised "about 1 min of CPU on Pendulum-v1" for the default
    # budget; on Hopper-v5 (1000-step limit, demos of 150 steps) `gsd train` took 853 s
    r = CliRunner().invoke(app, ["train", "--help"], terminal_width=400)
    assert r.exit_code == 0
    text = " ".join(r.output.replace("│", " ").split())
    assert "each iteration rolls out --num-envs episodes as long as the env's time limit" in text
    assert "5-14 min on a 1000-step MuJoCo env" in text


def _stepped(monkeypatch) -> list:
    """Each GymVec step's ``truncated`` (num_envs,) logged, in order."""
    log, real = [], GymVec.step

    def step(self, action):
        out = real(self, action)
        log.append(out[3].clone())
        return out

    monkeypatch.setattr(GymVec, "step", step)
    return log


def _said(caught) -> list[str]:
    return [str(w.message) for w in caught if w.category is UserWarning]


def test_train_rolls_out_max_episode_steps_records_it_and_warns_on_shorter_demos(
        demos, tmp_path, monkeypatch):
    # issue 68 walk 11: 150-step Hopper-v5 demos, but each training iteration rolled out
    # 16 episodes of the env's 1000 steps (853 s); `gsd train` could not cut them
    from safetensors import safe_open

    from iclr25.gsd.io import load, save

    _, data = demos
    short = _cut(data, 40)
    log, cfg = _stepped(monkeypatch), GSDConfig(num_envs=2, iterations=1)
    runs = {}
    for steps in (None, 40, 7):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = train(PENDULUM, short, cfg, max_episode_steps=steps)
        runs[steps] = res, _said(caught), log[:]
        log.clear()
    (full, said_full, log_full), (cut, said_cut, log_cut), (tiny, said_tiny, log_tiny) = \
        runs.values()
    # the env's own time limit ends each episode: truncated at the last step, not before
    for n, steps_log in ((200, log_full), (40, log_cut), (7, log_tiny)):
        assert len(steps_log) == n
        assert bool(steps_log[-1].all()) and not any(bool(t.any()) for t in steps_log[:-1])
    assert said_full == ["the training data's episodes last at most 40 steps and the rollouts "
                         "up to 200: their states and actions run over more steps than the "
                         "data's (max_episode_steps=40 rolls out as long as the data's "
                         "episodes)"]
    assert said_cut == [] and said_tiny == []
    assert (full.max_episode_steps, cut.max_episode_steps, tiny.max_episode_steps) == \
        (None, 40, 7)
    for res, meta in ((full, None), (tiny, "7")):
        p = save(res, tmp_path / "p.safetensors")
        with safe_open(str(p), "pt") as f:       # a default run's file: as before
            assert f.metadata().get("max_episode_steps") == meta
        assert load(p).max_episode_steps == res.max_episode_steps


def test_train_without_max_episode_steps_is_unchanged(demos):
    _, data = demos
    cfg = GSDConfig(num_envs=2, iterations=1)
    runs = [train(PENDULUM, data, cfg, seed=3, **kw)
            for kw in ({}, {"max_episode_steps": None}, {"max_episode_steps": 200})]
    ref = runs[0]
    for res in runs[1:]:    # None and the env's own limit spelt out: the same training
        assert res.history == ref.history
        for a, b in zip(ref.policy.state_dict().values(), res.policy.state_dict().values(),
                        strict=True):
            assert torch.equal(a, b)


def test_train_refuses_a_bad_max_episode_steps_before_any_work(demos, monkeypatch):
    import iclr25.gsd.gym as gsd_gym
    from iclr25.gsd.testbed import LANE_REACH_ID, lane_demos

    _, data = demos
    made = []    # no env of either kind is made (train's one check is make_env's, first)
    monkeypatch.setattr(gsd_gym, "GymVec", lambda *a, **k: made.append(a))
    monkeypatch.setattr(gsd_gym, "make_vec", lambda *a, **k: made.append(a))
    for bad, err in ((0, ValueError), (-3, ValueError), (7.5, TypeError), ("7", TypeError),
                     (True, TypeError)):
        with pytest.raises(err, match=r"^max_episode_steps must be an int"):
            train(PENDULUM, data, GSDConfig(num_envs=2, iterations=1), max_episode_steps=bad)
    with pytest.raises(ValueError, match=rf"^max_episode_steps cuts a gymnasium env's "
                                         rf"rollouts; {LANE_REACH_ID}'s keep its horizon"):
        train(LANE_REACH_ID, lane_demos([0.0], 1, seed=0), max_episode_steps=5)
    assert made == []


def test_train_checks_max_episode_steps_once(demos, monkeypatch):
    # closing note 9: gsd.train checked it, then make_env checked it again
    import iclr25.gsd.gym as gsd_gym
    import iclr25.gsd.training as training

    _, data = demos
    calls, real = [], gsd_gym.check_max_episode_steps

    def counted(*args, **kw):
        calls.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(gsd_gym, "check_max_episode_steps", counted)
    monkeypatch.setattr(training, "check_max_episode_steps", counted, raising=False)
    res = train(PENDULUM, _cut(data, 40), GSDConfig(num_envs=2, iterations=1),
                max_episode_steps=np.int64(40))
    assert calls == [(PENDULUM, 40)]
    assert type(res.max_episode_steps) is int and res.max_episode_steps == 40   # as checked


def test_cli_train_cuts_episodes_warns_and_evaluate_defaults_to_the_trained_horizon(
        demos, tmp_path, monkeypatch):
    import iclr25.gsd.gym as gsd_gym

    path, data = demos
    d = _cut(data, 40).save(tmp_path / "short.npz")
    p = tmp_path / "p.safetensors"
    runner, seen, real = CliRunner(), [], gsd_gym.evaluate_gym
    base = ["train", str(d), "--env", PENDULUM, "--num-envs", "2", "--iterations", "1",
            "--out", str(p)]
    r = runner.invoke(app, base)
    assert r.exit_code == 0, r.output
    assert r.output.index("warning: the training data's episodes last at most 40 steps and "
                          "the rollouts up to 200") < r.output.index("wrote")   # before it
    assert "(--max-episode-steps 40 rolls out as long as the data's episodes)" in r.output
    r = runner.invoke(app, [*base, "--max-episode-steps", "40"])
    assert r.exit_code == 0 and "warning" not in r.output, r.output
    for bad in (["--max-episode-steps", "0"],
                ["--env", "iclr25/LaneReach-v0", "--max-episode-steps", "40"]):
        r = runner.invoke(app, [*base, *bad])
        assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
        assert r.output.startswith("error: --max-episode-steps"), r.output

    def spy(*args, **kw):
        seen.append(kw["max_episode_steps"])
        return real(*args, **kw)

    monkeypatch.setattr(gsd_gym, "evaluate_gym", spy)
    ev = ["evaluate", str(p), "--factor", "obs:0", "--n-codes", "2", "--budget", "1",
          "--demos", str(d)]
    r = runner.invoke(app, ev)      # the policy trained at 40 steps: rolled out as long
    assert r.exit_code == 0 and "at most" not in r.output, r.output
    assert "note: rolling out 40 steps per episode, the horizon POLICY was trained at" in \
        r.output
    r = runner.invoke(app, [*ev, "--max-episode-steps", "200"])
    assert r.exit_code == 0 and "at most 40 steps" in r.output, r.output
    assert seen == [40, 200]


def test_evaluate_gym_given_the_result_rolls_out_the_horizon_it_trained_at(demos, tmp_path,
                                                                           monkeypatch):
    # issue 68 (closing note 9): `gsd evaluate` rolled a policy trained at 40 steps out for
    # 40, but the API's evaluate_gym, given the bare policy, rolled out the env's 200 unless
    # the caller passed max_episode_steps=result.max_episode_steps; it now takes the result
    from dataclasses import replace

    from iclr25.gsd.gym import trained_horizon
    from iclr25.gsd.io import load, save

    _, data = demos
    res = train(PENDULUM, _cut(data, 40), GSDConfig(num_envs=2, iterations=1),
                max_episode_steps=40)
    log = _stepped(monkeypatch)
    kw = {"factor": "obs:0", "n_codes": 2, "budgets": (1,), "seed": 1}

    def steps(policy, **more) -> tuple[int, torch.Tensor]:
        log.clear()
        ev = evaluate_gym(policy, PENDULUM, **kw, **more)
        return len(log), ev.returns

    n, got = steps(res)
    n_bare, want = steps(res.policy, max_episode_steps=40)
    assert n == n_bare == 40 and torch.equal(got, want)      # the bare policy, told 40
    assert steps(load(save(res, tmp_path / "p.safetensors")))[0] == 40   # read from its file
    n, got = steps(res, max_episode_steps=200)                # an explicit horizon wins
    assert n == 200 and torch.equal(got, steps(res.policy)[1])
    # trained at the env's limit, on another env, or from a file that records no env: the
    # env's own limit, 200 steps
    for other in (replace(res, max_episode_steps=None), replace(res, env_id="Hopper-v5"),
                  replace(res, env_id=None)):
        assert steps(other)[0] == 200
        assert trained_horizon(other, PENDULUM) is None
    assert (trained_horizon(res, PENDULUM), trained_horizon(res, PENDULUM, 7)) == (40, 7)
    log.clear()
    with pytest.raises(TypeError, match=r"^policy must be a GSDResult \(what gsd\.train "
                                        r"returns\) or a callable policy\(obs, z\), got int"):
        evaluate_gym(42, PENDULUM, **kw)
    assert log == []                                          # refused before any rollout


def test_trained_horizon_refuses_what_is_not_a_training_result_naming_it():
    # review of issue 68's stop (hreview10): trained_horizon, public in gsd.gym, raised
    # AttributeError ('int' object has no attribute 'env_id') for a policy file's path or a
    # bare policy, and returned a given horizon for anything at all
    from iclr25.gsd.gym import trained_horizon
    from iclr25.gsd.training import GSDResult, build_networks

    cfg = GSDConfig(num_envs=2, iterations=1)
    res = GSDResult(**build_networks(cfg, 3, 1), config=cfg, env_id=PENDULUM,
                    max_episode_steps=40)
    assert (trained_horizon(res, PENDULUM), trained_horizon(res, PENDULUM, 7)) == (40, 7)
    for bad in (42, "policy.safetensors", res.policy, None):
        for steps in (None, 7):
            with pytest.raises(TypeError, match=r"^result must be a GSDResult \(what "
                                                r"gsd\.train returns\), got "):
                trained_horizon(bad, PENDULUM, steps)
    with pytest.raises(TypeError, match=r"^env_id must be"):
        trained_horizon(res, 5)
    with pytest.raises(ValueError, match=r"^max_episode_steps must be"):
        trained_horizon(res, PENDULUM, 0)
