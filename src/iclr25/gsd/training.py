"""GSD / InfoGAIL training in one CleanRL-style file: read it top to bottom.

One loop gives four methods through ``GSDConfig.regularizer`` and ``clip``:

- ``"none"``, clip 0: InfoGAIL (IG), unbounded discriminator reward;
- ``"none"``, clip 10: IG+M, bounded discriminator D = c·sigmoid(f) + b (official offset b);
- ``"spectral"``: IG+M+SN, spectral-normalised posterior (uniform Lipschitz bound);
- ``"gsd"``: GSD, the posterior mean may only move as far as the visited (s, a) are
  task-relevant (:func:`~iclr25.gsd.relevance_constraint`), enforced by a dual variable.

Each iteration: (1) roll out ``num_envs`` episodes with one code z ~ N(0, I) per episode,
(2-3) ``d_steps`` times, as the official ``vild_main`` loop: one discriminator step (BCE on D,
256 expert pairs against the whole policy batch, gradient penalty centred at 1) and one
full-batch posterior step (−log q(z | s, a), minus λ·mean(violation) for GSD, then the dual
step), (4) reward softplus(D) + λ_I·log q, (5) GAE, (6) PPO. The env's own reward is never
used for training. Kept from before (not the official code's): PPO with minibatches and a
return-scale normaliser, no BC pre-training of the policy.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import (
    cat_batches,
    check_choice,
    check_int,
    check_range,
    resolve_seed,
    user_stacklevel,
)
from iclr25._contract import (
    NonNegative,
    Positive,
    PositiveInt,
    Probability,
    checked,
)
from iclr25._progress import track
from iclr25.datasets.control import OfflineDataset, outlasting
from iclr25.gsd.gym import GymVec, make_env, unit_actions
from iclr25.gsd.networks import BoundedDiscriminator, Clip, GaussianPosterior, LatentPolicy
from iclr25.gsd.regularizer import DualVariable, infogail_reward, relevance_constraint

__all__ = ["GSDConfig", "GSDResult", "Regularizer", "build_networks", "gradient_penalty",
           "style_coded_bc", "train"]

Regularizer = Literal["gsd", "none", "spectral"]


@checked
@dataclass(frozen=True)
class GSDConfig:
    """Every choice of a run (defaults: the spec's LaneReach setting)."""

    regularizer: Regularizer = "gsd"
    clip: Clip = 10.0               # c; 0 = unbounded discriminator (IG)
    z_dim: PositiveInt = 2
    hidden: tuple[int, ...] = (64, 64)
    num_envs: PositiveInt = 256
    iterations: PositiveInt = 120            # one episode (the env's horizon) per env per iteration
    info_weight: NonNegative = 0.1         # λ_I
    relevance_scale: Positive = 1e-2    # λ_C
    dual_init: Positive = 100.0         # λ₀
    dual_lr: Positive = 1e-3
    slack: NonNegative = 1e-6
    sn_lipschitz: Positive = 1.0        # input scale of the spectral-norm posterior
    gp_weight: NonNegative = 0.1
    gp_center: NonNegative = 1.0           # official ``gp_center``: ‖∇D‖ is pulled towards 1
    d_steps: PositiveInt = 5  # official ``d_step``: discriminator steps per iteration
    disc_batch: PositiveInt = 256  # official ``mini_batch_size``: expert pairs per step
    disc_lr: Positive = 1e-3            # official ``learning_rate_d``
    posterior_lr: Positive = 1e-3
    policy_lr: Positive = 3e-4
    gamma: Probability = 0.99
    gae_lambda: Probability = 0.95
    update_epochs: PositiveInt = 4
    num_minibatches: PositiveInt = 4
    clip_coef: Positive = 0.2
    ent_coef: NonNegative = 0.0
    vf_coef: NonNegative = 0.5
    max_grad_norm: Positive = 0.5

    def __post_init__(self) -> None:
        check_choice(self.regularizer, "regularizer", Regularizer)
        check_range(self.clip, "clip", 0.0)
        if self.regularizer == "gsd" and self.clip <= 0:
            raise ValueError("clip must be > 0 with regularizer='gsd' (relevance is D/c)")
        check_int(self.z_dim, "z_dim", 1)
        check_int(self.num_envs, "num_envs", 1)
        check_int(self.iterations, "iterations", 1)
        check_int(self.num_minibatches, "num_minibatches", 1)
        check_int(self.d_steps, "d_steps", 1)
        check_int(self.disc_batch, "disc_batch", 1)
        check_range(self.gp_weight, "gp_weight", 0.0)
        check_range(self.relevance_scale, "relevance_scale", 0.0, low_open=True)
        check_range(self.dual_init, "dual_init", 0.0, low_open=True)
        check_range(self.info_weight, "info_weight", 0.0)


@checked
@dataclass
class GSDResult:
    """The trained networks, one dict of diagnostics per iteration, the env trained on
    (``env_id``; None when unknown: a file written before it was recorded) and the training
    episodes' horizon (``max_episode_steps``; None: the env's time limit)."""

    policy: LatentPolicy
    discriminator: BoundedDiscriminator
    posterior: GaussianPosterior
    dual: DualVariable
    config: GSDConfig
    history: list[dict[str, float]] = field(default_factory=list)
    env_id: str | None = None
    max_episode_steps: int | None = None


def build_networks(cfg: GSDConfig, obs_dim: int, act_dim: int, *, seed: int = 0,
                   device: torch.device | str | None = None) -> dict[str, nn.Module]:
    """The networks of an arm of ``cfg``, seeded and on ``device``, named as the fields of
    :class:`GSDResult`: policy (actor-critic), discriminator, posterior q(z | s, a) (spectral-
    normalised for ``regularizer="spectral"``) and the dual variable λ. Training builds them
    here, and :func:`iclr25.gsd.io.load` builds them here before reading the weights in."""
    nets = {"policy": LatentPolicy(obs_dim, act_dim, cfg.z_dim, hidden=cfg.hidden, seed=seed),
            "discriminator": BoundedDiscriminator(obs_dim, act_dim, cfg.clip,
                                                  hidden=cfg.hidden, seed=seed + 2),
            "posterior": GaussianPosterior(obs_dim, act_dim, cfg.z_dim, hidden=cfg.hidden,
                                           spectral=cfg.regularizer == "spectral",
                                           lipschitz=cfg.sn_lipschitz, seed=seed + 3),
            "dual": DualVariable(cfg.dual_init, cfg.dual_lr, cfg.slack)}
    return {name: net.to(device or "cpu") for name, net in nets.items()}


@checked
def gradient_penalty(disc: BoundedDiscriminator, x_expert: torch.Tensor,
                     x_policy: torch.Tensor, center: float = 1.0,
                     u: torch.Tensor | None = None) -> torch.Tensor:
    """The official ``gp_regularizer`` (``gp_alpha="mix"``): mean (‖∇ₓD(x̂)‖ − center)² at
    x̂ = u·x_expert + (1 − u)·x_policy, the gradient of the full output D (offset included).

    Args:
        x_expert, x_policy: (k, obs_dim + act_dim) pairs, rows matched.
        u: (k, 1) mixing weights in [0, 1] (default: uniform draws from the global RNG).
    """
    pair = {"x_expert": (x_expert, disc.obs_dim + disc.act_dim),
            "x_policy": (x_policy, disc.obs_dim + disc.act_dim)}
    cat_batches(**pair, **({} if u is None else {"u": (u, 1)}))
    u = (torch.rand(len(x_expert), 1) if u is None else u).to(x_expert)
    xm = (u * x_expert + (1 - u) * x_policy).requires_grad_(True)
    g, = torch.autograd.grad(disc(xm[:, : disc.obs_dim], xm[:, disc.obs_dim:]).sum(), xm,
                             create_graph=True)
    return ((g.norm(dim=-1) - center) ** 2).mean()


def _check_demos(demos: OfflineDataset, env) -> None:
    if not isinstance(demos, OfflineDataset):
        raise TypeError(f"demos must be an OfflineDataset, got {type(demos).__name__}")
    if demos.obs_dim != env.obs_dim:
        raise ValueError(f"demos obs dim {demos.obs_dim} != the env's {env.obs_dim}")
    if demos.act_dim != env.act_dim:
        raise ValueError(f"demos action dim {demos.act_dim} != the env's {env.act_dim}")
    if bool((demos.actions.abs() > 1.0 + 1e-6).any()):
        raise ValueError("demos actions lie outside the env's action space [-1, 1]")


@checked
def train(env_id: str, demos: OfflineDataset, config: GSDConfig | None = None, *,
          seed: int = 0, device: torch.device | str | None = None,
          verbose: bool | None = None,
          max_episode_steps: PositiveInt | None = None) -> GSDResult:
    """Train a latent-conditioned policy π(a | s, z) on ``demos`` (GSD or an InfoGAIL arm).

    Args:
        env_id: a registered env: ``"iclr25/LaneReach-v0"`` (torch-batched), or any gymnasium
            continuous-control env, stepped through ``gymnasium.vector`` (much slower; see
            :mod:`iclr25.gsd.gym`: the policy then acts in [-1, 1], mapped onto the env's
            action bounds).
        demos: demonstrations of several styles, in that env's spaces (actions in its units).
        config: :class:`GSDConfig` (default: GSD with the spec's setting).
        seed: seeds networks, codes, resets, minibatches (global RNG untouched).
        device: where env and networks live (default CPU).
        verbose: progress bar (default: only on a terminal).
        max_episode_steps: the training episodes' horizon on a gymnasium env (None: the env's
            time limit; refused on LaneReach, whose episodes keep its horizon). Each iteration
            rolls out ``num_envs`` episodes this long, so demos shorter than the env's limit
            train in a fraction of the time at their longest episode's length (warned where
            the episodes outlast them: :func:`~iclr25.datasets.control.outlasting`). Recorded
            in the result (and its file): ``gsd evaluate`` rolls out as long by default.

    Returns:
        :class:`GSDResult`.

    Raises:
        ValueError / TypeError: unknown env, demos of the wrong dims or outside the action
            space, bad config, ``max_episode_steps`` not an int >= 1 or given on LaneReach
            (raised before any work).

    Examples:
        >>> from iclr25.gsd.testbed import lane_demos
        >>> demos = lane_demos([-0.8, 0.0, 0.8], 4, seed=0)
        >>> res = train("iclr25/LaneReach-v0", demos, GSDConfig(num_envs=16, iterations=2))
        >>> len(res.history)
        2
    """
    cfg = config if config is not None else GSDConfig()
    if not isinstance(cfg, GSDConfig):
        raise TypeError(f"config must be a GSDConfig, got {type(cfg).__name__}")
    seed = check_int(seed, "seed", 0)
    device = torch.device(device or "cpu")
    # make_env checks max_episode_steps (gym.check_max_episode_steps) before any env is made
    env = make_env(env_id, cfg.num_envs, device=device, max_episode_steps=max_episode_steps)
    if max_episode_steps is not None:
        max_episode_steps = env.horizon              # as checked: an int
    if isinstance(env, GymVec):
        demos = unit_actions(demos, env)
    _check_demos(demos, env)
    if isinstance(env, GymVec):   # issue 68 walk 11: 150-step Hopper-v5 demos, 1000-step
        for message in outlasting(demos.longest_episode, env.horizon,  # episodes: 853 s
                                  "max_episode_steps=", "states and actions"):
            warnings.warn(message, UserWarning, stacklevel=user_stacklevel())
    gen = resolve_seed(seed)
    nets = _Nets.build(cfg, env.obs_dim, env.act_dim, seed, device)
    exp_s, exp_a = demos.observations.to(device), demos.actions.to(device)
    ret_var = None                               # running variance of returns (reward scale)
    history: list[dict[str, float]] = []
    for _ in track(range(cfg.iterations), "GSD training", verbose=verbose):
        b = _rollout(env, nets.policy, cfg, gen)
        bce, q_loss, viol_frac = _discriminator_and_posterior(nets, b, exp_s, exp_a, cfg, gen)
        rew, adv, ret, ret_var = _advantages(nets, b, cfg, ret_var)
        _ppo(nets, b, adv, ret, cfg, gen)
        history.append({"disc_loss": float(bce.detach()),
                        "posterior_loss": float(q_loss.detach()),
                        "reward": float(rew.mean()), "lambda": nets.dual.value,
                        "violated": viol_frac, "final_x": float(b.S2[-1, :, 0].mean())})
    return GSDResult(nets.policy, nets.disc, nets.post, nets.dual, cfg, history, env_id,
                     max_episode_steps)


@dataclass
class _Nets:
    """The networks one run trains, the dual variable and their optimisers."""

    policy: LatentPolicy
    disc: BoundedDiscriminator
    post: GaussianPosterior
    dual: DualVariable
    opt_pi: torch.optim.Optimizer
    opt_d: torch.optim.Optimizer
    opt_q: torch.optim.Optimizer

    @classmethod
    def build(cls, cfg: GSDConfig, obs_dim: int, act_dim: int, seed: int,
              device: torch.device) -> _Nets:
        """Seeded networks on ``device`` and their Adam optimisers."""
        policy, disc, post, dual = build_networks(cfg, obs_dim, act_dim, seed=seed,
                                                  device=device).values()
        # foreach: the same update bit for bit, without a Python loop over the parameters
        return cls(policy, disc, post, dual,
                   torch.optim.Adam(policy.parameters(), lr=cfg.policy_lr, eps=1e-5,
                                    foreach=True),
                   torch.optim.Adam(disc.parameters(), lr=cfg.disc_lr, foreach=True),
                   torch.optim.Adam(post.parameters(), lr=cfg.posterior_lr, foreach=True))


@dataclass
class _Batch:
    """One iteration's episodes: (T, N, ·) as stepped and flattened to (T·N, ·) rows."""

    S: torch.Tensor          # (T, N, obs_dim) states
    A: torch.Tensor          # (T, N, act_dim) sampled actions (unclipped)
    S2: torch.Tensor         # (T, N, obs_dim) next states
    logp: torch.Tensor       # (T, N) log π(a | s, z)
    values: torch.Tensor     # (T + 1, N), the last the time-limit bootstrap
    s_f: torch.Tensor
    a_f: torch.Tensor        # clipped to [-1, 1]
    z_f: torch.Tensor
    s2_f: torch.Tensor
    a_next: torch.Tensor | None  # GSD only: greedy a' at s'


def _rollout(env, policy: LatentPolicy, cfg: GSDConfig, gen: torch.Generator) -> _Batch:
    """Step 1: one code z ~ N(0, I) per episode, one episode per env, actions sampled."""
    N, T, obs_dim, act_dim, device = cfg.num_envs, env.horizon, env.obs_dim, env.act_dim, \
        policy.log_std.device

    def randn(*shape: int) -> torch.Tensor:   # all sampling from one CPU generator
        return torch.randn(*shape, generator=gen).to(device)

    z = randn(N, cfg.z_dim)
    obs = env.reset(seed=gen)
    S = torch.empty(T, N, obs_dim, device=device)
    A = torch.empty(T, N, act_dim, device=device)
    S2 = torch.empty_like(S)
    logp = torch.empty(T, N, device=device)
    values = torch.empty(T + 1, N, device=device)
    with torch.no_grad():
        for t in range(T):
            S[t] = obs
            dist = policy.distribution(obs, z)
            A[t] = dist.loc + dist.scale * randn(N, act_dim)
            logp[t] = dist.log_prob(A[t]).sum(-1)
            values[t] = policy.value(obs, z)
            obs, _, _, _, _ = env.step(A[t])      # env reward unused (imitation)
            S2[t] = obs
        values[T] = policy.value(obs, z)          # time-limit bootstrap
    batch = N * T
    s_f, a_f = S.reshape(batch, -1), A.clamp(-1, 1).reshape(batch, -1)
    z_f, s2_f = z.expand(T, N, cfg.z_dim).reshape(batch, -1), S2.reshape(batch, -1)
    a_next = None
    if cfg.regularizer == "gsd":
        with torch.no_grad():
            a_next = policy(s2_f, z_f).clamp(-1, 1)
    return _Batch(S, A, S2, logp, values, s_f, a_f, z_f, s2_f, a_next)


def _discriminator_and_posterior(nets: _Nets, b: _Batch, exp_s: torch.Tensor,
                                 exp_a: torch.Tensor, cfg: GSDConfig, gen: torch.Generator
                                 ) -> tuple[torch.Tensor, torch.Tensor, float]:
    """Steps 2-3, the official loop: ``d_steps`` times, one discriminator step (a minibatch of
    expert pairs against the whole policy batch) then one full-batch posterior step (GSD:
    −λ·mean(violation), then the dual step). Returns the last BCE, posterior loss and the
    fraction of violated pairs."""
    disc, post, s_f, a_f, z_f = nets.disc, nets.post, b.s_f, b.a_f, b.z_f
    batch, device = len(s_f), s_f.device
    viol_frac = 0.0
    for _ in range(cfg.d_steps):
        e = torch.randperm(len(exp_s), generator=gen)[: cfg.disc_batch].to(device)
        le, lp = disc(exp_s[e], exp_a[e]), disc(s_f, a_f)
        bce = F.binary_cross_entropy_with_logits(le, torch.ones_like(le)) + \
            F.binary_cross_entropy_with_logits(lp, torch.zeros_like(lp))
        k = min(len(e), batch)              # penalty on as many pairs as the smaller side
        xe = torch.cat([exp_s[e[:k]], exp_a[e[:k]]], -1)
        fi = torch.randperm(batch, generator=gen)[:k].to(device)
        xp = torch.cat([s_f[fi], a_f[fi]], -1)
        d_loss = bce + cfg.gp_weight * gradient_penalty(disc, xe, xp, cfg.gp_center,
                                                        torch.rand(k, 1, generator=gen))
        nets.opt_d.zero_grad()
        d_loss.backward()
        nets.opt_d.step()

        q_loss = -post.log_prob(s_f, a_f, z_f).mean()
        if cfg.regularizer == "gsd":
            v, _, _ = relevance_constraint(post, disc, s_f, a_f, b.s2_f, b.a_next,
                                           clip=cfg.clip, scale=cfg.relevance_scale,
                                           slack=cfg.slack)
            q_loss = q_loss - nets.dual() * v.mean()
            viol_frac = float((v < 0).float().mean())
        nets.opt_q.zero_grad()
        q_loss.backward()
        nets.opt_q.step()
        if cfg.regularizer == "gsd":
            nets.dual.step(v)
    return bce, q_loss, viol_frac


@torch.no_grad()
def _advantages(nets: _Nets, b: _Batch, cfg: GSDConfig, ret_var: torch.Tensor | None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Steps 4-5: reward softplus(D) + λ_I log q(z | s, a), scaled by a running std of the
    returns, and GAE. Returns (reward (T, N), advantages, returns, updated running var)."""
    T, N = b.logp.shape
    device = b.logp.device
    rew = infogail_reward(nets.disc(b.s_f, b.a_f), nets.post.log_prob(b.s_f, b.a_f, b.z_f),
                          cfg.info_weight).view(T, N)
    # scale by a running std of the returns (CleanRL's NormalizeReward, per batch)
    disc_ret = torch.zeros(N, device=device)
    for t in reversed(range(T)):
        disc_ret = rew[t] + cfg.gamma * disc_ret
    var = disc_ret.var()
    ret_var = var if ret_var is None else 0.9 * ret_var + 0.1 * var
    r = rew / (ret_var.sqrt() + 1e-8)

    # GAE (no terminations; the last step bootstraps)
    values = b.values
    adv = torch.zeros(T, N, device=device)
    last = torch.zeros(N, device=device)
    for t in reversed(range(T)):
        delta = r[t] + cfg.gamma * values[t + 1] - values[t]
        last = delta + cfg.gamma * cfg.gae_lambda * last
        adv[t] = last
    return rew, adv, adv + values[:T], ret_var


def _ppo(nets: _Nets, b: _Batch, adv: torch.Tensor, ret: torch.Tensor, cfg: GSDConfig,
         gen: torch.Generator) -> None:
    """Step 6: PPO epochs over minibatches (clipped surrogate, value loss, grad-norm clip)."""
    policy, s_f, z_f = nets.policy, b.s_f, b.z_f
    batch = len(s_f)
    b_adv, b_ret, b_logp = adv.reshape(-1), ret.reshape(-1), b.logp.reshape(-1)
    b_a = b.A.reshape(batch, -1)
    for _epoch in range(cfg.update_epochs):
        for idx in torch.randperm(batch, generator=gen).to(s_f.device).split(
                batch // cfg.num_minibatches):
            dist = policy.distribution(s_f[idx], z_f[idx])
            ratio = (dist.log_prob(b_a[idx]).sum(-1) - b_logp[idx]).exp()
            a_n = b_adv[idx]
            a_n = (a_n - a_n.mean()) / (a_n.std() + 1e-8)
            pg = torch.max(-a_n * ratio,
                           -a_n * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
            v_loss = 0.5 * ((policy.value(s_f[idx], z_f[idx]) - b_ret[idx]) ** 2).mean()
            loss = pg + cfg.vf_coef * v_loss - cfg.ent_coef * dist.entropy().sum(-1).mean()
            nets.opt_pi.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm, foreach=True)
            nets.opt_pi.step()


def config_dict(cfg: GSDConfig) -> dict:
    """The config as plain JSON-ready values (for saving with the weights)."""
    d = asdict(cfg)
    d["hidden"] = list(d["hidden"])
    return d


@checked
def style_coded_bc(demos: OfflineDataset, n_styles: int, *, epochs: int = 30,
                   hidden: tuple[int, ...] = (64, 64), seed: int = 0,
                   device: torch.device | str | None = None) -> LatentPolicy:
    """The baseline a user tries first: BC of π(a | s, z), each demonstrated style (lane) given
    a fixed code drawn from N(0, I); at evaluation prior codes fall between those codes.

    Args:
        demos: episodes ordered style by style, ``n_episodes / n_styles`` per style
            (as :func:`~iclr25.gsd.testbed.lane_demos` makes them).
        n_styles: number of styles, dividing ``demos.n_episodes``.

    Raises:
        TypeError / ValueError: not an OfflineDataset, ``n_styles`` not dividing the episodes,
            ``epochs < 1``.
    """
    if not isinstance(demos, OfflineDataset):
        raise TypeError(f"demos must be an OfflineDataset, got {type(demos).__name__}")
    n_styles = check_int(n_styles, "n_styles", 1)
    if demos.n_episodes % n_styles:
        raise ValueError(f"n_styles ({n_styles}) must divide the {demos.n_episodes} episodes")
    epochs = check_int(epochs, "epochs", 1)
    device = torch.device(device or "cpu")
    g = resolve_seed(check_int(seed, "seed", 0))
    codes = torch.randn(n_styles, 2, generator=g).to(device)
    z = codes[demos.episode_index().to(device) // (demos.n_episodes // n_styles)]
    s, a = demos.observations.to(device), demos.actions.to(device)
    pol = LatentPolicy(demos.obs_dim, demos.act_dim, 2, hidden=hidden, seed=seed).to(device)
    opt = torch.optim.Adam(pol.actor.parameters(), lr=1e-3)
    for _ in range(epochs):
        for idx in torch.randperm(len(s), generator=g).to(device).split(256):
            loss = ((pol(s[idx], z[idx]) - a[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return pol
