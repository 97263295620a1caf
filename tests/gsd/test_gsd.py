"""iclr25.gsd: closed forms of the constraint, dual, metric, codes; training; errors."""

import numpy as np
import pytest
import torch

pytest.importorskip("gymnasium")

from iclr25.datasets.control import OfflineDataset  # noqa: E402
from iclr25.gsd import (  # noqa: E402
    BoundedDiscriminator,
    DualVariable,
    GaussianPosterior,
    GSDConfig,
    LatentPolicy,
    evaluate,
    gradient_penalty,
    infer_demo_codes,
    infogail_reward,
    recovery_error,
    relevance_constraint,
    select_behaviours,
    style_coded_bc,
    train,
)
from iclr25.gsd.io import load, save  # noqa: E402
from iclr25.gsd.testbed import LANE_REACH_ID, lane_demos  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def demos():
    return lane_demos([-0.8, 0.0, 0.8], 3, seed=0)


def _nets(seed=0):
    return GaussianPosterior(4, 2, 2, seed=seed), BoundedDiscriminator(4, 2, clip=10.0, seed=seed)


def test_discriminator_bounded_and_unbounded():
    x, a = torch.randn(200, 4) * 50, torch.randn(200, 2) * 50
    disc = BoundedDiscriminator(4, 2, clip=10.0)
    pure = disc.pure(x, a)
    assert bool(((pure > 0) & (pure < 10)).all())
    # the official offset: D = c·sigmoid(f) + b, b learnable from −c/2
    assert disc.offset.requires_grad and disc.offset.item() == -5.0
    torch.testing.assert_close(disc(x, a), 10 * torch.sigmoid(disc.logits(x, a)) - 5.0)
    raw = BoundedDiscriminator(4, 2, clip=0.0)
    assert torch.equal(raw(x, a), raw.logits(x, a)) and not raw.offset.requires_grad


def test_gradient_penalty_is_centred_at_one_on_full_output():
    disc = BoundedDiscriminator(1, 1, clip=4.0)
    with torch.no_grad():                  # f(s, a) = 2s − a: ∇D = 4σ(f)(1 − σ(f))·(2, −1)
        disc.net = torch.nn.Linear(2, 1)
        disc.net.weight.copy_(torch.tensor([[2.0, -1.0]]))
        disc.net.bias.zero_()
        disc.offset.fill_(3.0)             # the offset moves D, not its gradient
    xe, xp = torch.tensor([[1.0, 0.0], [0.0, 0.0]]), torch.tensor([[0.0, 1.0], [2.0, 2.0]])
    u = torch.tensor([[0.5], [0.25]])
    xm = u * xe + (1 - u) * xp              # (0.5, 0.5), (1.5, 1.5): f = 0.5, 1.5
    sig = torch.sigmoid(torch.tensor([0.5, 1.5]))
    norm = 4 * sig * (1 - sig) * 5 ** 0.5
    expect = ((norm - 1) ** 2).mean()
    torch.testing.assert_close(gradient_penalty(disc, xe, xp, 1.0, u), expect)
    torch.testing.assert_close(gradient_penalty(disc, xe, xp, 0.0, u), (norm ** 2).mean())
    assert torch.allclose(xm, torch.tensor([[0.5, 0.5], [1.5, 1.5]]))


def test_training_moves_the_offset_with_bce_on_full_output(demos):
    cfg = GSDConfig(num_envs=8, iterations=1, regularizer="none", d_steps=2)
    res = train(LANE_REACH_ID, demos, cfg, seed=0)
    assert res.discriminator.offset.item() != -5.0
    assert GSDConfig().disc_lr == 1e-3 and GSDConfig().gp_center == 1.0


def test_relevance_constraint_matches_closed_form():
    post, disc = _nets()
    g = torch.Generator().manual_seed(0)
    s, a, s2, a2 = (torch.randn(16, k, generator=g) for k in (4, 2, 4, 2))
    v, limit, step = relevance_constraint(post, disc, s, a, s2, a2, scale=0.5, slack=1e-3)
    with torch.no_grad():
        d = 10 * torch.sigmoid(disc.logits(s, a))
        ell = d / 10 * torch.cat([s2 - s, a2 - a], 1).norm(dim=1) * 0.5
        delta = ((post(s2, a2)[0] - post(s, a)[0]) ** 2).sum(1)
    assert torch.allclose(limit, ell) and torch.allclose(step.detach(), delta)
    assert torch.allclose(v.detach(), torch.minimum(ell ** 2 - delta, torch.tensor(1e-3)))
    # the violation's gradient reaches the posterior only
    v.sum().backward()
    assert next(post.parameters()).grad is not None
    assert next(disc.parameters()).grad is None


def test_relevance_reads_the_pure_score_not_the_offset():
    post, disc = _nets()
    g = torch.Generator().manual_seed(3)
    s, a, s2, a2 = (torch.randn(16, k, generator=g) for k in (4, 2, 4, 2))
    _, limit, _ = relevance_constraint(post, disc, s, a, s2, a2)
    with torch.no_grad():
        disc.offset.fill_(4.0)
    torch.testing.assert_close(relevance_constraint(post, disc, s, a, s2, a2)[1], limit)


def test_style_coded_bc_codes_each_style_and_checks_inputs(demos):
    pol = style_coded_bc(demos, 3, epochs=1, seed=0)
    assert isinstance(pol, LatentPolicy) and pol.z_dim == 2
    with pytest.raises(ValueError, match="n_styles"):
        style_coded_bc(demos, 2, epochs=1)
    with pytest.raises(TypeError, match="demos"):
        style_coded_bc(demos.observations, 3)


def test_relevance_scale_is_selected_on_training_lanes_only(monkeypatch):
    from iclr25.claims import Context, Scale
    from iclr25.gsd import claim as C

    calls = []

    def fake_run(job):
        calls.append((job.arm, job.seed, job.relevance_scale, tuple(job.targets)))
        vl = abs(np.log10(job.relevance_scale) + 1) + 0.01 * job.seed  # best at λ_C = 0.1
        return dict(vl={b: vl for b in C.BUDGETS}, violated=0.5, factors=torch.zeros(4))

    monkeypatch.setattr(C, "_run", fake_run)
    setting = C.select_relevance_scale.full
    ev = C.select_relevance_scale.fn(setting, Context(Scale.quick, seed=0))
    assert ev.chosen_relevance_scale == 0.1
    assert {c[3] for c in calls} == {C.LANES}                      # demonstrated lanes only
    assert {c[0] for c in calls} == {"GSD"} and {c[2] for c in calls} == set(C.SCALES)
    assert not {c[1] for c in calls} & set(C.lane_reach.full.seeds)  # not the claim's seeds
    assert C.lane_reach.full.relevance_scale == C.RELEVANCE_SCALE


def test_relevance_zero_when_nothing_moves():
    post, disc = _nets()
    s, a = torch.randn(5, 4), torch.randn(5, 2)
    v, limit, step = relevance_constraint(post, disc, s, a, s, a)
    assert torch.all(limit == 0) and torch.all(step == 0) and torch.all(v == 0)


def test_dual_falls_when_constraints_hold_and_rises_otherwise():
    dual = DualVariable(100.0, lr=1e-2)
    lam0 = dual.value
    assert dual.step(torch.full((8,), 1e-6)) < lam0
    dual = DualVariable(100.0, lr=1e-2)
    assert dual.step(torch.full((8,), -0.5)) > lam0
    assert dual().requires_grad is False


def test_infogail_reward():
    d, lq = torch.tensor([0.0, 3.0]), torch.tensor([-1.0, 2.0])
    expect = torch.log1p(torch.exp(d)) + 0.1 * lq
    assert torch.allclose(infogail_reward(d, lq), expect)
    with pytest.raises(ValueError, match="mismatched"):
        infogail_reward(d, lq[:1])
    with pytest.raises(ValueError, match="info_weight"):
        infogail_reward(d, lq, -1.0)


def test_recovery_error_vs_numpy():
    rng = np.random.default_rng(0)
    f = rng.normal(size=105)
    targets = np.array([-0.4, 0.4, 1.0])
    for k in (1, 10, 50):
        chunks = f[: (len(f) // k) * k].reshape(-1, k)
        ref = np.mean([np.abs(chunks - t).min(1).mean() for t in targets])
        assert recovery_error(f, targets, k) == pytest.approx(ref, rel=1e-6)
    idx = select_behaviours(f, targets, 10)
    assert idx.shape == (10, 3) and bool((idx // 10 == torch.arange(10)[:, None]).all())
    assert isinstance(recovery_error(f, targets), float)


@pytest.mark.parametrize("kwargs, match", [
    (dict(factors=[0.0, 1.0], targets=[], budget=1), "targets"),
    (dict(factors=[0.0, 1.0], targets=[0.0], budget=0), "budget"),
    (dict(factors=[0.0, 1.0], targets=[0.0], budget=3), "budget"),
    (dict(factors=[[0.0, 1.0]], targets=[0.0], budget=1), "factors"),
    (dict(factors=[np.nan, 1.0], targets=[0.0], budget=1), "factors"),
])
def test_recovery_error_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        recovery_error(**kwargs)


def test_spectral_posterior_is_seeded():
    # spectral_norm's power-iteration vectors come from the seed, not the global RNG
    torch.manual_seed(1)
    a = GaussianPosterior(4, 2, 2, spectral=True, seed=5).state_dict()
    torch.manual_seed(2)
    b = GaussianPosterior(4, 2, 2, spectral=True, seed=5).state_dict()
    assert any("_u" in k for k in a)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_infer_demo_codes_is_precision_weighted_mean():
    post = GaussianPosterior(1, 1, 1)
    with torch.no_grad():       # make μ = s and log σ = a exactly (one-layer posterior)
        post.body = torch.nn.Linear(2, 2)
        post.body.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        post.body.bias.zero_()
    s = torch.tensor([[1.0], [3.0], [5.0]])
    a = torch.tensor([[0.0], [np.log(2.0)], [0.0]])
    ds = OfflineDataset(s, a, torch.zeros(3), [0, 1, 1], [0, 0, 0])
    codes = infer_demo_codes(post, ds)
    # episode 0: (1 / 1² + 3 / 2²) / (1 + 1/4) = 1.4; episode 1: just 5
    assert torch.allclose(codes, torch.tensor([[1.4], [5.0]]))


def test_train_runs_deterministic_and_all_arms(demos):
    cfg = GSDConfig(num_envs=8, iterations=2)
    a = train(LANE_REACH_ID, demos, cfg, seed=3)
    b = train(LANE_REACH_ID, demos, cfg, seed=3)
    for p, q in zip(a.policy.parameters(), b.policy.parameters(), strict=True):
        assert torch.equal(p, q)
    assert a.history == b.history and len(a.history) == 2
    assert a.dual.value != pytest.approx(100.0, abs=1e-4)  # the dual moved
    for reg, clip in (("none", 0.0), ("none", 10.0), ("spectral", 10.0)):
        r = train(LANE_REACH_ID, demos, GSDConfig(regularizer=reg, clip=clip, num_envs=8,
                                                  iterations=1), seed=0)
        assert r.dual.value == pytest.approx(100.0)  # untouched without GSD
    torch.manual_seed(0)
    state = torch.random.get_rng_state()
    train(LANE_REACH_ID, demos, GSDConfig(num_envs=8, iterations=1), seed=0)
    assert torch.equal(state, torch.random.get_rng_state())


def test_evaluate_any_latent_policy():
    lanes = torch.tensor([-0.8, 0.0, 0.8])

    def copy_lanes(obs, z):   # a hand-written latent policy: z's sign picks the lane
        lane = lanes[(z[:, 0] > 0).long() + (z[:, 0] > 1).long()]
        return torch.stack([2 * (0.6 - obs[:, 2]), 4 * (lane - obs[:, 1]) - 3 * obs[:, 3]], 1)

    ev = evaluate(copy_lanes, LANE_REACH_ID, targets=[-0.4, 0.4], n_codes=100,
                  budgets=(10, 20), z_dim=2, seed=0)
    assert ev.factors.shape == (100,) and set(ev.vl) == {10, 20}
    assert ev.vl[10] == pytest.approx(0.4, abs=0.05)   # copying lanes: 0.4 off the targets
    assert ev.selected_success == 1.0
    with pytest.raises(ValueError, match="targets"):
        evaluate(copy_lanes, LANE_REACH_ID, targets=[], z_dim=2)
    with pytest.raises(ValueError, match="budgets"):
        evaluate(copy_lanes, LANE_REACH_ID, targets=[0.0], n_codes=5, budgets=(10,), z_dim=2)


def test_evaluate_takes_what_train_returns_and_load_reads(demos, tmp_path):
    # issue 68 tidy: evaluate refused a GSDResult (its annotation said callable) where
    # evaluate_gym took one; both now roll out the result's policy
    res = train(LANE_REACH_ID, demos, GSDConfig(num_envs=8, iterations=1), seed=0)
    kw = dict(targets=[-0.4, 0.4], n_codes=20, budgets=(10,), seed=0)
    want = evaluate(res.policy, LANE_REACH_ID, **kw)
    for given in (res, load(save(res, tmp_path / "p.safetensors"))):
        got = evaluate(given, LANE_REACH_ID, **kw)
        assert torch.equal(got.factors, want.factors) and got.vl == want.vl
    with pytest.raises(TypeError, match=r"^policy must be a GSDResult or a callable"):
        evaluate(res.config, LANE_REACH_ID, **kw)


def test_train_errors(demos):
    with pytest.raises(ValueError, match="clip"):
        GSDConfig(regularizer="gsd", clip=0.0)
    with pytest.raises(ValueError, match="regularizer"):
        GSDConfig(regularizer="l2")
    with pytest.raises(ValueError, match="z_dim"):
        GSDConfig(z_dim=0)
    with pytest.raises(ValueError, match="scale"):
        GSDConfig(relevance_scale=0.0)
    with pytest.raises(ValueError, match="env_id"):
        train("CartPole-v1", demos, GSDConfig(num_envs=2, iterations=1))
    wrong = OfflineDataset(demos.observations[:, :3], demos.actions, demos.rewards,
                           demos.terminals, demos.timeouts)
    with pytest.raises(ValueError, match="obs dim"):
        train(LANE_REACH_ID, wrong, GSDConfig(num_envs=2, iterations=1))
    far = OfflineDataset(demos.observations, demos.actions * 5, demos.rewards,
                         demos.terminals, demos.timeouts)
    with pytest.raises(ValueError, match="action space"):
        train(LANE_REACH_ID, far, GSDConfig(num_envs=2, iterations=1))
    with pytest.raises(TypeError, match="demos"):
        train(LANE_REACH_ID, demos.observations, GSDConfig(num_envs=2, iterations=1))
    with pytest.raises(ValueError, match="clip"):
        post, _ = _nets()
        relevance_constraint(post, BoundedDiscriminator(4, 2, clip=0.0), *[torch.zeros(1, k)
                             for k in (4, 2, 4, 2)])
    with pytest.raises(ValueError, match="scale"):
        post, disc = _nets()
        relevance_constraint(post, disc, *[torch.zeros(1, k) for k in (4, 2, 4, 2)], scale=0)
    with pytest.raises(ValueError, match="z_dim"):
        LatentPolicy(4, 2, 0)


def test_save_load_roundtrip(tmp_path, demos):
    res = train(LANE_REACH_ID, demos, GSDConfig(regularizer="spectral", num_envs=4,
                                                 iterations=1), seed=0)
    path = save(res, tmp_path / "p.safetensors")
    back = load(path)
    obs, z = torch.randn(5, 4), torch.randn(5, 2)
    assert torch.equal(res.policy(obs, z), back.policy(obs, z))
    assert torch.equal(res.posterior(obs, z)[0], back.posterior(obs, z)[0])
    assert back.config == res.config
    with pytest.raises(ValueError, match="path"):
        load(tmp_path / "missing.safetensors")


def test_two_saves_of_one_result_are_byte_identical(tmp_path, demos):
    # issue 68 tidy: safetensors keeps the metadata (six keys here) in a Rust hash map whose
    # order changed from save to save; the library writes its keys sorted
    import json
    import struct

    res = train(LANE_REACH_ID, demos, GSDConfig(num_envs=4, iterations=1), seed=0)
    res.env_id, res.max_episode_steps = LANE_REACH_ID, 20
    files = [save(res, tmp_path / f"p{i}.safetensors").read_bytes() for i in range(6)]
    assert all(f == files[0] for f in files[1:])
    n = struct.unpack("<Q", files[0][:8])[0]
    meta = json.loads(files[0][8:8 + n])["__metadata__"]
    assert list(meta) == sorted(meta) and len(meta) == 6 and n % 8 == 0
    back = load(tmp_path / "p0.safetensors")
    assert (back.env_id, back.max_episode_steps) == (LANE_REACH_ID, 20)


def test_a_gsd_policy_and_an_lsdt_model_are_told_apart(tmp_path, demos):
    # issue 68: each verb read the other's file and blamed a missing key or LSDT's __init__
    from safetensors.torch import save_file

    from iclr25.lsdt import LongShortDecisionTransformer
    from iclr25.lsdt.io import load as lsdt_load
    from iclr25.lsdt.io import save as lsdt_save

    res = train(LANE_REACH_ID, demos, GSDConfig(num_envs=4, iterations=1), seed=0)
    g = save(res, tmp_path / "g.safetensors")
    m = lsdt_save(LongShortDecisionTransformer(2, 1, hidden=16, n_blocks=1, context=3),
                  tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match="is a GSD policy .* `iclr25 gsd evaluate`"):
        lsdt_load(g)
    with pytest.raises(ValueError, match="is an LSDT model .* `iclr25 lsdt evaluate`"):
        load(m)
    # files written before the method was recorded: told apart by the dims GSD records
    old = tmp_path / "old.safetensors"
    save_file({"w": torch.zeros(1)}, str(old), metadata={"config": "{}"})
    with pytest.raises(ValueError, match="is an LSDT model"):
        load(old)
    save_file({"w": torch.zeros(1)}, str(old), metadata={"config": "{}", "obs_dim": "4"})
    with pytest.raises(ValueError, match="is a GSD policy"):
        lsdt_load(old)


def test_cli_demos_train_evaluate(tmp_path):
    from typer.testing import CliRunner

    from iclr25.gsd.cli import app

    runner = CliRunner()
    d = tmp_path / "d.npz"
    r = runner.invoke(app, ["demos", "--lanes", "-0.8,0,0.8", "--n-per-lane", "2",
                            "--out", str(d)])
    assert r.exit_code == 0, r.output
    assert OfflineDataset.load(d).n_episodes == 6
    p = tmp_path / "p.safetensors"
    r = runner.invoke(app, ["train", str(d), "--num-envs", "4", "--iterations", "1",
                            "--out", str(p)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["evaluate", str(p), "--targets", "-0.4,0.4", "--n-codes", "20"])
    assert r.exit_code == 0 and "VL10" in r.output
    bad = runner.invoke(app, ["train", str(d), "--regularizer", "l2", "--out", str(p)])
    assert bad.exit_code == 2 and "regularizer" in bad.output
    bad = runner.invoke(app, ["evaluate", str(p), "--targets", "x"])
    assert bad.exit_code == 2 and "--targets" in bad.output
    bad = runner.invoke(app, ["train", str(tmp_path / "nope.npz"), "--out", str(p)])
    assert bad.exit_code == 2 and "path" in bad.output


def test_missing_rl_extra_names_the_install():
    import subprocess
    import sys

    code = ("import sys; sys.modules['gymnasium'] = None\n"
            "try:\n    import iclr25.gsd\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert "pip install 'iclr25[rl]'" in out.stdout, out.stderr


def test_cli_regularizer_choices_are_the_configs_literal():
    import typing

    import click
    import typer

    from iclr25.gsd.cli import app
    from iclr25.gsd.training import Regularizer

    train_cmd = typer.main.get_command(app).commands["train"]
    opt = next(p for p in train_cmd.params if p.name == "regularizer")
    assert opt.type_descriptor.annotation == Regularizer
    ctx = click.Context(train_cmd)
    assert [opt.process_value(ctx, v) for v in typing.get_args(Regularizer)] == list(
        typing.get_args(Regularizer))
    with pytest.raises(typer.BadParameter, match="'gsd', 'none', 'spectral'"):
        opt.process_value(ctx, "l2")
