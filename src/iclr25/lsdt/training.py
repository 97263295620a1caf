"""Training and evaluation of (Long-Short) Decision Transformers, CleanRL style.

Read top to bottom: sample DT windows from episodes, predict actions at state tokens,
masked MSE, AdamW with linear warm-up then cosine decay, gradient clipping (the official
``scripts/train.py`` recipe). :func:`evaluate` rolls the policy out conditioned on a target
return that is decreased by the rewards received.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from iclr25._checks import check_int, check_range, resolve_seed
from iclr25._optional import require
from iclr25._progress import progress_bar
from iclr25.datasets.control import OfflineDataset
from iclr25.lsdt.model import LongShortDecisionTransformer

gym = require("gymnasium", "rl")

__all__ = ["EvalResult", "SequenceSampler", "data_returns", "evaluate", "load",
           "returns_summary", "save", "train"]

_Schedule = torch.optim.lr_scheduler.LambdaLR


class SequenceSampler:
    """Random DT windows of ``context`` steps from an :class:`OfflineDataset`.

    A window starts at a uniform step of a uniform-by-length episode (the DT rule), except
    that an episode of T <= K steps is always taken whole, so that its first step (a cue, say)
    is in every window drawn from it. Windows shorter than ``context`` (episode end, or a
    whole short episode) are padded with zeros *after* their last step and masked out of the
    loss. DT's code pads on the left and needs an attention mask; every mixer here is causal,
    so right padding is never seen by the real steps, which then read exactly what they read
    at evaluation (a history that starts at position 0), with no mask to apply.

    ``sample() -> (rtg (B,K,1), states (B,K,obs), actions (B,K,act), timesteps (B,K), mask (B,K))``.
    """

    def __init__(self, dataset: OfflineDataset, context: int, batch_size: int, *,
                 rtg_scale: float = 1000.0, seed: int | torch.Generator | None = None) -> None:
        if not isinstance(dataset, OfflineDataset):
            raise TypeError(f"dataset must be an OfflineDataset, got {type(dataset).__name__}")
        self.K = check_int(context, "context", 1)
        self.B = check_int(batch_size, "batch_size", 1)
        rtg_scale = check_range(rtg_scale, "rtg_scale", 0.0, low_open=True)
        self.gen = resolve_seed(seed)
        self.ds = dataset
        self.rtg = dataset.returns_to_go(rtg_scale)
        ends = dataset.episode_ends
        starts = torch.cat([ends.new_zeros(1), ends[:-1]])
        self.ep = dataset.episode_index()
        self.t_in_ep = torch.arange(len(dataset), device=ends.device) - starts[self.ep]
        self.ep_end = ends[self.ep]                                    # (N,) one past episode end
        # where a window starting at each step begins: the episode's start if it fits whole
        whole = (ends - starts <= self.K)[self.ep]
        self.window_start = torch.where(whole, starts[self.ep],
                                        torch.arange(len(dataset), device=ends.device))

    def sample(self) -> tuple[torch.Tensor, ...]:
        K, dev = self.K, self.ds.observations.device
        start = self.window_start[torch.randint(len(self.ds), (self.B,), generator=self.gen)
                                  .to(dev)]
        idx = start[:, None] + torch.arange(K, device=dev)              # (B, K)
        mask = idx < self.ep_end[start][:, None]
        src = idx.clamp(max=len(self.ds) - 1)

        def take(x: torch.Tensor) -> torch.Tensor:
            out = x[src]
            return out * mask.view(*mask.shape, *([1] * (out.dim() - 2))).to(out.dtype)

        return (take(self.rtg)[..., None], take(self.ds.observations), take(self.ds.actions),
                take(self.t_in_ep), mask)


def train(model: LongShortDecisionTransformer, dataset: OfflineDataset, *, steps: int,
          batch_size: int = 64, lr: float = 1e-4, warmup: int = 1000, weight_decay: float = 1e-4,
          grad_clip: float = 0.25, rtg_scale: float = 1000.0,
          seed: int | torch.Generator | None = 0, verbose: bool | None = None) -> list[float]:
    """Fit ``model`` to predict the dataset's actions (masked MSE at state tokens).

    Sets the model's ``state_mean``/``state_std``, ``action_scale`` and ``rtg_scale``
    buffers from the dataset first. Trains in place.

    Args:
        model: the policy.
        dataset: episodes whose obs/act dims match the model.
        steps, batch_size, lr, warmup, weight_decay, grad_clip: the optimisation (AdamW,
            linear warm-up over ``warmup`` steps, then cosine to 0).
        rtg_scale: returns-to-go are divided by this.
        seed: sampling and dropout randomness.
        verbose: progress bar (default: only on a terminal).

    Returns:
        The loss of every step.

    Raises:
        TypeError: wrong types. ValueError: non-positive ``steps``, ``lr``, ``rtg_scale``,
            negative ``weight_decay``; dataset dims that differ from the model's.
    """
    if not isinstance(model, LongShortDecisionTransformer):
        raise TypeError(f"model must be a LongShortDecisionTransformer, got "
                        f"{type(model).__name__}")
    if not isinstance(dataset, OfflineDataset):
        raise TypeError(f"dataset must be an OfflineDataset, got {type(dataset).__name__}")
    steps = check_int(steps, "steps", 1)
    lr = check_range(lr, "lr", 0.0, low_open=True)
    warmup = check_int(warmup, "warmup", 0)
    weight_decay = check_range(weight_decay, "weight_decay", 0.0)
    grad_clip = check_range(grad_clip, "grad_clip", 0.0, low_open=True)
    rtg_scale = check_range(rtg_scale, "rtg_scale", 0.0, low_open=True)
    if (dataset.obs_dim, dataset.act_dim) != (model.obs_dim, model.act_dim):
        raise ValueError(f"dataset has obs/act dims ({dataset.obs_dim}, {dataset.act_dim}) but "
                         f"the model expects ({model.obs_dim}, {model.act_dim})")
    gen = resolve_seed(seed)
    dev = next(model.parameters()).device
    sampler = SequenceSampler(dataset, model.context, batch_size, rtg_scale=rtg_scale, seed=gen)
    _normalise(model, dataset, rtg_scale)
    opt, sched = _optimiser(model, steps, lr, warmup, weight_decay)

    # the loop; dropout masks come from a seeded fork of the RNG, the global one is restored
    losses = []
    devices = [dev] if dev.type == "cuda" else []
    with torch.random.fork_rng(devices=devices), \
            progress_bar(steps, "LSDT training", verbose=verbose) as advance:
        torch.manual_seed(int(torch.randint(2**62, (1,), generator=gen)))
        model.train()
        for _ in range(steps):
            batch = tuple(x.to(dev) for x in sampler.sample())
            losses.append(_train_step(model, opt, sched, batch, grad_clip=grad_clip))
            advance(loss=losses[-1])
    model.eval()
    return losses


def _normalise(model: LongShortDecisionTransformer, dataset: OfflineDataset,
               rtg_scale: float) -> None:
    """Set the model's normalisation buffers from the data."""
    dev = next(model.parameters()).device
    obs = dataset.observations.to(dev)
    model.state_mean.copy_(obs.mean(0))
    model.state_std.copy_(obs.std(0).clamp(min=1e-6))
    model.action_scale.copy_(dataset.actions.abs().amax(0).clamp(min=1e-6).to(dev))
    model.rtg_scale.fill_(rtg_scale)


def _optimiser(model: LongShortDecisionTransformer, steps: int, lr: float, warmup: int,
               weight_decay: float) -> tuple[torch.optim.Optimizer, _Schedule]:
    """AdamW with a linear warm-up over ``warmup`` steps, then cosine decay to 0."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, fused=True)

    def lr_at(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(steps - warmup, 1)))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_at)


def _train_step(model: LongShortDecisionTransformer, opt: torch.optim.Optimizer,
                sched: _Schedule, batch: tuple[torch.Tensor, ...], *, grad_clip: float
                ) -> float:
    """One optimiser step on a batch of windows, ``(rtg, s, a, t, mask)`` as
    :meth:`SequenceSampler.sample` draws them: masked MSE at the state tokens; its loss."""
    rtg, s, a, t, mask = batch
    pred = model(rtg, s, a, t)
    err = F.mse_loss(pred, a, reduction="none").mean(-1)
    loss = (err * mask).sum() / mask.sum()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
    sched.step()
    return float(loss.detach())


@dataclass
class EvalResult:
    """Episode returns (n_episodes,) and their mean."""

    returns: torch.Tensor
    mean_return: float


@torch.no_grad()
def evaluate(model: LongShortDecisionTransformer, env_id: str, *, target_return: float,
             n_episodes: int = 10, seed: int | torch.Generator | None = 0,
             **env_kwargs) -> EvalResult:
    """Roll the model out in ``n_episodes`` copies of a gymnasium env, stepping them together.

    The returns-to-go token starts at ``target_return / rtg_scale`` and drops by each reward.
    Episode i is reset with seed ``seed + i`` (an int ``seed``; a generator or None draws the
    base seed).

    Raises:
        ValueError: an unknown ``env_id``; env spaces that differ from the model's dims; an
            env time limit longer than the model's ``max_timestep``; ``n_episodes < 1``.
    """
    n = check_int(n_episodes, "n_episodes", 1)
    target_return = check_range(target_return, "target_return")
    base = check_int(seed, "seed", 0) if isinstance(seed, int) else \
        int(torch.randint(2**31 - n, (1,), generator=resolve_seed(seed)))
    envs, o_dim = _make_envs(model, env_id, n, env_kwargs)
    p = next(model.parameters())
    model.eval()
    obs = torch.tensor(np.stack([e.reset(seed=base + i)[0] for i, e in enumerate(envs)]),
                       dtype=p.dtype, device=p.device)
    states, actions = [obs], []
    rtg = [torch.full((n, 1), target_return, dtype=p.dtype, device=p.device) / model.rtg_scale]
    done = torch.zeros(n, dtype=torch.bool)
    total = torch.zeros(n, dtype=torch.float64)
    t = 0
    while not bool(done.all()) and t < model.max_timestep:
        K = model.context
        S = torch.stack(states[-K:], 1)
        placeholder = torch.zeros(n, model.act_dim, dtype=p.dtype, device=p.device)
        A = torch.stack([*(actions[-(K - 1):] if K > 1 else []), placeholder], 1)
        R = torch.stack(rtg[-K:], 1)
        T = torch.arange(t - S.shape[1] + 1, t + 1, device=p.device).repeat(n, 1)
        act = model.get_action(R, S, A, T)
        a_np = act.cpu().numpy()
        nxt, rew = [], torch.zeros(n, dtype=p.dtype)
        for i, e in enumerate(envs):
            if done[i]:
                nxt.append(np.zeros(o_dim, np.float32))
                continue
            o, r, term, trunc, _ = e.step(a_np[i])
            total[i] += r
            rew[i] = r
            done[i] = bool(term or trunc)
            nxt.append(np.asarray(o, np.float32))
        actions.append(act)
        states.append(torch.tensor(np.stack(nxt), dtype=p.dtype, device=p.device))
        rtg.append(rtg[-1] - rew.to(p.device)[:, None] / model.rtg_scale)
        t += 1
    return EvalResult(total.float(), float(total.mean()))


def _make_envs(model: LongShortDecisionTransformer, env_id: str, n: int, env_kwargs: dict
               ) -> tuple[list, int]:
    """``n`` copies of the env and its observation size, checked against the model."""
    try:
        envs = [gym.make(env_id, **env_kwargs) for _ in range(n)]
    except gym.error.Error as exc:
        raise ValueError(f"env_id {env_id!r} is not a registered gymnasium env ({exc})") from None
    limit = envs[0].spec.max_episode_steps if envs[0].spec is not None else None
    if limit is not None and limit > model.max_timestep:
        raise ValueError(f"env_id {env_id!r} runs {limit} steps but the model embeds only "
                         f"max_timestep={model.max_timestep}; returns would be cut short")
    o_dim = int(np.prod(envs[0].observation_space.shape))
    a_dim = int(np.prod(envs[0].action_space.shape))
    if (o_dim, a_dim) != (model.obs_dim, model.act_dim):
        raise ValueError(f"env_id {env_id!r} has obs/act dims ({o_dim}, {a_dim}) but the model "
                         f"expects ({model.obs_dim}, {model.act_dim})")
    return envs, o_dim


def save(model: LongShortDecisionTransformer, path: str | Path, *,
         data: OfflineDataset | None = None) -> Path:
    """Write weights (incl. normalisation buffers) and config (metadata) to ``.safetensors``;
    with ``data`` (the training data), its episode returns' summary too (see
    :func:`data_returns`), from which evaluation suggests target returns.

    Raises:
        ValueError: ``path`` does not end in ``.safetensors``.
    """
    path = Path(path)
    if path.suffix != ".safetensors":
        raise ValueError(f"path must end in .safetensors, got {path.name!r}")
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    meta = {"method": "lsdt", "config": json.dumps(model.config)}
    if data is not None:
        meta["data_returns"] = json.dumps(returns_summary(data.returns()))
    save_file(tensors, str(path), metadata=meta)
    return path


def returns_summary(returns: torch.Tensor) -> dict[str, float]:
    """``{"min", "median", "p90", "max", "mean"}`` of (E,) episode returns: the targets a
    decision transformer can be conditioned on (it rarely exceeds the best of its data)."""
    r = returns.double()
    q = torch.quantile(r, torch.tensor([0.5, 0.9], dtype=r.dtype))
    return {"min": float(r.min()), "median": float(q[0]), "p90": float(q[1]),
            "max": float(r.max()), "mean": float(r.mean())}


def data_returns(path: str | Path) -> dict[str, float] | None:
    """The training data's :func:`returns_summary` recorded by :func:`save` (None: the file
    records none, e.g. written before it was recorded)."""
    try:
        with safe_open(str(path), framework="pt") as f:
            raw = (f.metadata() or {}).get("data_returns")
    except (OSError, SafetensorError):
        return None
    return None if raw is None else json.loads(raw)


def load(path: str | Path, *, device: str | torch.device | None = None
         ) -> LongShortDecisionTransformer:
    """Read a model written by :func:`save`, in eval mode, on ``device`` (default CPU).

    Raises:
        ValueError: missing or unreadable file, or missing config/weights.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} does not exist")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
        if meta.get("method", "lsdt") != "lsdt" or "obs_dim" in meta:
            # a GSD policy's header also has a config (and its dims, and since issue 68 its
            # method): say what the file is, not which keyword LSDT's __init__ lacks
            raise ValueError(f"path {str(path)!r} is a GSD policy (written by `gsd train`), "
                             f"not an LSDT model: evaluate it with `iclr25 gsd evaluate`")
        config = json.loads(meta["config"])
        model = LongShortDecisionTransformer(**config)
        model.load_state_dict(load_file(str(path)))
    except (OSError, KeyError, RuntimeError, TypeError, SafetensorError,
            json.JSONDecodeError) as exc:
        raise ValueError(f"path {str(path)!r} is not a saved LSDT model ({exc})") from None
    return model.to(device or "cpu").eval()
