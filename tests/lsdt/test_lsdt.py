"""Behaviour of iclr25.lsdt: shapes, causality, reach of the conv branch, errors, data."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr25._format import num

pytest.importorskip("gymnasium")

from iclr25.datasets.control import OfflineDataset  # noqa: E402
from iclr25.lsdt import (  # noqa: E402
    DELAYED_CUE_ID,
    DynamicConv1d,
    LongShortDecisionTransformer,
    SequenceSampler,
    TokenConv1d,
    decision_convformer,
    decision_transformer,
    delayed_cue_dataset,
    evaluate,
    load,
    normalized_score,
    pendulum_dataset,
    pendulum_swingup,
    receptive_field,
    save,
    train,
)

K = 6


def _inputs(B=3, K=K, obs=2, act=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, K, 1, generator=g), torch.randn(B, K, obs, generator=g),
            torch.randn(B, K, act, generator=g), torch.arange(K).repeat(B, 1))


def _model(ratio=0.5, conv="dynamic", **kw):
    torch.manual_seed(0)
    kw = dict(hidden=16, n_blocks=2, n_heads=2, context=K, dropout=0.0) | kw
    return LongShortDecisionTransformer(2, 1, conv_ratio=ratio, conv=conv, **kw).eval()


@pytest.mark.parametrize("ratio,conv", [(0.0, "dynamic"), (0.5, "dynamic"), (1.0, "dynamic"),
                                        (0.5, "static"), (1.0, "static")])
def test_shapes_and_causality(ratio, conv):
    m = _model(ratio, conv)
    r, s, a, t = _inputs()
    out = m(r, s, a, t)
    assert out.shape == (3, K, 1)
    # changing step 3's state/action/rtg must not change predictions at steps 0..2;
    # changing a_2 must not change the prediction at step 2 (it is read at s_2)
    r2, s2, a2 = r.clone(), s.clone(), a.clone()
    r2[:, 3:] += 5
    s2[:, 3:] += 5
    a2[:, 2:] += 5
    out2 = m(r2, s2, a2, t)
    torch.testing.assert_close(out2[:, :3], out[:, :3])
    assert not torch.allclose(out2[:, 3:], out[:, 3:])


def test_conv_only_reach_is_receptive_field():
    m = _model(1.0, "static", hidden=8, n_heads=1)
    rf = receptive_field(m)
    assert rf == 2 * 5
    r, s, a, t = _inputs()
    s2 = s.clone()
    s2[:, 0] += 10.0                         # token 1 (state of step 0)
    diff = (m(r, s2, a, t) - m(r, s, a, t)).abs()[..., 0].amax(0)
    dist = 3 * torch.arange(K) + 1 - 1       # token distance from token 1 to each state token
    assert bool((diff[dist > rf] == 0).all())
    assert bool((diff[dist <= rf] > 0).all())
    with pytest.raises(ValueError, match="conv_ratio"):
        receptive_field(_model(0.0))


def test_dynamic_conv_matches_python_loop():
    """A loop over positions, the first (k-1)/2 = 5 included: the softmax runs over the taps
    that exist (the official banded matrix is cut at column 0), logits with the bias."""
    torch.manual_seed(1)
    conv = DynamicConv1d(8, kernel_size=11, heads=2).eval()
    with torch.no_grad():
        conv.weight.bias.normal_()                     # the kernel projection's bias counts
    B, T, P = 2, 9, 6
    x = torch.randn(B, T, 8)
    h = F.glu(conv.glu(x), dim=-1)
    logits = conv.weight(h).view(B, T, 2, 11)          # tap j of 11: offset j - 5
    ref = torch.zeros(B, T, 8)
    for b in range(B):
        for t in range(T):
            for head in range(2):
                js = [j for j in range(11) if 0 <= t + j - 5 <= t]     # existing, causal
                w = torch.softmax(logits[b, t, head, js], 0)
                c = slice(head * 4, (head + 1) * 4)
                for wj, j in zip(w, js, strict=True):
                    ref[b, t, c] += wj * h[b, t + j - 5, c]
    ref = conv.out(ref + conv.bias)
    torch.testing.assert_close(conv(x), ref)
    assert conv.taps == P
    k = conv.kernels(h)                                # (B, T, H, P), oldest tap first
    torch.testing.assert_close(k.sum(-1), torch.ones(B, T, 2))
    assert bool((k[:, 0, :, :-1] == 0).all()) and bool((k[:, 0, :, -1] == 1).all())
    assert bool((k[:, P - 1:] > 0).all())


def test_official_initialisation():
    m = LongShortDecisionTransformer(3, 1, hidden=128, n_blocks=1, conv_ratio=0.5)
    # xavier-uniform on the 4096 x 128 timestep table: std sqrt(2 / (4096 + 128))
    assert m.embed_t.weight.std().item() == pytest.approx((2 / (4096 + 128)) ** 0.5, rel=0.02)
    mixer = m.blocks[0].mixer
    bound = (6 / (64 + 64)) ** 0.5                     # each of q, k, v as its own 64 x 64 layer
    assert mixer.qkv.weight.abs().max().item() <= bound
    assert mixer.qkv.weight.abs().max().item() > 0.95 * bound
    for lin in (mixer.qkv, mixer.proj, mixer.conv.weight, m.embed_s, m.predict_action):
        assert bool((lin.bias == 0).all())


def test_token_conv_matches_left_padded_conv1d():
    torch.manual_seed(2)
    conv = TokenConv1d(4, window=6)
    x = torch.randn(2, 9, 4)
    out = conv(x)
    xp = F.pad(x.transpose(1, 2), (5, 0))
    for i, c in enumerate(conv.convs):
        ref = F.conv1d(xp, c.weight, c.bias, groups=4).transpose(1, 2)
        torch.testing.assert_close(out[:, i::3], ref[:, i::3])


def test_factories_are_endpoints():
    dt = decision_transformer(2, 1, hidden=16, n_blocks=1, context=K)
    dc = decision_convformer(2, 1, hidden=16, n_blocks=1, context=K)
    assert dt.blocks[0].mixer.conv is None and dt.blocks[0].mixer.att_dim == 16
    assert isinstance(dc.blocks[0].mixer.conv, TokenConv1d) and dc.blocks[0].mixer.att_dim == 0
    assert dc.blocks[0].mixer.fusion is None
    assert _model(0.5).blocks[0].mixer.fusion is not None


@pytest.mark.parametrize("kw,match", [
    (dict(conv_ratio=1.5), "conv_ratio"), (dict(conv_ratio=-0.1), "conv_ratio"),
    (dict(kernel_size=10), "kernel_size"), (dict(kernel_size=1), "kernel_size"),
    (dict(hidden=16, n_heads=3), "n_heads"), (dict(context=0), "context"),
    (dict(conv="fft"), "conv"), (dict(hidden=16, conv_heads=3), "conv_heads"),
    (dict(hidden=16, conv_heads=0), "conv_heads"),
])
def test_constructor_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        LongShortDecisionTransformer(2, 1, **kw)


def test_forward_errors_and_inputs_untouched():
    m = _model()
    r, s, a, t = _inputs()
    copies = [x.clone() for x in (r, s, a, t)]
    with pytest.raises(ValueError, match="context"):
        m(*_inputs(K=K + 1))
    with pytest.raises(ValueError, match="actions"):
        m(r, s, a[:2], t)
    with pytest.raises(ValueError, match="returns_to_go"):
        m(r[:, :4], s, a, t)
    with pytest.raises(TypeError, match="timesteps"):
        m(r, s, a, t.float())
    with pytest.raises(ValueError, match="timesteps"):
        m(r, s, a, t - 1)
    with pytest.raises(ValueError, match="timesteps"):
        m(r, s, a, t + 5000)
    bad = s.clone()
    bad[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="states"):
        m(r, bad, a, t)
    with pytest.raises(ValueError, match="obs_dim"):
        m(r, torch.zeros(3, K, 5), a, t)
    for x, c in zip((r, s, a, t), copies, strict=True):
        assert torch.equal(x, c)
    out = m(r.double().numpy(), s.double().numpy(), a.double().numpy(), t.numpy())
    torch.testing.assert_close(out, m(r, s, a, t))


def test_delayed_cue_data_and_env():
    ds = delayed_cue_dataset(10, 6, seed=0)
    assert len(ds) == 60 and ds.n_episodes == 10
    assert sorted(ds.returns().tolist()) == [0.0] * 5 + [1.0] * 5
    cue = ds.observations.view(10, 6, 2)[:, 0, 0]
    assert bool((ds.observations.view(10, 6, 2)[:, 1:, 0] == 0).all())
    right = torch.sign(ds.actions.view(10, 6)[:, -1]) == cue
    assert torch.equal(right.float(), ds.returns())
    import gymnasium as gym
    env = gym.make(DELAYED_CUE_ID)
    o, info = env.reset(seed=3)
    total = 0.0
    for _ in range(6):
        o, rew, term, trunc, _ = env.step(np.array([info["cue"]]))
        total += rew
    assert total == 1.0 and trunc


def test_returns_to_go_is_reversed_cumsum():
    ds = pendulum_dataset("random", 2, seed=0)                # a reward at every step
    ref = torch.cat([e["rewards"].flip(0).cumsum(0).flip(0) for e in ds.episodes()]) / 1000.0
    torch.testing.assert_close(ds.returns_to_go(1000.0), ref)


def test_pendulum_expert_swings_up():
    import gymnasium as gym
    env = gym.make("Pendulum-v1")
    pol = pendulum_swingup(0.0, seed=0)
    o, _ = env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        o, r, term, trunc, _ = env.step(pol(torch.tensor(o)[None])[0].numpy())
        total += r
        done = term or trunc
    assert total >= -200
    assert normalized_score(total) > 0.85


def test_sampler_pads_short_episodes_after_their_end():
    ds = delayed_cue_dataset(4, 3, seed=0)
    samp = SequenceSampler(ds, context=5, batch_size=16, rtg_scale=1.0, seed=0)
    rtg, s, a, t, mask = samp.sample()
    assert s.shape == (16, 5, 2) and mask.shape == (16, 5)
    assert bool(mask[:, :3].all()) and not bool(mask[:, 3:].any())  # whole, at the front
    assert bool((s[~mask] == 0).all())
    assert bool((t[:, :3] == torch.arange(3)).all())   # T <= K: always from the first step
    assert bool((s[:, 0, 0] != 0).all())                # so the cue is in every window


@pytest.mark.parametrize("kw", [dict(conv_ratio=0.0), dict(conv_ratio=0.5, kernel_size=5),
                                dict(conv_ratio=1.0, conv="static")])
def test_padded_window_reads_what_evaluation_reads(kw):
    # the real steps of a padded training window must give the same predictions as the same
    # steps fed alone (as evaluate does at an episode's start)
    ds = delayed_cue_dataset(4, 3, seed=0)
    rtg, s, a, t, mask = SequenceSampler(ds, context=5, batch_size=4, rtg_scale=1.0,
                                         seed=0).sample()
    torch.manual_seed(0)
    m = LongShortDecisionTransformer(2, 1, hidden=16, n_blocks=2, n_heads=2, context=5,
                                     **kw).eval()
    real = mask.nonzero()[:, 1].view(4, 3)              # the real steps' positions per row

    def pick(x):
        return torch.stack([x[i, real[i]] for i in range(4)])

    full = pick(m(rtg, s, a, t))
    alone = m(pick(rtg), pick(s), pick(a), pick(t))
    torch.testing.assert_close(full, alone)


def test_sampler_long_episodes_start_anywhere():
    ds = delayed_cue_dataset(4, 8, seed=0)
    rtg, s, a, t, mask = SequenceSampler(ds, context=3, batch_size=64, rtg_scale=1.0,
                                         seed=0).sample()
    full = mask.all(1)
    assert bool(full.any()) and not bool(full.all())    # padded only at the episode's end
    assert len(set(t[full, 0].tolist())) > 3            # DT rule: any start step


def test_train_deterministic_evaluate_save_load(tmp_path):
    ds = delayed_cue_dataset(40, 3, seed=0)

    def run():
        torch.manual_seed(0)
        m = LongShortDecisionTransformer(2, 1, hidden=16, n_blocks=1, context=3)
        return m, train(m, ds, steps=15, batch_size=8, lr=1e-3, warmup=2, rtg_scale=1.0,
                        seed=0)

    m1, l1 = run()
    m2, l2 = run()
    assert l1 == l2
    state = torch.get_rng_state()
    train(m2, ds, steps=2, batch_size=8, rtg_scale=1.0, seed=1)
    assert torch.equal(torch.get_rng_state(), state)      # global RNG untouched
    ev = evaluate(m1, DELAYED_CUE_ID, target_return=1.0, n_episodes=4, seed=0, horizon=3)
    assert ev.returns.shape == (4,) and 0.0 <= ev.mean_return <= 1.0
    # printed as a summary (issue 68 walk: a raw tensor of the returns)
    assert repr(ev) == (f"EvalResult(mean_return={num(ev.mean_return)}, n_episodes=4, "
                        f"min={num(float(ev.returns.min()))}, "
                        f"max={num(float(ev.returns.max()))})")
    save(m1, tmp_path / "m.safetensors")
    m3 = load(tmp_path / "m.safetensors")
    r, s, a, t = _inputs(K=3)
    torch.testing.assert_close(m3(r, s, a, t), m1(r, s, a, t))
    (tmp_path / "bad.safetensors").write_text("nope")
    with pytest.raises(ValueError, match="path"):
        load(tmp_path / "bad.safetensors")


def test_train_and_evaluate_errors():
    ds = delayed_cue_dataset(4, 3, seed=0)
    m = LongShortDecisionTransformer(2, 1, hidden=16, n_blocks=1, context=3)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    for kw, match in [(dict(steps=0), "steps"), (dict(steps=1, lr=0.0), "lr"),
                      (dict(steps=1, rtg_scale=-1.0), "rtg_scale"),
                      (dict(steps=1, weight_decay=-1.0), "weight_decay")]:
        with pytest.raises(ValueError, match=match):
            train(m, ds, **kw)
    # refused before any work: the normalisation buffers are not yet set
    assert all(torch.equal(v, before[k]) for k, v in m.state_dict().items())
    with pytest.raises(ValueError, match="dims"):
        train(LongShortDecisionTransformer(3, 1, hidden=16, context=3), ds, steps=1)
    with pytest.raises(TypeError, match="dataset"):
        train(m, {"observations": 1}, steps=1)
    with pytest.raises(ValueError, match="env_id"):
        evaluate(m, "Pendulum-v1", target_return=0.0, n_episodes=1)
    with pytest.raises(ValueError, match="env_id"):
        evaluate(m, "NoSuchEnv-v9", target_return=0.0, n_episodes=1)
    short = LongShortDecisionTransformer(3, 1, hidden=16, n_blocks=1, context=3,
                                         max_timestep=50)
    with pytest.raises(ValueError, match="max_timestep"):               # 200-step episodes
        evaluate(short, "Pendulum-v1", target_return=0.0, n_episodes=1)
    with pytest.raises(ValueError, match="seed"):
        evaluate(m, DELAYED_CUE_ID, target_return=1.0, n_episodes=1, seed=-1)
    with pytest.raises(ValueError, match="n_episodes"):
        pendulum_dataset("medium-replay", 1)


def test_evaluate_seed_may_be_a_generator():
    m = LongShortDecisionTransformer(2, 1, hidden=16, n_blocks=1, context=6).eval()
    runs = [evaluate(m, DELAYED_CUE_ID, target_return=1.0, n_episodes=4,
                     seed=torch.Generator().manual_seed(3)).returns for _ in range(2)]
    assert torch.equal(*runs)


class _Wrapped(torch.nn.Module):
    """Not our class: another model in the Policy signature (as benchmarks/lsdt.py wraps
    Hugging Face's DT)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        for k in ("obs_dim", "act_dim", "context", "max_timestep"):
            setattr(self, k, getattr(inner, k))
        self.register_buffer("rtg_scale", inner.rtg_scale.clone())

    def get_action(self, r, s, a, t):
        return self.inner.get_action(r, s, a, t)


def test_evaluate_rolls_out_any_policy():
    m = LongShortDecisionTransformer(2, 1, hidden=16, n_blocks=1, context=6).eval()
    kw = dict(target_return=1.0, n_episodes=4, seed=5)
    assert torch.equal(evaluate(_Wrapped(m), DELAYED_CUE_ID, **kw).returns,
                       evaluate(m, DELAYED_CUE_ID, **kw).returns)
    with pytest.raises(TypeError, match="model must be a Policy"):   # no get_action
        evaluate(torch.nn.Linear(2, 1), DELAYED_CUE_ID, **kw)


def test_corrupt_npz_is_a_named_error(tmp_path):
    p = delayed_cue_dataset(4, 3, seed=0).save(tmp_path / "d.npz")
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    with pytest.raises(ValueError, match="path"):
        OfflineDataset.load(p)


def test_cli_data_train_evaluate(tmp_path):
    from typer.testing import CliRunner

    from iclr25.datasets.control import OfflineDataset
    from iclr25.lsdt.cli import app

    runner = CliRunner()
    d = tmp_path / "d.npz"
    r = runner.invoke(app, ["data", "--env", DELAYED_CUE_ID, "--n-episodes", "8",
                            "--horizon", "3", "--out", str(d)])
    assert r.exit_code == 0, r.output
    assert OfflineDataset.load(d).n_episodes == 8
    p = tmp_path / "m.safetensors"
    r = runner.invoke(app, ["train", str(d), "--hidden", "16", "--n-blocks", "1", "--context",
                            "3", "--steps", "2", "--rtg-scale", "1", "--out", str(p)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["evaluate", str(p), "--env", DELAYED_CUE_ID, "--target-return",
                            "1", "--n-episodes", "2"])
    assert r.exit_code == 0 and "mean return" in r.output, r.output
    r = runner.invoke(app, ["evaluate", str(p), "--env", DELAYED_CUE_ID, "--target-return",
                            "1", "--n-episodes", "4", "--dataset", str(d)])
    assert r.exit_code == 0, r.output
    import re

    def num(label):
        return float(re.search(label + r" (-?[\d.]+)", r.output).group(1))

    assert num("normalised score") == pytest.approx(num("mean return"), abs=1e-3)  # 0 to 1
    data_ret = float(OfflineDataset.load(d).returns().mean())
    assert num("dataset mean return") == pytest.approx(data_ret, abs=1e-3)
    # issue 68: no target given: the training data's 90th-percentile return (recorded by
    # train), with the data's returns printed as suggestions; a target beyond them is warned
    p90 = float(torch.quantile(OfflineDataset.load(d).returns().double(), 0.9))
    r = runner.invoke(app, ["evaluate", str(p), "--env", DELAYED_CUE_ID, "--n-episodes", "2"])
    assert r.exit_code == 0, r.output
    assert num("target return") == pytest.approx(p90)
    assert "suggested --target-return from the training data's episode returns: best" in r.output
    # a policy below the data's median episode return is warned about (issue 68 walk)
    below = num("mean return") < num("median")
    assert ("warning: the policy's mean return" in r.output) == below, r.output
    r = runner.invoke(app, ["evaluate", str(p), "--env", DELAYED_CUE_ID, "--n-episodes", "2",
                            "--target-return", "5"])
    assert r.exit_code == 0 and "warning: --target-return 5 lies above the best" in r.output
    p2 = tmp_path / "paper.safetensors"
    r = runner.invoke(app, ["train", str(d), "--paper-scale", "--steps", "1", "--n-blocks", "1",
                            "--rtg-scale", "1", "--out", str(p2)])
    assert r.exit_code == 0, r.output
    from iclr25.lsdt.io import load
    paper = load(p2)
    assert paper.context == 20 and len(paper.blocks) == 1  # paper K, the flag given wins
    r = runner.invoke(app, ["evaluate", str(p), "--env", "Pendulum-v1", "--target-return", "0"])
    # in the command line's words, one line: the suggestions come after the checks
    assert r.exit_code == 2 and r.output.startswith("error: --env 'Pendulum-v1'"), r.output
    assert len(r.output.splitlines()) == 1, r.output
    # issue 68 walk 5: a MountainCar model got only the dims at the default --env Pendulum-v1
    assert r.output.rstrip().endswith("roll it out in the env its training data came from "
                                      "(the model does not record it)"), r.output
    for args, words in ((["--conv-ratio", "2"], "error: --conv-ratio "),
                        (["--context", "0"], "error: --context must"),
                        (["--n-blocks", "0"], "error: --n-blocks ")):
        bad = runner.invoke(app, ["train", str(d), *args, "--out", str(p)])
        assert bad.exit_code == 2 and bad.output.startswith(words), bad.output
    bad = runner.invoke(app, ["train", str(tmp_path / "nope.npz"), "--out", str(p)])
    assert bad.exit_code == 2 and bad.output.startswith("error: DATASET "), bad.output
    bad = runner.invoke(app, ["data", "--quality", "great", "--out", str(d)])
    assert bad.exit_code == 2 and "quality" in bad.output


def _outlier_data(tmp_path):
    """20 DelayedCue episodes whose returns are 0..0.95 but one 50: the best is an outlier
    (walk 4 had 20 demonstrations)."""
    ds = delayed_cue_dataset(20, 3, seed=0)
    rewards = torch.zeros_like(ds.rewards)
    rewards[ds.episode_ends - 1] = torch.arange(20.0) / 20
    rewards[ds.episode_ends[3] - 1] = 50.0
    out = OfflineDataset(ds.observations, ds.actions, rewards, ds.terminals, ds.timeouts)
    return out, out.save(tmp_path / "outlier.npz")


def test_cli_default_target_is_the_90th_percentile_not_an_outlying_best(tmp_path):
    # issue 68 walk 4: the default target was the data's best episode, an outlier
    import re

    from typer.testing import CliRunner

    from iclr25.lsdt.cli import app

    ds, d = _outlier_data(tmp_path)
    p = tmp_path / "m.safetensors"
    runner = CliRunner()
    r = runner.invoke(app, ["train", str(d), "--hidden", "16", "--n-blocks", "1", "--context",
                            "3", "--steps", "2", "--rtg-scale", "1", "--env", DELAYED_CUE_ID,
                            "--out", str(p)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["evaluate", str(p), "--n-episodes", "2"])
    assert r.exit_code == 0, r.output
    p90 = float(torch.quantile(ds.returns().double(), 0.9))
    assert p90 < 1 < float(ds.returns().max()) == 50
    said = re.search(r"target return (-?[\d.]+): the training data's 90th-percentile", r.output)
    assert said and float(said.group(1)) == pytest.approx(p90, abs=1e-3), r.output
    assert f"(target return {p90:.4g})" in r.output


def test_model_records_its_env_and_evaluate_defaults_to_it(tmp_path):
    from typer.testing import CliRunner

    from iclr25.lsdt.cli import app
    from iclr25.lsdt.io import env_of

    _, d = _outlier_data(tmp_path)
    p = tmp_path / "m.safetensors"
    runner = CliRunner()
    train_args = ["train", str(d), "--hidden", "16", "--n-blocks", "1", "--context", "3",
                  "--steps", "2", "--rtg-scale", "1", "--out", str(p)]
    # a wrong env is refused before training, in the command line's words
    r = runner.invoke(app, [*train_args, "--env", "Pendulum-v1"])
    assert r.exit_code == 2 and not p.exists(), r.output
    assert r.output.startswith("error: --env 'Pendulum-v1' has obs/act dims (3, 1) but "
                               "DATASET has (2, 1): pass the env DATASET came from"), r.output
    r = runner.invoke(app, [*train_args, "--env", DELAYED_CUE_ID])
    assert r.exit_code == 0, r.output
    assert env_of(p) == DELAYED_CUE_ID and load(p).env_id == DELAYED_CUE_ID
    r = runner.invoke(app, ["evaluate", str(p), "--n-episodes", "2", "--target-return", "1"])
    assert r.exit_code == 0 and "mean return" in r.output and "note" not in r.output, r.output
    # a mismatch names both envs, in one line
    r = runner.invoke(app, ["evaluate", str(p), "--env", "Pendulum-v1", "--target-return", "1"])
    assert r.exit_code == 2 and len(r.output.splitlines()) == 1, r.output
    assert "'Pendulum-v1'" in r.output and f"it was trained for '{DELAYED_CUE_ID}'" in r.output
    # the API: the loaded model's env is evaluate's default; a model without one must say
    res = evaluate(load(p), target_return=1.0, n_episodes=2, seed=0)
    assert torch.equal(res.returns, evaluate(load(p), DELAYED_CUE_ID, target_return=1.0,
                                             n_episodes=2, seed=0).returns)
    bare = LongShortDecisionTransformer(2, 1, hidden=16, n_blocks=1, context=3)
    with pytest.raises(ValueError, match="env_id: the model records no env"):
        evaluate(bare, target_return=1.0, n_episodes=1)
    # a model saved without an env: the old default, said; an env that is no id is refused
    for bad in ("", "  "):
        with pytest.raises(ValueError, match="env_id must be a gymnasium env id"):
            save(bare, tmp_path / "bad.safetensors", env_id=bad)
    assert not (tmp_path / "bad.safetensors").exists()
    save(bare, tmp_path / "bare.safetensors")
    assert env_of(tmp_path / "bare.safetensors") is None
    r = runner.invoke(app, ["evaluate", str(tmp_path / "bare.safetensors"),
                            "--target-return", "1"])
    assert r.exit_code == 2 and len(r.output.splitlines()) == 1, r.output
    assert r.output.startswith("error: MODEL records no env (train with --env to record it), "
                               "and the default 'Pendulum-v1' has obs/act dims (3, 1)"), r.output


def test_missing_rl_extra_names_the_install():
    import subprocess
    import sys

    code = ("import sys; sys.modules['gymnasium'] = None\n"
            "try:\n    import iclr25.lsdt\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert "pip install 'iclr25[rl]'" in out.stdout, out.stderr


def test_env_refusals_carry_their_parts_so_no_text_is_cut():
    # lsdt evaluate's fallback rewords the problem from EnvError's parts (it cut the text at
    # ": roll it out" before); the text stays "env_id '<id>' <problem>[: <hint>]"
    import pickle

    from iclr25.lsdt.cli import _evaluate_error
    from iclr25.lsdt.evaluation import EnvError

    bare = LongShortDecisionTransformer(2, 1, hidden=16, n_blocks=1, context=3)
    with pytest.raises(EnvError) as dims:
        evaluate(bare, "Pendulum-v1", target_return=1.0, n_episodes=1)
    e = dims.value
    assert isinstance(e, ValueError) and e.env_id == "Pendulum-v1"
    assert e.problem == "has obs/act dims (3, 1) but the model expects (2, 1)"
    assert e.hint.startswith("roll it out in the env its training data came from")
    assert str(e) == f"env_id 'Pendulum-v1' {e.problem}: {e.hint}"
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == str(e) and back.hint == e.hint
    assert _evaluate_error(e, True, False) == (
        "MODEL records no env (train with --env to record it), and the default 'Pendulum-v1' "
        f"{e.problem}: pass --env with the env its training data came from")
    assert _evaluate_error(e, False, False) == "--env" + str(e)[len("env_id"):]
    with pytest.raises(EnvError) as unknown:
        evaluate(bare, "NoSuchEnv-v0", target_return=1.0, n_episodes=1)
    assert unknown.value.hint is None and str(unknown.value) == (
        f"env_id 'NoSuchEnv-v0' {unknown.value.problem}")
    assert unknown.value.problem.startswith("is not a registered gymnasium env (")


def test_cli_evaluate_warns_when_rollouts_outlast_the_data_and_cuts_them(tmp_path):
    # issue 68 walk 9: 300-step HalfCheetah-v5 demos, rolled out to the env's 1000 steps
    # with no word (-2010 against the data's median -329; -562 cut at 300 steps)
    from typer.testing import CliRunner

    from iclr25.lsdt.cli import app
    from iclr25.lsdt.io import data_returns

    g = torch.Generator().manual_seed(0)
    n, T = 80, 20                                  # 4 Pendulum-shaped episodes of 20 steps
    done = torch.zeros(n, dtype=torch.bool)
    done[T - 1::T] = True
    ds = OfflineDataset(torch.randn(n, 3, generator=g), torch.rand(n, 1, generator=g) * 4 - 2,
                        -torch.rand(n, generator=g), torch.zeros(n, dtype=torch.bool), done)
    d, p = ds.save(tmp_path / "short.npz"), tmp_path / "m.safetensors"
    runner = CliRunner()
    r = runner.invoke(app, ["train", str(d), "--hidden", "16", "--n-blocks", "1", "--context",
                            "3", "--steps", "2", "--env", "Pendulum-v1", "--out", str(p)])
    assert r.exit_code == 0, r.output
    assert data_returns(p)["steps"] == T
    warn = (f"warning: the training data's episodes last at most {T} steps and the rollouts "
            f"up to 200")
    base = ["evaluate", str(p), "--n-episodes", "1", "--target-return", "-10"]
    for extra in ([], ["--dataset", str(d)]):     # recorded by train, or read from --dataset
        r = runner.invoke(app, [*base, *extra])
        assert r.exit_code == 0 and warn in r.output, r.output
        assert r.output.count("last at most") == 1   # not again as evaluate's UserWarning
        assert f"--max-episode-steps {T} rolls out as long" in r.output
    full = float(r.output.split("mean return ")[1].split()[0])
    r = runner.invoke(app, [*base, "--max-episode-steps", str(T)])
    assert r.exit_code == 0 and "at most" not in r.output, r.output
    cut = float(r.output.split("mean return ")[1].split()[0])
    assert full < cut < 0     # Pendulum's rewards are <= 0: 20 steps sum less cost than 200
    r = runner.invoke(app, [*base, "--max-episode-steps", "0"])
    assert r.exit_code == 2 and r.output.startswith("error: --max-episode-steps must be >= 1")


def _episodes_of(T: int, n: int = 60) -> OfflineDataset:
    """n seeded random steps of 3-d observations and 1-d actions in episodes of T steps."""
    g = torch.Generator().manual_seed(0)
    done = torch.zeros(n, dtype=torch.bool)
    done[T - 1::T] = True
    return OfflineDataset(torch.randn(n, 3, generator=g),
                          torch.rand(n, 1, generator=g) * 4 - 2,
                          -torch.rand(n, generator=g), torch.zeros(n, dtype=torch.bool), done)


def test_api_evaluate_warns_when_rollouts_outlast_the_data(tmp_path):
    # issue 68 walk 11: the guide's block (train, then evaluate) on 150-step Hopper-v5 data
    # (returns 21..151) rolled out to the env's 1000 steps returned 795 with no word, where
    # `lsdt evaluate` warns; train and load now record the data's longest episode
    from iclr25.lsdt.io import data_returns

    T = 20
    ds = _episodes_of(T)
    m = LongShortDecisionTransformer(3, 1, hidden=16, n_blocks=1, context=3)
    assert m.longest_episode is None
    train(m, ds, steps=2, batch_size=4, warmup=0)
    assert m.longest_episode == T
    text = (f"the training data's episodes last at most {T} steps and the rollouts up to 200: "
            f"their returns run over more steps than the data's (max_episode_steps={T} rolls "
            f"out as long as the data's episodes)")
    with pytest.warns(UserWarning) as rec:
        evaluate(m, "Pendulum-v1", target_return=-10.0, n_episodes=1)
    assert [str(w.message) for w in rec] == [text]
    assert rec[0].filename == __file__                     # the caller's line, not ours
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # as long as the data: no word
        evaluate(m, "Pendulum-v1", target_return=-10.0, n_episodes=1, max_episode_steps=T)
    loaded = load(save(m, tmp_path / "m.safetensors", data=ds))
    assert loaded.longest_episode == T
    # saved without data (review of issue 68: it was dropped), the model's own record
    bare = load(save(m, tmp_path / "bare.safetensors"))
    assert bare.longest_episode == T and data_returns(tmp_path / "bare.safetensors") is None
    with pytest.warns(UserWarning) as rec:
        evaluate(bare, "Pendulum-v1", target_return=-10.0, n_episodes=1)
    assert [str(w.message) for w in rec] == [text]
    from typer.testing import CliRunner

    from iclr25.lsdt.cli import app
    r = CliRunner().invoke(app, ["evaluate", str(tmp_path / "bare.safetensors"), "--env",
                                 "Pendulum-v1", "--n-episodes", "1", "--target-return", "-10"])
    assert r.exit_code == 0 and f"warning: {text}".replace("max_episode_steps=",
                                                           "--max-episode-steps ") in r.output
    fresh = LongShortDecisionTransformer(3, 1, hidden=16, n_blocks=1, context=3)
    assert load(save(fresh, tmp_path / "new.safetensors")).longest_episode is None  # unknown
    # a file written before the model's record: the data's steps, as it was read then
    assert load(save(fresh, tmp_path / "old.safetensors", data=ds)).longest_episode == T


def test_cli_evaluate_leaves_the_model_as_loaded_and_says_the_api_warning(tmp_path,
                                                                         monkeypatch):
    # closing note 9: `lsdt evaluate` cleared the loaded model's longest_episode so that
    # evaluate would not warn, and built the warning itself from a second reading of the
    # env's time limit; it now says evaluate's own warning in its words, and the API takes
    # the training data (dataset=) whose longest episode the warning reads
    from typer.testing import CliRunner

    from iclr25.lsdt.cli import app

    T = 20
    ds = _episodes_of(T)
    torch.manual_seed(0)
    m = LongShortDecisionTransformer(3, 1, hidden=16, n_blocks=1, context=3)
    text = (f"the training data's episodes last at most {T} steps and the rollouts up to 200: "
            f"their returns run over more steps than the data's (max_episode_steps={T} rolls "
            f"out as long as the data's episodes)")
    # a model that records no longest episode (another library's, or an old file): the
    # training data passed beside it
    assert m.longest_episode is None
    with pytest.warns(UserWarning) as rec:
        evaluate(m, "Pendulum-v1", target_return=-10.0, n_episodes=1, max_episode_steps=200,
                 dataset=ds)
    assert [str(w.message) for w in rec] == [text]
    m.longest_episode = 7           # the data's, when given, over the model's record
    with pytest.warns(UserWarning) as rec:
        evaluate(m, "Pendulum-v1", target_return=-10.0, n_episodes=1, dataset=ds)
    assert [str(w.message) for w in rec] == [text]
    m.longest_episode = T
    p = save(m, tmp_path / "m.safetensors", env_id="Pendulum-v1")
    monkeypatch.setattr("iclr25.lsdt.io.load", lambda path: m)   # the model the CLI loads
    d = ds.save(tmp_path / "d.npz")
    for extra in ([], ["--dataset", str(d)]):
        r = CliRunner().invoke(app, ["evaluate", str(p), "--n-episodes", "1",
                                     "--target-return", "-10", *extra])
        assert r.exit_code == 0, r.output
        said = "warning: " + text.replace(f"max_episode_steps={T}", f"--max-episode-steps {T}")
        assert r.output.count("last at most") == 1 and said in r.output, r.output
        assert r.output.index(said) < r.output.index("mean return")   # before the results
        assert m.longest_episode == T                                 # left as loaded


def _counted(model):
    """``model`` whose ``get_action`` calls (one per rollout step) are logged with torch's
    threads at the time."""
    log, real = [], model.get_action

    def get_action(*args):
        log.append(torch.get_num_threads())
        return real(*args)

    model.get_action = get_action
    return model, log


def test_evaluate_cuts_rollouts_to_max_episode_steps_and_refuses_bad_ones():
    # issue 68 walk 9: lsdt.evaluate took max_episode_steps only through **env_kwargs, which
    # gymnasium.make ignores below 0 (the env's own limit, unsaid) and refuses at 0 in its
    # own words; gsd's evaluate_gym now takes it too, through the same maker
    torch.manual_seed(0)
    m, log = _counted(LongShortDecisionTransformer(3, 1, hidden=16, n_blocks=1, context=3))
    longer = evaluate(m, "Pendulum-v1", target_return=-10.0, n_episodes=2, max_episode_steps=30)
    cut = evaluate(m, "Pendulum-v1", target_return=-10.0, n_episodes=2, max_episode_steps=20)
    assert len(log) == 30 + 20                              # one call per step
    # the same first 20 steps, and Pendulum's rewards are < 0 away from upright
    assert bool((cut.returns > longer.returns).all())
    for bad in (0, -1):
        with pytest.raises(ValueError, match=r"^max_episode_steps must be an int in \[1, inf\)"):
            evaluate(m, "Pendulum-v1", target_return=-10.0, max_episode_steps=bad)
    assert len(log) == 50                                   # refused before any rollout


def test_cli_evaluate_takes_threads(tmp_path, monkeypatch):
    # issue 68 walk 9: two identical `lsdt evaluate` calls gave -2010.3 (OMP_NUM_THREADS=1)
    # and -2007.7 (torch's default two threads), and the verb had no --threads to say so
    from typer.testing import CliRunner

    from iclr25.lsdt.cli import app

    torch.manual_seed(0)
    m, log = _counted(LongShortDecisionTransformer(3, 1, hidden=16, n_blocks=1, context=3))
    p = save(m, tmp_path / "m.safetensors", env_id="Pendulum-v1")
    monkeypatch.setattr("iclr25.lsdt.io.load", lambda path: m)   # the counted model
    runner, before = CliRunner(), torch.get_num_threads()
    base = ["evaluate", str(p), "--n-episodes", "1", "--target-return", "-10",
            "--max-episode-steps", "3"]
    r = runner.invoke(app, [*base, "--threads", str(before + 1)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, base)
    assert r.exit_code == 0, r.output
    assert log == [before + 1] * 3 + [before] * 3 and torch.get_num_threads() == before
    for bad in ("--threads", "--max-episode-steps"):
        r = runner.invoke(app, [*base, bad, "-2"])
        assert r.exit_code == 2 and r.output == f"error: {bad} must be >= 1, got -2\n", r.output
    assert len(log) == 6                                    # refused before any rollout
