"""LSDT vs our Decision Transformer, Decision ConvFormer and (if installed) Hugging Face's
``transformers.DecisionTransformerModel``: train-step time, ms per action, parameters, growth
with context K, and quality on DelayedCue (same data and seeds for every arm).

Targets (issue 17 §7): LSDT train step <= 1.5x our DT's and <= 1.2x HF DT's at K = 20,
hidden 128, batch 64; LSDT >= HF DT on both claim tasks (the Pendulum task is in the claim;
run ``iclr25 reproduce lsdt --scale full`` for it).

    python benchmarks/lsdt.py --quick
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import time

import torch
from _timing import row

from iclr25.datasets.control import OfflineDataset
from iclr25.lsdt import (
    DELAYED_CUE_ID,
    LongShortDecisionTransformer,
    SequenceSampler,
    decision_convformer,
    decision_transformer,
    delayed_cue_dataset,
    evaluate,
    normalized_score,
)
from iclr25.lsdt.claim import ARMS, MODEL, OPT, LongShort, _arm, _data
from iclr25.lsdt.testbed import PENDULUM_EXPERT_RETURN

M = "lsdt"

HAVE_HF = importlib.util.find_spec("transformers") is not None


def arms(obs_dim: int, act_dim: int, **kw) -> dict[str, torch.nn.Module]:
    torch.manual_seed(0)
    out = {"DT": decision_transformer(obs_dim, act_dim, **kw),
           "DC": decision_convformer(obs_dim, act_dim, **kw),
           "LSDT": LongShortDecisionTransformer(obs_dim, act_dim, conv_ratio=0.5, **kw)}
    hf = hf_dt(obs_dim, act_dim, kw["hidden"], kw["n_blocks"], kw["context"])
    if hf is not None:
        out["HF DT"] = hf
    return out


def hf_dt(obs_dim, act_dim, hidden, n_blocks, context):
    """HF's GPT-2 based DT with our width, depth and 2 heads, or None without transformers."""
    try:
        from transformers import DecisionTransformerConfig, DecisionTransformerModel
    except ImportError:
        return None
    cfg = DecisionTransformerConfig(state_dim=obs_dim, act_dim=act_dim, hidden_size=hidden,
                                    n_layer=n_blocks, n_head=2, max_ep_len=4096,
                                    n_positions=3 * context)
    return DecisionTransformerModel(cfg)


def step_fn(name: str, model: torch.nn.Module):
    """One forward (+ backward + AdamW step when ``opt``) in the model's own signature."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)

    def run(batch, backward: bool):
        rtg, s, a, t, mask = batch
        if name == "HF DT":
            pred = model(states=s, actions=a, returns_to_go=rtg, timesteps=t,
                         attention_mask=mask.long(), return_dict=True).action_preds
        else:
            pred = model(rtg, s, a, t)
        if backward:
            loss = (((pred - a) ** 2).mean(-1) * mask).sum() / mask.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return pred

    return run


def timing(ds: OfflineDataset, context: int, hidden: int, n_blocks: int, batch: int,
           reps: int) -> list[tuple]:
    """Median ms per train step and per action of each model. The models take turns, one
    step each per round, so that a machine whose speed drifts skews none of the ratios."""
    models = arms(ds.obs_dim, ds.act_dim, hidden=hidden, n_blocks=n_blocks, context=context)
    samp = SequenceSampler(ds, context, batch, rtg_scale=1.0, seed=0)
    batches = [samp.sample() for _ in range(reps + 1)]
    one = tuple(x[:1] for x in batches[0])
    runs = {name: step_fn(name, m) for name, m in models.items()}
    step = {name: [] for name in models}
    cpu = {name: [] for name in models}
    act = {name: [] for name in models}
    for name, m in models.items():                                     # warm-up
        run = runs[name]
        m.train()
        run(batches[0], True)
    for b in batches[1:]:
        for name, m in models.items():
            m.train()
            t0, c0 = time.perf_counter(), time.process_time()
            runs[name](b, True)
            step[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
            m.eval()
            with torch.no_grad():
                t0 = time.perf_counter()
                runs[name](one, False)
                act[name].append(time.perf_counter() - t0)
    return [(name, context, 1e3 * statistics.median(step[name]),
             1e3 * statistics.median(act[name]), sum(p.numel() for p in m.parameters()),
             1e3 * statistics.median(cpu[name]))
            for name, m in models.items()]


class HFPolicy(torch.nn.Module):
    """HF's DT in our policy signature, with our state normalisation and action scaling, so
    that :func:`evaluate` rolls it out unchanged."""

    def __init__(self, ds: OfflineDataset, context: int, rtg_scale: float) -> None:
        super().__init__()
        self.obs_dim, self.act_dim, self.context = ds.obs_dim, ds.act_dim, context
        self.hf = hf_dt(ds.obs_dim, ds.act_dim, MODEL["hidden"], MODEL["n_blocks"], context)
        self.max_timestep = 4096
        self.register_buffer("rtg_scale", torch.tensor(float(rtg_scale)))
        self.register_buffer("mean", ds.observations.mean(0))
        self.register_buffer("std", ds.observations.std(0).clamp(min=1e-6))
        self.register_buffer("scale", ds.actions.abs().amax(0).clamp(min=1e-6))

    def forward(self, rtg, s, a, t, mask=None):
        mask = torch.ones(t.shape, dtype=torch.long) if mask is None else mask.long()
        return self.hf(states=(s - self.mean) / self.std, actions=a / self.scale,
                       returns_to_go=rtg, timesteps=t, attention_mask=mask,
                       return_dict=True).action_preds * self.scale

    @torch.no_grad()
    def get_action(self, rtg, s, a, t):
        K = self.context
        return self(rtg[:, -K:], s[:, -K:], a[:, -K:], t[:, -K:])[:, -1]


def train_hf(policy: HFPolicy, ds: OfflineDataset, steps: int, seed: int) -> None:
    """The recipe of :func:`iclr25.lsdt.train` with the claim's optimisation (masked MSE,
    AdamW, warm-up + cosine, clip 0.25) for HF's model, which our ``train`` does not accept."""
    samp = SequenceSampler(ds, policy.context, OPT["batch_size"],
                           rtg_scale=float(policy.rtg_scale), seed=seed)
    opt = torch.optim.AdamW(policy.parameters(), lr=OPT["lr"], weight_decay=1e-4)
    warm = OPT["warmup"]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: (i + 1) / warm if i < warm else
                                              0.5 * (1 + math.cos(math.pi * (i - warm)
                                                                  / max(steps - warm, 1))))
    torch.manual_seed(seed)
    policy.train()
    for _ in range(steps):
        rtg, s, a, t, mask = samp.sample()
        loss = (((policy(rtg, s, a, t, mask) - a) ** 2).mean(-1) * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.25)
        opt.step()
        sched.step()
    policy.eval()


def quality(setting: LongShort) -> list[tuple]:
    """The claim's data, models and recipe on both tasks, plus HF's DT trained alike."""
    rows = []
    for seed in setting.seeds:
        cue, pend = _data(setting, seed)
        for task, ds in (("DelayedCue success", cue), ("Pendulum normalised return", pend)):
            for arm in ARMS:
                _, after = _arm(setting, "cue" if ds is cue else "pendulum", arm, seed, ds,
                                "cpu")  # (step-0 score, trained score)
                rows.append((task, arm, seed, after))
            if not HAVE_HF:
                continue
            if ds is cue:
                hf = HFPolicy(ds, MODEL["context"], 1.0)
                train_hf(hf, ds, setting.cue_steps, seed)
                v = evaluate(hf, DELAYED_CUE_ID, target_return=1.0,
                             n_episodes=setting.cue_tests, seed=seed + 10_000).mean_return
            else:
                hf = HFPolicy(ds, MODEL["context"], 1000.0)
                train_hf(hf, ds, setting.pendulum_steps, seed)
                v = normalized_score(evaluate(hf, "Pendulum-v1",
                                              target_return=PENDULUM_EXPERT_RETURN,
                                              n_episodes=setting.pendulum_tests,
                                              seed=seed + 10_000).returns)
            rows.append((task, "HF DT", seed, v))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    reps = 5 if args.quick else 30
    ds = delayed_cue_dataset(200, 40, seed=0)
    contexts = (10, 20) if args.quick else (10, 20, 40)
    rows = [r for K in contexts for r in timing(ds, K, 128, 3, 64, reps)]
    print("| model | K | train ms/step | ms/action | params |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.2f} | {r[4]:,} |")
    at20 = {r[0]: r for r in rows if r[1] == 20}
    for peer, target in (("DT", 1 / 1.5), ("HF DT", 1 / 1.2)):
        if peer not in at20:
            print("transformers not installed: HF DT peer skipped (pip install transformers)")
            continue
        a, b = at20["LSDT"], at20[peer]
        row(M, "train step K=20, hidden 128, batch 64", a[5], b[5], unit="ms CPU",
            peer_name="our Decision Transformer" if peer == "DT" else
            "transformers.DecisionTransformerModel", target=target, wall=(a[2], b[2]),
            agreement="same batches, width, depth", note=f"median of {reps} alternating "
            f"steps; target: LSDT <= {1 / target:.1f}x")
    for name in at20:
        ks = [r for r in rows if r[0] == name]  # noqa: B007
        print(f"growth {name}: " + ", ".join(f"K={r[1]}: {r[2]:.1f} ms" for r in ks))
    setting = (LongShort(seeds=(0,), cue_steps=200, pendulum_steps=300, pendulum_episodes=20,
                         pendulum_tests=4) if args.quick else
               LongShort(seeds=(0,), cue_steps=1000, pendulum_steps=3000))
    print(f"\nClaim tasks, the claim's models and recipe, seed 0 ({setting.cue_steps} cue / "
          f"{setting.pendulum_steps} Pendulum steps)")
    print("| task | model | seed | value |")
    print("|---|---|---|---|")
    q = quality(setting)
    for r in q:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} |")
    vals = {(r[0], r[1]): r[3] for r in q}
    for task in dict.fromkeys(r[0] for r in q):
        if (task, "HF DT") in vals:
            row(M, f"{task}, seed 0 ({setting.cue_steps} cue / {setting.pendulum_steps} "
                "Pendulum steps)", vals[(task, "LSDT")], vals[(task, "HF DT")], better="higher",
                unit="score", peer_name="transformers.DecisionTransformerModel",
                agreement="same data, recipe and seed")


if __name__ == "__main__":
    main()
