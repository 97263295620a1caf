"""The Long-Short Decision Transformer: attention and convolution branches side by side.

Tokens follow the Decision Transformer layout (R̂_t, s_t, a_t) for t = 1..K. Each block mixes
tokens with :class:`LongShortMixer`: the channels are split ``[attention | convolution]`` by
ξ = ``conv_ratio`` (paper §3, "dimension ratio"), the two branch outputs are fused by the
Hybrid Fusion Module (:class:`HybridFusion`, paper §3.2). ξ = 0 is the Decision Transformer,
ξ = 1 with ``conv="static"`` is Decision ConvFormer.
"""

from __future__ import annotations

from typing import Annotated, Literal

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import as_tensor, check_batch, check_choice, check_int, check_range
from iclr25._contract import Array, NonNegativeInt, PositiveInt, Probability, Range, checked

__all__ = [
    "Block",
    "DynamicConv1d",
    "HybridFusion",
    "LongShortDecisionTransformer",
    "LongShortMixer",
    "TokenConv1d",
    "decision_convformer",
    "decision_transformer",
    "receptive_field",
]

#: a (B, T, C) token sequence
Tokens = Annotated[torch.Tensor, Array("float", 3)]
#: a (B, K, d) history of returns-to-go, states or actions: floats (an integer action would be
#: cast, hiding a discrete-action mix-up)
Steps = Annotated[torch.Tensor, Array("float", 3)]
#: (B, K) integer timesteps
Timesteps = Annotated[torch.Tensor, Array("int", 2)]
#: a dropout probability in [0, 1)
Dropout = Annotated[float, Range(0.0, 1.0, high_open=True)]

ConvKind = Literal["dynamic", "static"]


@checked
class DynamicConv1d(nn.Module):
    """Causal dynamic convolution (fairseq/LSDT style): per-token softmax kernels.

    Linear → GLU, then each token predicts ``heads`` kernels of ``kernel_size`` taps from its
    GLU output (a linear map with bias; dropout on the kernel logits, as in LSDT's code). The
    window is centred (offsets −(k−1)/2..(k−1)/2) and the causal mask keeps the (k+1)/2
    past-and-present taps; softmax runs over those of them that exist: for the first (k−1)/2
    tokens the taps before the sequence start are dropped and the rest renormalised (the
    official code's banded matrix is cut at column 0 before its softmax).

    Args:
        channels: C, divisible by ``heads``.
        kernel_size: k, odd, >= 3.
        heads: kernels per token (channel groups sharing one kernel).
        dropout: dropout on the kernel logits, before the softmax.

    Shapes: ``forward(x (B, T, C)) -> (B, T, C)``.
    """

    def __init__(self, channels: int, kernel_size: int = 11, heads: int = 1, *,
                 dropout: Dropout = 0.0) -> None:
        super().__init__()
        channels = check_int(channels, "channels", 1)
        kernel_size = check_int(kernel_size, "kernel_size", 3)
        if kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {kernel_size}")
        heads = check_int(heads, "heads", 1)
        if channels % heads:
            raise ValueError(f"channels ({channels}) must be divisible by heads ({heads})")
        self.channels, self.kernel_size, self.heads = channels, kernel_size, heads
        self.taps = (kernel_size + 1) // 2
        self.glu = nn.Linear(channels, 2 * channels)
        self.weight = nn.Linear(channels, heads * kernel_size)
        nn.init.xavier_uniform_(self.weight.weight)
        nn.init.zeros_(self.weight.bias)
        self.bias = nn.Parameter(torch.zeros(channels))
        self.out = nn.Linear(channels, channels)
        self.drop = nn.Dropout(dropout)

    def kernels(self, x: Tokens) -> torch.Tensor:
        """(B, T, heads, taps) softmax weights of the causal taps, oldest tap first."""
        B, T, _ = x.shape
        # only the causal taps' logits (the future half is masked out, so it is not computed),
        # laid out taps-major: a softmax over a short last dim is several times slower on CPU
        P, H = self.taps, self.heads
        W = self.weight.weight.view(H, self.kernel_size, -1)[:, :P].transpose(0, 1)
        b = self.weight.bias.view(H, self.kernel_size)[:, :P].transpose(0, 1)
        w = self.drop(F.linear(x, W.reshape(P * H, -1), b.reshape(P * H))).view(B, T, P, H)
        # tap p of token t reads token t − (P − 1) + p: before the start it does not exist
        missing = torch.arange(P, device=x.device) < (P - 1) - torch.arange(T, device=x.device
                                                                            )[:, None]
        w = w.masked_fill(missing[None, :, :, None], float("-inf"))
        return torch.softmax(w, dim=2).transpose(2, 3)

    def forward(self, x: Tokens) -> torch.Tensor:
        B, T, C = check_batch(x, "x", ndim=3, width=self.glu.in_features).shape
        h = F.glu(self.glu(x), dim=-1)                                  # (B, T, C)
        w = self.kernels(h)                      # kernels from the GLU output  (B, T, H, P)
        # sum over the P most recent positions (zeros before the start), oldest tap first;
        # P shifted multiply-adds, cheaper than materialising the (B, T, C, P) windows
        P = self.taps
        padded = F.pad(h, (0, 0, P - 1, 0)).view(B, T + P - 1, self.heads, C // self.heads)
        y = padded[:, :T] * w[..., :1]
        for p in range(1, P):
            y = y + padded[:, p:p + T] * w[..., p:p + 1]
        y = y.reshape(B, T, C) + self.bias
        return self.out(y)


@checked
class TokenConv1d(nn.Module):
    """Decision ConvFormer's static mixer: three depthwise causal convs, one per token type.

    The sequence (R̂, s, a, R̂, s, a, ...) is left-padded by ``window − 1`` zeros; output at
    a position of type i (position mod 3) comes from conv i.

    Shapes: ``forward(x (B, 3K, C)) -> (B, 3K, C)``.
    """

    def __init__(self, channels: int, window: int = 6) -> None:
        super().__init__()
        channels = check_int(channels, "channels", 1)
        self.window = check_int(window, "window", 1)
        self.taps = self.window
        self.convs = nn.ModuleList(nn.Conv1d(channels, channels, self.window, groups=channels)
                                   for _ in range(3))

    def forward(self, x: Tokens) -> torch.Tensor:
        B, T, C = check_batch(x, "x", ndim=3, width=self.convs[0].in_channels).shape
        # each position needs only its own type's kernel: a (T, C, w) weight per position on
        # the unfolded windows (3x less work than 3 convs, and CPU depthwise convs are slow)
        win = F.pad(x, (0, 0, self.window - 1, 0)).unfold(1, self.window, 1)  # (B, T, C, w)
        kind = torch.arange(T, device=x.device) % 3
        w = torch.stack([c.weight[:, 0] for c in self.convs])[kind]          # (T, C, w)
        b = torch.stack([c.bias for c in self.convs])[kind]                  # (T, C)
        return (win * w).sum(-1) + b


@checked
class HybridFusion(nn.Module):
    """LSDT's Hybrid Fusion Module: a softmax gate over all channels of [att | conv].

    A = concat(att, conv); X̄ = ReLU(W A); Z = concat(W_a X̄, W_c X̄); out = softmax(Z) ⊙ A.
    """

    def __init__(self, att_dim: PositiveInt, conv_dim: PositiveInt) -> None:
        super().__init__()
        h = att_dim + conv_dim
        self.squeeze = nn.Linear(h, max(h // 2, 1))
        self.to_att = nn.Linear(max(h // 2, 1), att_dim)
        self.to_conv = nn.Linear(max(h // 2, 1), conv_dim)

    def forward(self, att: Tokens, conv: Tokens) -> torch.Tensor:
        a = torch.cat([att, conv], -1)
        z = F.relu(self.squeeze(a))
        gate = torch.softmax(torch.cat([self.to_att(z), self.to_conv(z)], -1), dim=-1)
        return gate * a


@checked
class LongShortMixer(nn.Module):
    """Token mixer: causal attention on the first ``h − conv_dim`` channels, a causal
    convolution on the last ``conv_dim``, fused by :class:`HybridFusion` (or concatenated when
    ``fusion=False``), then a linear projection. Either branch may be empty (ξ = 0 or 1).
    """

    def __init__(self, hidden: PositiveInt, n_heads: PositiveInt, conv_dim: NonNegativeInt, *,
                 conv: ConvKind = "dynamic", kernel_size: int = 11,
                 conv_heads: int | None = None, fusion: bool = True,
                 dropout: Dropout = 0.1) -> None:
        super().__init__()
        self.att_dim, self.conv_dim, self.n_heads = hidden - conv_dim, conv_dim, n_heads
        if self.att_dim and self.att_dim % n_heads:
            raise ValueError(f"n_heads ({n_heads}) must divide the attention width "
                             f"({self.att_dim} = hidden - conv_ratio * hidden)")
        if self.att_dim:
            self.qkv = nn.Linear(self.att_dim, 3 * self.att_dim)
            self.att_drop = nn.Dropout(dropout)
        self.conv: nn.Module | None = None
        if conv_dim:
            if conv == "dynamic":
                heads = max(conv_dim // 4, 1) if conv_heads is None else \
                    check_int(conv_heads, "conv_heads", 1)
                if conv_dim % heads:
                    raise ValueError(f"conv_heads ({heads}) must divide the convolution width "
                                     f"({conv_dim})")
                self.conv = DynamicConv1d(conv_dim, kernel_size, heads, dropout=dropout)
            else:
                self.conv = TokenConv1d(conv_dim, 6)
        self.fusion = HybridFusion(self.att_dim, conv_dim) if fusion and self.att_dim and \
            conv_dim else None
        self.proj = nn.Linear(hidden, hidden)
        self.drop = nn.Dropout(dropout)

    def attention(self, x: Tokens) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, C // self.n_heads).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # (B, heads, T, d)
        # dropout on the branch output (LSDT's code), not on the attention weights
        return self.att_drop(att).transpose(1, 2).reshape(B, T, C)

    def forward(self, x: Tokens) -> torch.Tensor:
        parts = []
        if self.att_dim:
            parts.append(self.attention(x[..., : self.att_dim]))
        if self.conv is not None:
            parts.append(self.conv(x[..., self.att_dim:]))
        y = self.fusion(*parts) if self.fusion is not None else torch.cat(parts, -1)
        return self.drop(self.proj(y))


@checked
class Block(nn.Module):
    """Post-LN block: x = LN(x + Mixer(x)); x = LN(x + MLP(x)), MLP = 4h GELU."""

    def __init__(self, hidden: PositiveInt, mixer: LongShortMixer, dropout: Dropout = 0.1
                 ) -> None:
        super().__init__()
        self.mixer = mixer
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(),
                                 nn.Linear(4 * hidden, hidden), nn.Dropout(dropout))

    def forward(self, x: Tokens) -> torch.Tensor:
        x = self.ln1(x + self.mixer(x))
        return self.ln2(x + self.mlp(x))


@checked
class LongShortDecisionTransformer(nn.Module):
    """Return-conditioned policy over (R̂, s, a) tokens with long-short mixing blocks.

    Args:
        obs_dim, act_dim: state and action sizes.
        hidden: token width h.
        n_blocks: number of :class:`Block`.
        n_heads: attention heads (must divide the attention width h − ξh).
        context: K, the longest sequence of time steps the model reads.
        conv_ratio: ξ in [0, 1], the fraction of channels in the convolution branch
            (0 = Decision Transformer, 1 = convolution only).
        kernel_size: odd k >= 3 of the dynamic convolution ((k+1)/2 causal taps).
        conv: ``"dynamic"`` (LSDT) or ``"static"`` (Decision ConvFormer's window-6 convs).
        fusion: use the Hybrid Fusion Module when both branches exist.
        dropout: dropout everywhere.
        max_timestep: size of the timestep embedding.

    ``forward(returns_to_go (B,K,1), states (B,K,obs), actions (B,K,act), timesteps (B,K) long)
    -> (B,K,act)``: the action predicted at each state token, from R̂_{≤t}, s_{≤t}, a_{<t}.
    Buffers ``state_mean``, ``state_std`` (inputs are normalised inside) and ``action_scale``
    (outputs are ``tanh · action_scale``) are set by :func:`iclr25.lsdt.train`.

    Attribute ``env_id``: the gymnasium env the model was trained for, when known (None);
    :func:`~iclr25.lsdt.save` records it and :func:`~iclr25.lsdt.load` restores it, and
    :func:`~iclr25.lsdt.evaluate` rolls out in it when given no env. Attribute
    ``longest_episode``: the training data's longest episode, when known (None), set by
    :func:`~iclr25.lsdt.train` and :func:`~iclr25.lsdt.load`; :func:`~iclr25.lsdt.evaluate`
    warns where its rollouts may run longer.

    Raises:
        ValueError: ``conv_ratio`` outside [0, 1], even or small ``kernel_size``, branch
            widths not divisible by their heads, ``context < 1``.

    Examples:
        >>> import torch
        >>> m = LongShortDecisionTransformer(3, 1, hidden=32, n_blocks=2, context=6)
        >>> B, K = 4, 6
        >>> out = m(torch.zeros(B, K, 1), torch.zeros(B, K, 3), torch.zeros(B, K, 1),
        ...         torch.arange(K).repeat(B, 1))
        >>> tuple(out.shape)
        (4, 6, 1)
    """

    def __init__(self, obs_dim: int, act_dim: int, *, hidden: int = 128, n_blocks: int = 3,
                 n_heads: int = 2, context: int = 20, conv_ratio: Probability = 0.5,
                 kernel_size: int = 11, conv: ConvKind = "dynamic", fusion: bool = True,
                 dropout: Dropout = 0.1, max_timestep: int = 4096,
                 conv_heads: int | None = None) -> None:
        super().__init__()
        obs_dim, act_dim = check_int(obs_dim, "obs_dim", 1), check_int(act_dim, "act_dim", 1)
        hidden = check_int(hidden, "hidden", 1)
        n_blocks, n_heads = check_int(n_blocks, "n_blocks", 1), check_int(n_heads, "n_heads", 1)
        context = check_int(context, "context", 1)
        conv_ratio = check_range(conv_ratio, "conv_ratio", 0.0, 1.0)
        kernel_size = check_int(kernel_size, "kernel_size", 3)
        if kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {kernel_size}")
        conv = check_choice(conv, "conv", ConvKind)
        dropout = check_range(dropout, "dropout", 0.0, 1.0, high_open=True)
        max_timestep = check_int(max_timestep, "max_timestep", 1)
        conv_dim = int(round(conv_ratio * hidden))
        self.config = dict(obs_dim=obs_dim, act_dim=act_dim, hidden=hidden, n_blocks=n_blocks,
                           n_heads=n_heads, context=context, conv_ratio=conv_ratio,
                           kernel_size=kernel_size, conv=conv, fusion=bool(fusion),
                           dropout=dropout, max_timestep=max_timestep, conv_heads=conv_heads)
        self.obs_dim, self.act_dim, self.context = obs_dim, act_dim, context
        self.max_timestep = max_timestep
        self.env_id: str | None = None
        self.longest_episode: int | None = None
        self.embed_t = nn.Embedding(max_timestep, hidden)
        self.embed_rtg = nn.Linear(1, hidden)
        self.embed_s = nn.Linear(obs_dim, hidden)
        self.embed_a = nn.Linear(act_dim, hidden)
        self.embed_ln = nn.LayerNorm(hidden)
        self.blocks = nn.ModuleList(
            Block(hidden, LongShortMixer(hidden, n_heads, conv_dim, conv=conv,
                                         kernel_size=kernel_size, conv_heads=conv_heads,
                                         fusion=fusion, dropout=dropout), dropout)
            for _ in range(n_blocks))
        self.predict_action = nn.Linear(hidden, act_dim)
        self.register_buffer("state_mean", torch.zeros(obs_dim))
        self.register_buffer("state_std", torch.ones(obs_dim))
        self.register_buffer("action_scale", torch.ones(act_dim))
        self.register_buffer("rtg_scale", torch.ones(()))
        self.apply(_official_init)

    def _check(self, returns_to_go, states, actions, timesteps):
        p = next(self.parameters())
        s = as_tensor(states, "states", ndim=3, dtype=p.dtype, device=p.device, floating=True)
        B, K, d = s.shape
        if d != self.obs_dim:
            raise ValueError(f"states must have obs_dim={self.obs_dim} features, got {d}")
        if K > self.context:
            raise ValueError(f"states: sequence length {K} is longer than context "
                             f"{self.context}")
        r = as_tensor(returns_to_go, "returns_to_go", ndim=3, dtype=p.dtype, device=p.device,
                      floating=True)
        a = as_tensor(actions, "actions", ndim=3, dtype=p.dtype, device=p.device, floating=True)
        t = as_tensor(timesteps, "timesteps", ndim=2, dtype=torch.int64, device=p.device)
        if tuple(r.shape) != (B, K, 1):
            raise ValueError(f"returns_to_go must have shape ({B}, {K}, 1), got "
                             f"{tuple(r.shape)}")
        if tuple(a.shape) != (B, K, self.act_dim):
            raise ValueError(f"actions must have shape ({B}, {K}, {self.act_dim}), got "
                             f"{tuple(a.shape)}")
        if tuple(t.shape) != (B, K):
            raise ValueError(f"timesteps must have shape ({B}, {K}), got {tuple(t.shape)}")
        if int(t.min()) < 0 or int(t.max()) >= self.max_timestep:
            raise ValueError(f"timesteps must lie in [0, {self.max_timestep}), got "
                             f"[{int(t.min())}, {int(t.max())}]")
        return r, s, a, t

    def forward(self, returns_to_go: Steps, states: Steps, actions: Steps,
                timesteps: Timesteps) -> torch.Tensor:
        r, s, a, t = self._check(returns_to_go, states, actions, timesteps)
        B, K, _ = s.shape
        s = (s - self.state_mean) / self.state_std
        te = self.embed_t(t)
        tok = torch.stack([self.embed_rtg(r) + te, self.embed_s(s) + te,
                           self.embed_a(a / self.action_scale) + te], 2)  # (B, K, 3, h)
        x = self.embed_ln(tok.reshape(B, 3 * K, -1))
        for blk in self.blocks:
            x = blk(x)
        h_state = x.view(B, K, 3, -1)[:, :, 1]
        return torch.tanh(self.predict_action(h_state)) * self.action_scale

    @torch.no_grad()
    def get_action(self, returns_to_go: Steps, states: Steps, actions: Steps,
                   timesteps: Timesteps) -> torch.Tensor:
        """Action for the last state of each history, reading the last ``context`` steps.

        Args: as :meth:`forward` but any length T >= 1 (histories longer than ``context`` are
        cut to the most recent ``context`` steps); the last action row is a placeholder.

        Returns:
            (B, act_dim).
        """
        K = self.context
        # converted (not checked: forward does that) so that lists and arrays can be cut too
        r, s, a, t = (as_tensor(v, n, nonempty=False, finite=False)[:, -K:] for v, n in (
            (returns_to_go, "returns_to_go"), (states, "states"), (actions, "actions"),
            (timesteps, "timesteps")))
        return self.forward(r, s, a, t)[:, -1]


def _official_init(m: nn.Module) -> None:
    """LSDT's ``init_weights``: xavier-uniform weights and zero biases for every linear layer,
    xavier-uniform timestep embedding (std ≈ 0.022 at 4096 × 128); convs and norms keep
    PyTorch's defaults. ``apply`` visits children first, so the mixer then re-initialises its
    fused q/k/v layer as the three (att, att) layers of the official code.
    """
    if isinstance(m, (nn.Linear, nn.Embedding)):
        nn.init.xavier_uniform_(m.weight)
        if getattr(m, "bias", None) is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, LongShortMixer) and m.att_dim:
        for chunk in m.qkv.weight.data.chunk(3, 0):
            nn.init.xavier_uniform_(chunk)


@checked
def receptive_field(model: LongShortDecisionTransformer) -> int:
    """How many tokens back the convolution branch alone reaches: n_blocks · (taps − 1).

    Raises:
        ValueError: the model has no convolution branch (ξ = 0).
    """
    convs = [b.mixer.conv for b in model.blocks if b.mixer.conv is not None]
    if not convs:
        raise ValueError("model has no convolution branch (conv_ratio = 0)")
    return sum(c.taps - 1 for c in convs)


@checked
def decision_transformer(obs_dim: int, act_dim: int, **kw) -> LongShortDecisionTransformer:
    """The Decision Transformer (Chen et al. 2021): ξ = 0, attention only."""
    return LongShortDecisionTransformer(obs_dim, act_dim, conv_ratio=0.0, **kw)


@checked
def decision_convformer(obs_dim: int, act_dim: int, **kw) -> LongShortDecisionTransformer:
    """Decision ConvFormer (Kim et al. 2024): ξ = 1, static window-6 convs per token type."""
    return LongShortDecisionTransformer(obs_dim, act_dim, conv_ratio=1.0, conv="static", **kw)
