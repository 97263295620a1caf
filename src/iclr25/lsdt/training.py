"""Training and evaluation of (Long-Short) Decision Transformers, CleanRL style.

Read top to bottom: sample DT windows from episodes, predict actions at state tokens,
masked MSE, AdamW with linear warm-up then cosine decay, gradient clipping (the official
``scripts/train.py`` recipe). Rolling a policy out is
:mod:`~iclr25.lsdt.evaluation`'s, saving and loading :mod:`~iclr25.lsdt.io`'s.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import check_int, check_range, resolve_seed
from iclr25._contract import NonNegative, NonNegativeInt, Positive, PositiveInt, checked
from iclr25._engine import Engine, EngineOptions, Unpack, gather, local_rows
from iclr25._train import fit_minibatch
from iclr25.datasets.control import OfflineDataset
from iclr25.lsdt.model import LongShortDecisionTransformer

__all__ = ["SequenceSampler", "train"]

_Schedule = torch.optim.lr_scheduler.LambdaLR


@checked
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
                 rtg_scale: Positive = 1000.0, seed: int | torch.Generator | None = None
                 ) -> None:
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
        return self.windows(self.draw())

    def draw(self) -> torch.Tensor:
        """(B,) uniform steps of the dataset, the windows' anchors (from ``seed``)."""
        return torch.randint(len(self.ds), (self.B,), generator=self.gen)

    def windows(self, steps: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The windows anchored at ``steps`` (b,), as :meth:`sample` returns them."""
        K, dev = self.K, self.ds.observations.device
        start = self.window_start[steps.to(dev)]
        idx = start[:, None] + torch.arange(K, device=dev)              # (B, K)
        mask = idx < self.ep_end[start][:, None]
        src = idx.clamp(max=len(self.ds) - 1)

        def take(x: torch.Tensor) -> torch.Tensor:
            out = x[src]
            return out * mask.view(*mask.shape, *([1] * (out.dim() - 2))).to(out.dtype)

        return (take(self.rtg)[..., None], take(self.ds.observations), take(self.ds.actions),
                take(self.t_in_ep), mask)


@checked
def train(model: LongShortDecisionTransformer, dataset: OfflineDataset, *, steps: PositiveInt,
          batch_size: PositiveInt = 64, lr: Positive = 1e-4, warmup: NonNegativeInt = 1000,
          weight_decay: NonNegative = 1e-4, grad_clip: Positive = 0.25,
          rtg_scale: Positive = 1000.0,
          seed: int | torch.Generator | None = 0, verbose: bool | None = None,
          **engine: Unpack[EngineOptions]) -> list[float]:
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
        **engine: how the loop runs (:class:`iclr25._engine.EngineOptions`: ``devices``,
            ``strategy``, ``precision``, ``checkpoint``, ``checkpoint_every``, ``resume``);
            ``batch_size`` is the global batch (under DDP each process takes its share of
            the windows, and the masked mean runs over the whole batch's steps).

    Returns:
        The loss of every step.

    Raises:
        TypeError: wrong types. ValueError: non-positive ``steps``, ``lr``, ``rtg_scale``,
            negative ``weight_decay``; dataset dims that differ from the model's; bad
            engine options, or a checkpoint that does not fit (named).
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
    Engine.of(engine, dev.type)
    sampler = SequenceSampler(dataset, model.context, batch_size, rtg_scale=rtg_scale, seed=gen)
    _normalise(model, dataset, rtg_scale)
    opt, sched = _optimiser(model, steps, lr, warmup, weight_decay)

    # dropout masks come from a seeded fork of the RNG, the global one is restored
    devices = [dev] if dev.type == "cuda" else []
    anchors = torch.arange(len(dataset), device=dataset.observations.device)
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(int(torch.randint(2**62, (1,), generator=gen)))
        losses = fit_minibatch(
            _Step(model, sampler), lambda loss, _: loss, anchors, anchors, epochs=1,
            batch_size=batch_size, optimizer=opt, seed=gen, scheduler=sched,
            batches=lambda _: (sampler.draw() for _ in range(steps)), interval="step",
            grad_clip=grad_clip, gathered=True, progress="LSDT training", steps=steps,
            verbose=verbose,
            **engine)
    model.eval()
    model.longest_episode = dataset.longest_episode   # evaluate's horizon check reads it
    return losses


class _Step(nn.Module):
    """Anchor steps (the global batch) -> the masked MSE at the state tokens of their
    windows: under DDP each process predicts its share of the windows and the sums are
    gathered, so the mean runs over the whole batch's steps."""

    def __init__(self, model: LongShortDecisionTransformer, sampler: SequenceSampler) -> None:
        super().__init__()
        self.model, self.sampler = model, sampler

    def forward(self, steps: torch.Tensor) -> torch.Tensor:
        dev = next(self.model.parameters()).device
        rtg, s, a, t, mask = (x.to(dev) for x in self.sampler.windows(local_rows(steps)))
        pred = self.model(rtg, s, a, t)
        err = F.mse_loss(pred, a, reduction="none").mean(-1)
        return gather(err * mask).sum() / gather(mask.to(err.dtype)).sum()


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

