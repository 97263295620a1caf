"""CoMM's multimodal encoder: per-modality encoders, tokenizers, a fusion transformer that
drops absent modalities, a projector, and the loss over the n+1 modality masks (Sec. 3.3;
official code ``models/mmfusion.py``, ``pl_modules/comm.py``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import torch
from torch import nn

from iclr25._checks import ArrayLike, check_batch, check_int, resolve_seed
from iclr25._contract import checked
from iclr25._engine import gather
from iclr25._train import seeded_init
from iclr25.comm.loss import CoMMLoss, _check_weights, modality_masks

__all__ = ["CoMM", "FeatureTokenizer", "FusionTransformer", "PatchTokenizer", "conv_encoder",
           "mlp_encoder"]


@checked
def conv_encoder(in_channels: int = 3, widths: Sequence[int] = (16, 32, 64), *,
                 seed: int | torch.Generator | None = 0) -> nn.Sequential:
    """A small CNN: 3x3 convolutions of stride 2 with ReLU, ``(B, C, H, W) -> (B, widths[-1],
    H / 2^k, W / 2^k)``; three layers map 24x24 images to 3x3 = 9 tokens (:class:`PatchTokenizer`).
    """
    in_channels = check_int(in_channels, "in_channels", 1)
    chans = [in_channels] + [check_int(w, "widths", 1) for w in widths]
    layers: list[nn.Module] = []
    with seeded_init(seed):
        for a, b in zip(chans[:-1], chans[1:], strict=True):
            layers += [nn.Conv2d(a, b, 3, stride=2, padding=1), nn.ReLU()]
    return nn.Sequential(*layers)


@checked
def mlp_encoder(n_features: int, n_tokens: int = 8, hidden: int = 128, *,
                seed: int | torch.Generator | None = 0) -> nn.Sequential:
    """A 2-layer ReLU MLP ``(B, n_features) -> (B, n_tokens)`` for vector modalities, to be
    followed by ``FeatureTokenizer(n_tokens, dim)``."""
    n_features = check_int(n_features, "n_features", 1)
    n_tokens, hidden = check_int(n_tokens, "n_tokens", 1), check_int(hidden, "hidden", 1)
    with seeded_init(seed):
        return nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(),
                             nn.Linear(hidden, n_tokens))


@functools.lru_cache(maxsize=16)
def _sincos_2d(h: int, w: int, dim: int, device: torch.device, dtype: torch.dtype
               ) -> torch.Tensor:
    """Fixed 2-D sine-cosine position embeddings (h * w, dim) (MAE/ViT style); a constant,
    so computed once per shape (callers never modify it), as a normal tensor even when first
    asked for under ``inference_mode``."""
    with torch.inference_mode(False):
        q = max(dim // 4, 1)
        omega = 1.0 / 10000 ** (torch.arange(q, device=device, dtype=torch.float64) / q)
        ys, xs = torch.meshgrid(torch.arange(h, device=device, dtype=torch.float64),
                                torch.arange(w, device=device, dtype=torch.float64), indexing="ij")
        parts = []
        for pos in (ys.flatten(), xs.flatten()):
            ang = pos[:, None] * omega[None]
            parts += [ang.sin(), ang.cos()]
        emb = torch.cat(parts, 1)
        out = torch.zeros(h * w, dim, device=device, dtype=torch.float64)
        k = min(dim, emb.shape[1])
        out[:, :k] = emb[:, :k]
        return out.to(dtype)


@checked
class PatchTokenizer(nn.Module):
    """Feature map -> tokens: ``(B, channels, h, w) -> (B, h*w, dim)``, a linear map of each
    position's channels plus fixed 2-D sin-cos position embeddings and a learned modality
    embedding (``PatchedInputAdapter`` of the official code, with a modality tag so that the
    fusion knows which view a token comes from)."""

    def __init__(self, channels: int, dim: int, *, seed: int | torch.Generator | None = 0
                 ) -> None:
        super().__init__()
        channels, dim = check_int(channels, "channels", 1), check_int(dim, "dim", 1)
        with seeded_init(seed):
            self.proj = nn.Linear(channels, dim)
            self.modality = nn.Parameter(0.02 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or x.shape[1] != self.proj.in_features:
            raise ValueError(f"PatchTokenizer expects (B, {self.proj.in_features}, h, w), got "
                             f"{tuple(x.shape)}")
        B, C, h, w = x.shape
        tok = self.proj(x.flatten(2).transpose(1, 2))
        return tok + _sincos_2d(h, w, tok.shape[-1], x.device, tok.dtype) + self.modality


@checked
class FeatureTokenizer(nn.Module):
    """Vector -> tokens, one per feature (FT-Transformer; ``FeaturesInputAdapter``):
    ``(B, n_features) -> (B, n_features, dim)``, token j = ``x_j * W_j + b_j``."""

    def __init__(self, n_features: int, dim: int, *,
                 seed: int | torch.Generator | None = 0) -> None:
        super().__init__()
        n_features, dim = check_int(n_features, "n_features", 1), check_int(dim, "dim", 1)
        with seeded_init(seed):
            bound = 1 / math.sqrt(dim)
            self.weight = nn.Parameter(torch.empty(n_features, dim).uniform_(-bound, bound))
            self.bias = nn.Parameter(torch.empty(n_features, dim).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_batch(x, "x", ndim=2, width=self.weight.shape[0])
        return x[:, :, None] * self.weight + self.bias


@checked
class FusionTransformer(nn.Module):
    """Fuse token lists of several modalities into one (B, dim) embedding: concatenate the
    tokens of the present modalities (absent ones are *dropped*, not zeroed), prepend a
    learned CLS token, apply ``n_layers`` pre-LN self-attention blocks, a final LayerNorm,
    and return the CLS output.

    Args:
        dim: token width. n_layers: blocks (1 in the paper's small runs). n_heads: heads,
            dividing ``dim``.
        seed: initialisation seed.
    """

    def __init__(self, dim: int, n_layers: int = 1, n_heads: int = 4, *,
                 seed: int | torch.Generator | None = 0) -> None:
        super().__init__()
        dim = check_int(dim, "dim", 1)
        n_layers, n_heads = check_int(n_layers, "n_layers", 1), check_int(n_heads, "n_heads", 1)
        if dim % n_heads:
            raise ValueError(f"n_heads must divide dim={dim}, got {n_heads}")
        self.dim = dim
        with seeded_init(seed):
            self.cls = nn.Parameter(0.02 * torch.randn(dim))
            self.blocks = nn.ModuleList(
                nn.TransformerEncoderLayer(dim, n_heads, dim_feedforward=4 * dim, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True)
                for _ in range(n_layers))
            self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: Sequence[torch.Tensor | None]) -> torch.Tensor:
        """``tokens``: one (B, T_i, dim) tensor or None (absent) per modality -> (B, dim)."""
        if isinstance(tokens, torch.Tensor) or not isinstance(tokens, Sequence):
            raise TypeError(f"tokens must be a list of (B, T, dim) tensors or None, got "
                            f"{type(tokens).__name__}")
        present = [t for t in tokens if t is not None]
        if not present:
            raise ValueError("tokens: every modality is absent (None); at least one is needed")
        B = present[0].shape[0]
        for i, t in enumerate(tokens):
            if t is None:
                continue
            if t.ndim != 3 or t.shape[-1] != self.dim or t.shape[0] != B:
                raise ValueError(f"tokens[{i}] must be (B={B}, T, {self.dim}), got "
                                 f"{tuple(t.shape)}")
        x = torch.cat([self.cls.to(present[0].dtype).expand(B, 1, -1), *present], 1)
        for blk in self.blocks[:-1]:
            x = blk(x)
        return self.norm(_cls_only(self.blocks[-1], x))


def _cls_only(blk: nn.TransformerEncoderLayer, x: torch.Tensor) -> torch.Tensor:
    """The CLS row of a pre-LN block's output, ``blk(x)[:, 0]``, without computing the other
    rows: the CLS query attends to every token, then the MLP runs on the CLS row alone.
    Exact for the last block, and T times cheaper in its MLP."""
    h = blk.norm1(x)
    att = blk.self_attn(h[:, :1], h, h, need_weights=False)[0]
    c = x[:, :1] + att
    c = c + blk.linear2(blk.activation(blk.linear1(blk.norm2(c))))
    return c[:, 0]


@checked
class CoMM(nn.Module):
    """CoMM's multimodal encoder and contrastive objective.

    ``forward(xs)`` is the fused embedding of the present modalities (the CLS output, before
    the projector: what linear probes read); ``loss(v1, v2)`` is the CoMM loss between two
    augmented views, each modality encoded once per view and its tokens reused for all n+1
    masks of :func:`~iclr25.comm.modality_masks`.

    Args:
        encoders: one module per modality (n >= 2), ``x_i -> features``.
        tokenizers: one module per modality, ``features -> (B, T_i, dim)``.
        dim: embedding width (64).
        n_layers, n_heads: fusion transformer size (1 layer, 4 heads).
        proj_hidden: projector ``dim -> proj_hidden -> dim`` (Linear, BatchNorm, ReLU, Linear).
        temperature: tau of the loss (0.1). weights: n+1 term weights or None (mean).
        seed: initialisation seed of the fusion and projector.

    Raises:
        ValueError: fewer than 2 modalities, encoders/tokenizers of different lengths,
            a weights length that is not n+1.

    Examples:
        >>> import torch
        >>> from iclr25.comm import CoMM, FeatureTokenizer, mlp_encoder
        >>> enc = [mlp_encoder(5, 4, seed=i) for i in range(2)]
        >>> tok = [FeatureTokenizer(4, 16, seed=i) for i in range(2)]
        >>> model = CoMM(enc, tok, dim=16)
        >>> x = [torch.randn(8, 5), torch.randn(8, 5)]
        >>> model(x).shape, model([x[0], None]).shape
        (torch.Size([8, 16]), torch.Size([8, 16]))
        >>> loss = model.loss(x, [t + 0.1 for t in x])
    """

    def __init__(self, encoders: Sequence[nn.Module], tokenizers: Sequence[nn.Module],
                 dim: int = 64, *, n_layers: int = 1, n_heads: int = 4, proj_hidden: int = 128,
                 temperature: float = 0.1, weights: ArrayLike | None = None,
                 seed: int | torch.Generator | None = 0) -> None:
        super().__init__()
        if len(encoders) != len(tokenizers):
            raise ValueError(f"encoders and tokenizers must have one entry per modality, got "
                             f"{len(encoders)} and {len(tokenizers)}")
        if len(encoders) < 2:
            raise ValueError(f"encoders: CoMM needs at least 2 modalities, got {len(encoders)}")
        self.n_modalities = len(encoders)
        if weights is not None:
            _check_weights(weights, self.n_modalities + 1)
        self.dim = check_int(dim, "dim", 1)
        proj_hidden = check_int(proj_hidden, "proj_hidden", 1)
        self.encoders = nn.ModuleList(encoders)
        self.tokenizers = nn.ModuleList(tokenizers)
        gen = resolve_seed(seed)
        self.fusion = FusionTransformer(dim, n_layers, n_heads, seed=gen.initial_seed() + 1)
        with seeded_init(gen.initial_seed() + 2):
            self.projector = nn.Sequential(nn.Linear(dim, proj_hidden),
                                           nn.BatchNorm1d(proj_hidden), nn.ReLU(),
                                           nn.Linear(proj_hidden, dim))
        self.criterion = CoMMLoss(temperature, weights)

    # --- input checks ---------------------------------------------------------------------
    def _check(self, xs: object, name: str, allow_missing: bool) -> list[torch.Tensor | None]:
        if isinstance(xs, torch.Tensor) or not isinstance(xs, Sequence):
            raise TypeError(f"{name} must be a list with one tensor per modality, got "
                            f"{type(xs).__name__}")
        if len(xs) != self.n_modalities:
            raise ValueError(f"{name} must hold {self.n_modalities} modalities, got {len(xs)}")
        out: list[torch.Tensor | None] = []
        sizes = {}
        for i, x in enumerate(xs):
            if x is None:
                if not allow_missing:
                    raise ValueError(f"{name}[{i}] is None: every modality is needed here")
                out.append(None)
                continue
            if not isinstance(x, torch.Tensor):  # numpy / lists: the model's dtype, device
                ref = next(self.parameters())
                x = torch.as_tensor(x)
                if x.is_floating_point():
                    x = x.to(ref.device, ref.dtype)
            if not x.is_floating_point():
                raise TypeError(f"{name}[{i}] must be a floating-point tensor, got {x.dtype}")
            if x.ndim == 0 or x.shape[0] == 0:
                raise ValueError(f"{name}[{i}] must have samples in rows, got shape "
                                 f"{tuple(x.shape)}")
            sizes[i] = x.shape[0]
            out.append(x)
        if not sizes:
            raise ValueError(f"{name}: every modality is absent (None); at least one is needed")
        if len(set(sizes.values())) > 1:
            raise ValueError(f"{name}: modalities have different batch sizes {sizes}")
        return out

    # --- encoding -------------------------------------------------------------------------
    def encode(self, xs: Sequence[torch.Tensor | None]) -> list[torch.Tensor | None]:
        """Tokens (B, T_i, dim) of each present modality (None for absent ones); each encoder
        runs once."""
        xs = self._check(xs, "xs", allow_missing=True)
        return [None if x is None else tok(enc(x))
                for x, enc, tok in zip(xs, self.encoders, self.tokenizers, strict=True)]

    def fuse(self, tokens: Sequence[torch.Tensor | None], mask: Sequence[bool] | torch.Tensor
             ) -> torch.Tensor:
        """Fused embedding (B, dim) of the modalities where ``mask`` is True."""
        return self.fusion([t if bool(m) else None for t, m in zip(tokens, mask, strict=True)])

    def forward(self, xs: Sequence[torch.Tensor | None]) -> torch.Tensor:
        """Fused embedding (B, dim) of the present modalities (None = missing)."""
        return self.fusion(self.encode(xs))

    def embeddings(self, xs: Sequence[torch.Tensor], masks: torch.Tensor | None = None
                   ) -> list[torch.Tensor]:
        """Fused embeddings for each row of ``masks`` (default :func:`modality_masks`),
        encoding each modality once."""
        tokens = self.encode(self._check(xs, "xs", allow_missing=False))
        masks = modality_masks(self.n_modalities) if masks is None else masks
        return [self.fuse(tokens, m) for m in masks]

    def loss(self, v1: Sequence[torch.Tensor], v2: Sequence[torch.Tensor]) -> torch.Tensor:
        """CoMM loss between two augmented views (lists of n tensors); the n+1 terms are in
        ``self.criterion.terms``."""
        v1 = self._check(v1, "v1", allow_missing=False)
        v2 = self._check(v2, "v2", allow_missing=False)
        if v1[0].shape[0] != v2[0].shape[0]:
            raise ValueError(f"v1 and v2 must have the same batch size, got {v1[0].shape[0]} "
                             f"and {v2[0].shape[0]}")
        # under a DDP pre-training, every process's rows: the negatives of the global batch
        z1 = [gather(self.projector(z)) for z in self.embeddings(v1)]
        z2 = [gather(self.projector(z)) for z in self.embeddings(v2)]
        return self.criterion(z1, z2)
