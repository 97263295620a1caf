"""Multi-view digits: seeded, offline views of scikit-learn's 8x8 digits.

One module for the methods that learn from several views or modalities of the same thing
(CoMM, URLOST, V3, COX): upsampled digit images with the :func:`~iclr25.datasets.digits`
split, pixel shifts, colour tints over background textures, a fixed pixel permutation (data
with no known topology), a fixed random "sensor" (a new modality), digit sequences (content
= digit, style = colour) and bimodal image pairs with unique and synergistic attributes.

Everything is generated on the fly from ``load_digits`` with explicit seeds; the global RNG
is never touched.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from iclr25._checks import ArrayLike, as_tensor, check_choice, check_int, check_range, resolve_seed

__all__ = [
    "COLORS", "OOD_COLORS", "TEXTURES", "TRAIN_COLORS", "TRI_COLORS", "TRI_SHAPES",
    "TRI_TASKS", "TRI_TEXTURES", "BimodalDigits", "BimodalTrifeatures", "ImageSplit",
    "RandomSensor", "TrifeaturesImages", "bimodal_digits", "bimodal_trifeatures",
    "digit_images", "digit_sequences", "jitter", "permute_features", "random_sensor",
    "textures", "tint", "trifeatures",
]

TRAIN_COLORS: dict[str, tuple[float, float, float]] = {
    "black": (0.0, 0.0, 0.0), "blue": (0.0, 0.0, 1.0), "green": (0.0, 0.5, 0.0),
    "red": (1.0, 0.0, 0.0), "teal": (0.0, 0.5, 0.5), "purple": (0.5, 0.0, 0.5),
    "orange": (1.0, 0.65, 0.0), "brown": (0.65, 0.16, 0.16),
}
"""Colours seen in training (V3's sequences; the first eight of :data:`COLORS`)."""

OOD_COLORS: dict[str, tuple[float, float, float]] = {
    "pink": (1.0, 0.75, 0.8), "salmon": (0.98, 0.5, 0.45), "gold": (1.0, 0.84, 0.0),
    "lime": (0.0, 1.0, 0.0), "cyan": (0.0, 1.0, 1.0), "magenta": (1.0, 0.0, 1.0),
    "gray": (0.5, 0.5, 0.5), "peru": (0.8, 0.52, 0.25),
}
"""Colours held out of training, for out-of-distribution tests."""

COLORS: dict[str, tuple[float, float, float]] = {
    **TRAIN_COLORS, "magenta": OOD_COLORS["magenta"], "gray": OOD_COLORS["gray"]}
"""Ten well-separated colours for :func:`bimodal_digits` (eight train colours + two)."""

TEXTURES: tuple[str, ...] = ("solid", "hstripes", "vstripes", "diagonal", "antidiagonal",
                             "grid", "checker", "dots", "rings", "noise")
"""Background textures of :func:`textures`, period 4 px (rings: radial period 4 px)."""

class ImageSplit(NamedTuple):
    """Digit images ``(n, size, size)`` in [0, 1] and int64 labels, train and test."""

    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor


def digit_images(size: int = 16, seed: int = 0, *, test_size: float = 0.25,
                 device: torch.device | str | None = None) -> ImageSplit:
    """Digits upsampled (bilinear) to ``size`` x ``size``, ink in [0, 1], with the same
    stratified split as :func:`iclr25.datasets.digits` (``seed``, ``test_size``).

    Returns:
        ImageSplit: ``X_*`` (n, size, size) float32, ``y_*`` (n,) int64.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    size = check_int(size, "size", 8)
    check_range(test_size, "test_size", 0, 1, low_open=True, high_open=True)
    X, y = load_digits(return_X_y=True)
    idx_tr, idx_te = train_test_split(np.arange(len(y)), test_size=test_size,
                                      random_state=seed, stratify=y)
    img = torch.as_tensor(X / 16.0, dtype=torch.float32).reshape(-1, 1, 8, 8)
    if size != 8:
        img = F.interpolate(img, size=(size, size), mode="bilinear", align_corners=False)
    img = img[:, 0].clamp(0, 1).to(device)
    lab = torch.as_tensor(y, dtype=torch.long, device=device)
    tr, te = torch.as_tensor(idx_tr), torch.as_tensor(idx_te)
    return ImageSplit(img[tr], lab[tr], img[te], lab[te])


def jitter(images: torch.Tensor, copies: int, max_shift: int, *,
           seed: int | torch.Generator | None = 0) -> torch.Tensor:
    """Randomly shifted copies of images, zero-filled at the borders.

    Args:
        images: (n, H, W) or (n, C, H, W).
        copies: copies per image; copy ``c`` of image ``i`` is row ``c * n + i``, so labels
            follow with ``y.repeat(copies)``.
        max_shift: shifts are integers in ``[-max_shift, max_shift]`` on each axis.
        seed: int, Generator or None.

    Returns:
        (n * copies, ...) tensor on the input's device; the input is not modified.
    """
    x = as_tensor(images, "images", ndim=(3, 4))
    copies = check_int(copies, "copies", 1)
    s = check_int(max_shift, "max_shift", 0)
    gen = resolve_seed(seed)
    flat = x.reshape(len(x), -1, *x.shape[-2:]).repeat(copies, 1, 1, 1)
    m, _, H, W = flat.shape
    shifts = torch.randint(-s, s + 1, (m, 2), generator=gen).to(x.device)
    padded = F.pad(flat, (s, s, s, s))
    rows = (torch.arange(H, device=x.device)[None, :] + s - shifts[:, :1])  # (m, H)
    cols = (torch.arange(W, device=x.device)[None, :] + s - shifts[:, 1:])  # (m, W)
    out = padded[torch.arange(m, device=x.device)[:, None, None, None],
                 torch.arange(flat.shape[1], device=x.device)[None, :, None, None],
                 rows[:, None, :, None], cols[:, None, None, :]]
    return out.reshape(m, *x.shape[1:])


def permute_features(X: torch.Tensor, seed: int | torch.Generator | None = 0
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """Shuffle the columns of ``X`` (n, d) with one fixed permutation: the data keep their
    content but lose their known topology (pixel neighbourhoods).

    Returns:
        ``(X[:, perm], perm)``; ``X_perm[:, j] == X[:, perm[j]]``.
    """
    X = as_tensor(X, "X", ndim=2)
    perm = torch.randperm(X.shape[1], generator=resolve_seed(seed)).to(X.device)
    return X[:, perm], perm


def tint(ink: torch.Tensor, rgb: ArrayLike, background: torch.Tensor | None = None
         ) -> torch.Tensor:
    """Colour grey-level ink: ``rgb * ink + background * (1 - ink)``.

    Args:
        ink: (..., H, W) in [0, 1].
        rgb: (3,) or (..., 3) colours in [0, 1], broadcast against ink's leading dims.
        background: (..., 3, H, W) or None for white.

    Returns:
        (..., 3, H, W) images.
    """
    ink = as_tensor(ink, "ink", ndim=(2, 3, 4, 5))
    col = as_tensor(rgb, "rgb", dtype=ink.dtype, device=ink.device)
    if col.shape[-1] != 3:
        raise ValueError(f"rgb must end in a dimension of 3, got shape {tuple(col.shape)}")
    a = ink.unsqueeze(-3)
    c = col[..., :, None, None]
    bg = torch.ones_like(c) if background is None else as_tensor(
        background, "background", dtype=ink.dtype, device=ink.device)
    return c * a + bg * (1 - a)


def textures(kinds: torch.Tensor, size: int, *, seed: int | torch.Generator | None = 0
             ) -> torch.Tensor:
    """Grey background textures (n, size, size) in [0.55, 1], one of :data:`TEXTURES` each,
    at a random phase so that a texture is a pattern, not a fixed image."""
    k = as_tensor(kinds, "kinds", ndim=1, dtype=torch.long)
    if int(k.min()) < 0 or int(k.max()) >= len(TEXTURES):
        raise ValueError(f"kinds must lie in [0, {len(TEXTURES)}), got {k.min()}..{k.max()}")
    gen = resolve_seed(seed)
    n = len(k)
    phase = torch.randint(0, 4, (n, 2), generator=gen).to(k.device)
    noise = torch.rand(n, size, size, generator=gen).to(k.device)
    r = torch.arange(size, device=k.device)
    i = (r[None, :, None] + phase[:, :1, None]) % 4  # (n, size, 1)
    j = (r[None, None, :] + phase[:, 1:, None]) % 4  # (n, 1, size)
    c = (size - 1) / 2
    rad = torch.sqrt((r[:, None] - c) ** 2 + (r[None, :] - c) ** 2)[None]
    on = torch.stack(torch.broadcast_tensors(
        torch.zeros_like(i, dtype=torch.bool),            # solid
        i < 2,                                             # hstripes
        j < 2,                                             # vstripes
        (i + j) % 4 < 2,                                   # diagonal
        (i - j) % 4 < 2,                                   # antidiagonal
        (i == 0) | (j == 0),                               # grid
        (i < 2) ^ (j < 2),                                 # checker
        (i == 1) & (j == 1),                               # dots
        (rad + phase[:, :1, None]).floor() % 4 < 2,        # rings
        noise > 0.5,                                       # noise
    ), dim=1)  # (n, 10, size, size)
    pattern = on[torch.arange(n, device=k.device), k].float()
    return 1.0 - 0.45 * pattern


class BimodalDigits(NamedTuple):
    """Two coloured, textured views of the same digit class and their attributes.

    ``x1``, ``x2``: (n, 3, 24, 24) in [0, 1]; ``digit`` (redundant, shared), ``texture1``,
    ``texture2``, ``color1``, ``color2`` (unique to one view), ``synergy`` = ``color2 ==
    pairing[texture1]`` (needs both views); all (n,) int64. ``pairing``: (10,) the fixed
    texture -> colour bijection.
    """

    x1: torch.Tensor
    x2: torch.Tensor
    digit: torch.Tensor
    texture1: torch.Tensor
    texture2: torch.Tensor
    color1: torch.Tensor
    color2: torch.Tensor
    synergy: torch.Tensor
    pairing: torch.Tensor


# The texture -> colour bijection is a property of the task, not of a run: fixed.
_PAIRING = torch.randperm(10, generator=torch.Generator().manual_seed(20250124))


def _place(ink: torch.Tensor, canvas: int, gen: torch.Generator) -> torch.Tensor:
    """Put (n, h, w) ink at a random offset on an empty (n, canvas, canvas) canvas."""
    n, h, w = ink.shape
    off = torch.randint(0, canvas - h + 1, (n, 2), generator=gen)
    out = torch.zeros(n, canvas, canvas, dtype=ink.dtype)
    r = off[:, :1] + torch.arange(h)[None]  # (n, h)
    c = off[:, 1:] + torch.arange(w)[None]  # (n, w)
    out[torch.arange(n)[:, None, None], r[:, :, None], c[:, None, :]] = ink
    return out


def bimodal_digits(n: int, *, biased: bool, split: str = "train",
                   seed: int | torch.Generator | None = 0,
                   device: torch.device | str | None = None) -> BimodalDigits:
    """Pairs of 24x24 images of one digit class (different exemplars, random offsets), each
    with its own colour (1 of 10) and background texture (1 of 10).

    The digit is redundant (in both views), texture/colour of one view are unique to it,
    and ``synergy`` needs both views: it is 1 iff ``color2 == pairing[texture1]``. With
    ``biased`` the pairing always holds (pretraining set for synergy); without, colours are
    independent and about 10% of pairs are positive.

    Args:
        n: number of pairs.
        biased: force ``color2 = pairing[texture1]``.
        split: ``"train"`` or ``"test"`` exemplars of :func:`digit_images` (size 16, seed 0).
        seed: int, Generator or None.

    Returns:
        BimodalDigits on ``device``.
    """
    n = check_int(n, "n", 1)
    check_choice(split, "split", ("train", "test"))
    gen = resolve_seed(seed)
    data = digit_images(16, 0)
    imgs, labs = (data.X_train, data.y_train) if split == "train" else (data.X_test,
                                                                         data.y_test)
    digit = torch.randint(0, 10, (n,), generator=gen)
    # two different exemplars of each drawn class: rank within class, then offset
    order = torch.argsort(labs, stable=True)
    counts = torch.bincount(labs, minlength=10)
    starts = torch.cumsum(counts, 0) - counts
    a = (torch.rand(n, generator=gen) * counts[digit]).long()
    b = (a + 1 + (torch.rand(n, generator=gen) * (counts[digit] - 1)).long()) % counts[digit]
    ink1, ink2 = imgs[order[starts[digit] + a]], imgs[order[starts[digit] + b]]
    tex = torch.randint(0, 10, (n, 2), generator=gen)
    col1 = torch.randint(0, 10, (n,), generator=gen)
    col2 = _PAIRING[tex[:, 0]] if biased else torch.randint(0, 10, (n,), generator=gen)
    palette = torch.tensor(list(COLORS.values()))
    views = []
    for ink, t, c in ((ink1, tex[:, 0], col1), (ink2, tex[:, 1], col2)):
        bg = textures(t, 24, seed=gen)[:, None].expand(n, 3, 24, 24)
        views.append(tint(_place(ink, 24, gen), palette[c], bg).to(device))
    synergy = (col2 == _PAIRING[tex[:, 0]]).long()
    to = lambda t: t.to(device)  # noqa: E731
    return BimodalDigits(views[0], views[1], to(digit), to(tex[:, 0]), to(tex[:, 1]),
                         to(col1), to(col2), to(synergy), to(_PAIRING.clone()))


def digit_sequences(n: int, colors: dict[str, tuple[float, float, float]] | None = None,
                    split: str = "train", seed: int | torch.Generator | None = 0,
                    device: torch.device | str | None = None, *, split_seed: int = 0
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sequences of the ten digits, each once in random order, tinted with one sample colour.

    Args:
        n: number of sequences.
        colors: name -> rgb (default :data:`TRAIN_COLORS`; :data:`OOD_COLORS` for OOD tests).
        split: ``"train"`` or ``"test"`` exemplars (8x8, :func:`digit_images` split).
        seed: int, Generator or None: the sequences, colours and exemplar picks.
        split_seed: seed (>= 0) of the exemplars' train/test split, shared by both splits of
            one testbed.

    Returns:
        ``x`` (n, 10, 3, 8, 8) in [0, 1] on white, ``content`` (n, 10) the digit of each
        fragment, ``style`` (n,) the colour index into ``colors``.
    """
    n = check_int(n, "n", 1)
    check_choice(split, "split", ("train", "test"))
    colors = TRAIN_COLORS if colors is None else colors
    if not colors:
        raise ValueError("colors must name at least one colour")
    gen = resolve_seed(seed)
    data = digit_images(8, check_int(split_seed, "split_seed", 0))
    imgs, labs = (data.X_train, data.y_train) if split == "train" else (data.X_test,
                                                                         data.y_test)
    content = torch.argsort(torch.rand(n, 10, generator=gen), dim=1)  # a permutation each
    order = torch.argsort(labs, stable=True)
    counts = torch.bincount(labs, minlength=10)
    starts = torch.cumsum(counts, 0) - counts
    pick = (torch.rand(n, 10, generator=gen) * counts[content]).long()
    ink = imgs[order[starts[content] + pick]]  # (n, 10, 8, 8)
    style = torch.randint(0, len(colors), (n,), generator=gen)
    palette = torch.tensor(list(colors.values()), dtype=torch.float32)
    x = tint(ink, palette[style][:, None, :])
    return x.to(device), content.to(device), style.to(device)


class RandomSensor(torch.nn.Module):
    """A fixed random tanh MLP plus Gaussian noise: a new "modality" of its input."""

    def __init__(self, d_in: int, d_out: int, depth: int, noise: float,
                 generator: torch.Generator) -> None:
        super().__init__()
        widths = [d_in] + [d_out] * depth
        self.weights = torch.nn.ParameterList(
            torch.nn.Parameter(torch.randn(a, b, generator=generator) / a ** 0.5,
                               requires_grad=False)
            for a, b in zip(widths[:-1], widths[1:], strict=True))
        self.noise = noise

    def forward(self, X: torch.Tensor, *, seed: int | torch.Generator | None = 0
                ) -> torch.Tensor:
        """(n, d_in) -> (n, d_out); the noise is drawn from ``seed``."""
        X = as_tensor(X, "X", ndim=2)
        if X.shape[1] != self.weights[0].shape[0]:
            raise ValueError(f"X must have {self.weights[0].shape[0]} columns, "
                             f"got {X.shape[1]}")
        h = X
        for W in self.weights:
            h = torch.tanh(h @ W.to(X.device, X.dtype))
        g = resolve_seed(seed)
        return h + self.noise * torch.randn(h.shape, generator=g, dtype=h.dtype).to(h.device)


def random_sensor(d_in: int, d_out: int, depth: int = 2, noise: float = 0.1, *,
                  seed: int | torch.Generator | None = 0) -> RandomSensor:
    """A fixed random sensor ``x -> tanh(… tanh(x W1) … Wk) + N(0, noise^2)``.

    Args:
        d_in, d_out: input and output widths. depth: number of tanh layers (>= 1).
        noise: standard deviation of the additive noise (>= 0).
        seed: seeds the weights.
    """
    d_in, d_out = check_int(d_in, "d_in", 1), check_int(d_out, "d_out", 1)
    depth = check_int(depth, "depth", 1)
    noise = check_range(noise, "noise", 0)
    return RandomSensor(d_in, d_out, depth, noise, resolve_seed(seed))


# --- Trifeatures (Hermann & Lampinen 2020) and CoMM's bimodal Trifeatures -------------------

TRI_SHAPES: tuple[str, ...] = ("triangle", "square", "plus", "circle", "tee", "rhombus",
                               "pentagon", "star", "fivesquare", "trapezoid")
"""The ten shapes of Trifeatures (the official ``BASE_SHAPES`` order)."""

TRI_TEXTURES: tuple[str, ...] = ("solid", "stripes", "grid", "hexgrid", "dots", "noise",
                                 "triangles", "zigzags", "rain", "pluses")
"""The ten textures of Trifeatures (the official ``BASE_TEXTURES`` order)."""

TRI_COLORS: dict[str, tuple[float, float, float]] = {
    "red": (1.0, 0.0, 0.0), "green": (0.0, 1.0, 0.0), "blue": (0.0, 0.0, 1.0),
    "yellow": (1.0, 1.0, 0.0), "pink": (1.0, 0.4, 1.0), "cyan": (0.0, 1.0, 1.0),
    "purple": (0.3, 0.0, 0.5), "ocean": (0.1, 0.4, 0.5), "orange": (1.0, 0.6, 0.0),
    "white": (1.0, 1.0, 1.0),
}
"""The ten colours of Trifeatures (the official ``BASE_COLORS``), on a grey 0.5 background."""

TRI_TASKS: tuple[str, ...] = ("redundancy", "uniqueness", "synergy")
"""CoMM's three probing tasks on :func:`bimodal_trifeatures` (shared shape, texture of
modality 1, the texture1-colour2 pairing)."""

_GAP = 0.35  # tint of the texture's gaps: the silhouette survives sparse textures at 32 px


def _shape_mask(kind: int, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Shape ``kind`` on template coordinates ``a`` (left -> right), ``b`` (top -> bottom) in
    [0, 1): the official 128-px templates written as inequalities."""
    inside = (a >= 0) & (a < 1) & (b >= 0) & (b < 1)
    ca, cb = (a - 0.5).abs(), (b - 0.5).abs()
    if kind == 0:    # triangle, apex up
        m = ca < b / 2
    elif kind == 1:  # square
        m = inside
    elif kind == 2:  # plus
        m = (ca < 1 / 6) | (cb < 1 / 6)
    elif kind == 3:  # circle
        m = ca ** 2 + cb ** 2 < 0.25
    elif kind == 4:  # tee
        m = (ca < 1 / 6) | (b < 1 / 3)
    elif kind == 5:  # rhombus (a sheared square, as in the official template)
        s = a - 0.5 + b / 2
        m = (s > 0) & (s < 0.5)
    elif kind == 6:  # pentagon: a roof over a trapezoid
        off = (b - 0.4) / 3.1
        m = torch.where(b < 0.4, ca < 1.25 * b, (a > off) & (a < 1 - off))
    elif kind == 7:  # star: spike, arms, two legs
        off = (b - 0.4) * 2.4
        x1, x2 = 0.33 - 0.43 * (b - 0.55), 0.62 - 1.05 * (b - 0.55)
        legs = (b >= 0.55) & (((a > x1) & (a < x2)) | ((1 - a > x1) & (1 - a < x2)))
        m = ((b < 0.4) & (ca < b / 4)) | ((b >= 0.4) & (b < 0.6) & (a > off) & (a < 1 - off)
                                          ) | legs
    elif kind == 8:  # fivesquare: four corners and the centre of a 3x3 grid
        ia, ib = (a * 3).floor(), (b * 3).floor()
        m = ((ia != 1) & (ib != 1)) | ((ia == 1) & (ib == 1))
    else:            # trapezoid, wide side up
        off = b / 3.1
        m = (a > off) & (a < 1 - off)
    return m & inside


def _texture_mask(kind: int, u: torch.Tensor, v: torch.Tensor, period: float,
                  key: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """Texture ``kind`` on rotated, offset pixel coordinates ``u`` (across), ``v`` (down):
    the official patterns with their ``scale`` set to ``period`` pixels."""
    P = period
    x, y = torch.remainder(u, P), torch.remainder(v, P)
    w = P / 3  # the official line width, scale // 3
    if kind == 0:    # solid
        return torch.ones_like(u, dtype=torch.bool)
    if kind == 1:    # stripes
        return y < w
    if kind == 2:    # grid
        return (y < w) | (x < w)
    if kind == 3:    # hexgrid: three line families 60 degrees apart
        t = P / 4
        return ((torch.remainder(u + 1.73 * v, P) < t) | (torch.remainder(u - 1.73 * v, P) < t)
                | (y < t))
    if kind == 4:    # dots
        return (x - P / 2) ** 2 + (y - P / 2) ** 2 < (3 * P / 7) ** 2
    if kind == 5:    # noise: a fair coin per pixel
        return noise
    if kind == 6:    # triangles
        return y / 2 - (x - P / 2).abs() > 0
    if kind == 7:    # zigzags: rows of slanted bars, alternate rows mirrored
        flip = torch.remainder(torch.floor(v / P), 2) == 1
        xx = torch.where(flip, P - x, x)
        return (xx > y / 2) & (xx < P - P // 2 + y / 2)
    if kind == 8:    # rain: 1-px streaks of length 2P/3, 35% of cells lit (a seeded hash)
        col = torch.floor(u)
        h = 2 * P / 3
        row = torch.floor((v + 7.3 * col) / h)
        r = torch.frac(torch.sin(col * 12.9898 + row * 78.233 + key) * 43758.5453).abs()
        return r < 0.35
    # pluses, rows offset by half a period
    shift = torch.remainder(torch.floor(v / P), 2) * (P / 2)
    xx = torch.remainder(u + shift, P) - P / 2
    yy = y - P / 2
    arm, half = P / 6, 0.35 * P
    return ((xx.abs() < arm) & (yy.abs() < half)) | ((yy.abs() < arm) & (xx.abs() < half))


class TrifeaturesImages(NamedTuple):
    """Trifeatures images ``x`` (n, 3, size, size) in [0, 1] and their int64 (n,) labels."""

    x: torch.Tensor
    shape: torch.Tensor
    texture: torch.Tensor
    color: torch.Tensor


def _attribute(value: ArrayLike, name: str, n: int, gen: torch.Generator) -> torch.Tensor:
    if value is None:
        return torch.randint(0, 10, (n,), generator=gen)
    t = as_tensor(value, name, ndim=1, dtype=torch.long).cpu()
    if len(t) != n:
        raise ValueError(f"{name} must hold n={n} labels, got {len(t)}")
    if len(t) and (int(t.min()) < 0 or int(t.max()) > 9):
        raise ValueError(f"{name} must lie in [0, 10), got {int(t.min())}..{int(t.max())}")
    return t


class _Layout(NamedTuple):
    """Per-image random placement of Trifeatures: rotation angles (n, 2) of the shape and of
    the texture, shape centre (n, 2), texture phase (n, 2), rain hash key (n,), the noise
    texture's coins (n, size, size); template half-side and texture period in pixels."""

    ang: torch.Tensor
    centre: torch.Tensor
    phase: torch.Tensor
    key: torch.Tensor
    coin: torch.Tensor
    half: float
    period: float

    def to(self, dev: torch.device) -> _Layout:
        return self._replace(**{f: getattr(self, f).to(dev) for f in self._fields[:5]})


def _draw_layout(n: int, size: int, t_lab: torch.Tensor, gen: torch.Generator) -> _Layout:
    """Draw each image's placement on the CPU generator (coins only for the noise texture)."""
    half = 0.57 * size / 2  # template half-side in pixels
    ang = torch.randint(-45, 45, (n, 2), generator=gen).double() * (math.pi / 180)
    reach = half * (ang[:, 0].cos().abs() + ang[:, 0].sin().abs())  # rotated half-extent
    centre = reach[:, None] + torch.rand(n, 2, generator=gen, dtype=torch.float64) * (
        size - 2 * reach[:, None])
    period = 6.0 * size / 32
    phase = torch.rand(n, 2, generator=gen, dtype=torch.float64) * period
    key = torch.rand(n, generator=gen, dtype=torch.float64) * 1000
    noisy = (t_lab == 5).nonzero()[:, 0]  # a fair coin per pixel, drawn for "noise" only
    coin = torch.zeros(n, size, size, dtype=torch.bool)
    coin[noisy] = torch.rand(len(noisy), size, size, generator=gen) < 0.5
    return _Layout(ang, centre, phase, key, coin, half, period)


def _ink(s_lab: torch.Tensor, t_lab: torch.Tensor, lay: _Layout, size: int) -> torch.Tensor:
    """(n, size, size) ink on ``lay``'s device: 1 where shape and texture are on, ``_GAP``
    in the texture's gaps inside the shape, 0 outside the shape."""
    dev, half = lay.ang.device, lay.half
    ang, centre, phase, key, coin = lay.ang, lay.centre, lay.phase, lay.key, lay.coin
    r = torch.arange(size, device=dev, dtype=torch.float64) + 0.5
    ink = torch.empty(len(s_lab), size, size, device=dev)
    # Two passes over the 10 kinds, vectorised over images and pixels: every silhouette is
    # drawn before any texture, so a texture is never overwritten by a later shape kind.
    for k in range(10):
        idx = (s_lab == k).nonzero()[:, 0].to(dev)
        if len(idx):  # rotate pixels back into the template; each term is a row or column
            cos, sin = ang[idx, 0].cos()[:, None] / (2 * half), ang[idx, 0].sin()[:, None] / (
                2 * half)
            dy, dx = r[None] - centre[idx, :1], r[None] - centre[idx, 1:]  # (m, size)
            a = ((cos * dx + 0.5)[:, None, :] + (sin * dy)[:, :, None]).float()
            b = ((cos * dy + 0.5)[:, :, None] - (sin * dx)[:, None, :]).float()
            ink[idx] = _shape_mask(k, a, b).float()
    for k in range(10):
        idx = (t_lab == k).nonzero()[:, 0].to(dev)
        if len(idx):
            cos, sin = ang[idx, 1].cos()[:, None], ang[idx, 1].sin()[:, None]
            u = ((cos * r + phase[idx, 1:])[:, None, :] + (sin * r)[:, :, None]).float()
            v = ((cos * r + phase[idx, :1])[:, :, None] - (sin * r)[:, None, :]).float()
            on = _texture_mask(k, u, v, lay.period, key[idx].float()[:, None, None], coin[idx])
            ink[idx] *= torch.where(on, 1.0, _GAP)
    return ink


def trifeatures(n: int, *, size: int = 32, shape: object = None, texture: object = None,
                color: object = None, seed: int | torch.Generator | None = 0,
                device: torch.device | str | None = None) -> TrifeaturesImages:
    """Render Hermann & Lampinen's Trifeatures: one of 10 shapes, filled with one of 10
    textures, in one of 10 colours, on grey, vectorised over images.

    As the official generator (``Duplums/CoMM`` ``dataset/trifeatures.py``): the shape
    template spans 0.57 of the image, is rotated by an integer angle in [-45, 45) degrees and
    placed at a random position inside the image; the texture is rotated by its own angle in
    [-45, 45) with a random phase; pixels are ``colour`` where shape and texture are on and
    grey 0.5 elsewhere. At 32 px the texture period is 6 px (the official 10 px is for 224 px)
    and texture gaps inside the shape are tinted 35% towards the colour, so the silhouette
    survives sparse textures (dots, rain); shapes are not anti-aliased.

    Args:
        n: number of images (>= 1).
        size: image side in pixels (>= 16; 32 by default). The period scales with it.
        shape, texture, color: (n,) labels in [0, 10) to render, or None to draw them.
        seed: int, Generator or None. Random numbers are drawn on the CPU, so a seed gives
            the same images on every device.
        device: where the images are rendered and returned.

    Returns:
        TrifeaturesImages ``(x, shape, texture, color)``; labels index :data:`TRI_SHAPES`,
        :data:`TRI_TEXTURES`, :data:`TRI_COLORS`.

    Raises:
        ValueError: ``n < 1``, ``size < 16``, labels of the wrong length or out of range.
        TypeError: non-integer ``n``, ``size`` or labels.

    Examples:
        >>> from iclr25.datasets.views import trifeatures
        >>> data = trifeatures(4, seed=0)
        >>> data.x.shape, data.shape.shape
        (torch.Size([4, 3, 32, 32]), torch.Size([4]))
    """
    n = check_int(n, "n", 1)
    size = check_int(size, "size", 16)
    gen = resolve_seed(seed)
    labels = [_attribute(v, name, n, gen) for v, name in
              ((shape, "shape"), (texture, "texture"), (color, "color"))]
    s_lab, t_lab, c_lab = labels
    dev = torch.device("cpu") if device is None else torch.device(device)
    ink = _ink(s_lab, t_lab, _draw_layout(n, size, t_lab, gen).to(dev), size)
    palette = torch.tensor(list(TRI_COLORS.values()), device=dev)[c_lab.to(dev)]
    x = 0.5 + ink[:, None] * (palette[:, :, None, None] - 0.5)
    return TrifeaturesImages(x, s_lab.to(dev), t_lab.to(dev), c_lab.to(dev))


class BimodalTrifeatures(NamedTuple):
    """CoMM's bimodal Trifeatures: pairs of images that share their shape.

    ``x1``, ``x2``: (n, 3, size, size). ``shape`` (shared: redundancy), ``texture1`` (unique
    to modality 1: uniqueness), ``texture2``, ``color1``, ``color2``, ``synergy`` = 1 iff
    ``color2 == pairing[texture1]``: all (n,) int64. ``pairing``: (10,) the texture -> colour
    bijection.
    """

    x1: torch.Tensor
    x2: torch.Tensor
    shape: torch.Tensor
    texture1: torch.Tensor
    texture2: torch.Tensor
    color1: torch.Tensor
    color2: torch.Tensor
    synergy: torch.Tensor
    pairing: torch.Tensor

    def labels(self, task: str) -> torch.Tensor:
        """The (n,) labels of ``task``, one of :data:`TRI_TASKS`: ``"redundancy"`` (shape),
        ``"uniqueness"`` (texture of modality 1) or ``"synergy"`` (0/1).

        Raises:
            ValueError: unknown task.
        """
        check_choice(task, "task", TRI_TASKS)
        return {"redundancy": self.shape, "uniqueness": self.texture1,
                "synergy": self.synergy}[task]


@functools.lru_cache(maxsize=16)
def _tri_layout(layout_seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The task's layout: the texture -> colour bijection (10,) and the mask (1000,) of the
    20% of (shape, texture, colour) combinations held out for the test split. Layout 0 is
    the default; another layout is another draw of the testbed."""
    pairing = torch.randperm(10, generator=torch.Generator().manual_seed(
        20250422 + 2 * layout_seed))
    test = torch.zeros(1000, dtype=torch.bool)
    test[torch.randperm(1000, generator=torch.Generator().manual_seed(
        20250423 + 2 * layout_seed))[:200]] = True
    return pairing, test


def _check_pairing(pairing: ArrayLike, default: torch.Tensor) -> torch.Tensor:
    if pairing is None:
        return default.clone()
    p = as_tensor(pairing, "pairing", ndim=1, dtype=torch.long).cpu()
    if len(p) != 10 or not torch.equal(torch.sort(p).values, torch.arange(10)):
        raise ValueError(f"pairing must be a bijection of the 10 textures onto the 10 colours "
                         f"(a permutation of 0..9), got {p.tolist()}")
    return p


def bimodal_trifeatures(n: int, *, biased: bool = False, split: str = "train",
                        pairing: ArrayLike | None = None, size: int = 32,
                        seed: int | torch.Generator | None = 0, layout_seed: int = 0,
                        device: torch.device | str | None = None) -> BimodalTrifeatures:
    """Pairs of Trifeatures images sharing their shape, with independent textures and colours
    (CoMM's ``BimodalTrifeatures(share_attr="shape", unique_attr="texture",
    synergy_attr=("texture", "color"))``).

    Each image's (shape, texture, colour) combination comes from the split: 800 of the 1000
    combinations for ``"train"``, the other 200 for ``"test"`` (an 80/20 split drawn from
    ``layout_seed``, as the official code holds out combinations), so probes are scored on
    unseen combinations.
    With ``biased`` only pairs with ``color2 == pairing[texture1]`` are drawn (synergy
    pre-training); without, about 10% of pairs are synergy positives.

    Args:
        n: number of pairs (>= 1).
        biased: keep only correlated (texture1, colour2) pairs.
        split: ``"train"`` or ``"test"`` combinations.
        pairing: (10,) permutation mapping texture j to colour ``pairing[j]``, or None for
            the layout's.
        size, seed, device: as :func:`trifeatures`.
        layout_seed: seed (>= 0) of the task's layout, the default pairing and the held-out
            combinations, shared by every split of one testbed (0: the default layout).

    Returns:
        BimodalTrifeatures on ``device``; ``.labels(task)`` gives a task's labels.

    Raises:
        ValueError: ``n < 1``, ``size < 16``, unknown split, a pairing that is not a
            bijection.
    """
    n = check_int(n, "n", 1)
    size = check_int(size, "size", 16)
    check_choice(split, "split", ("train", "test"))
    layout_seed = check_int(layout_seed, "layout_seed", 0)
    default_pairing, held = _tri_layout(layout_seed)
    pair = _check_pairing(pairing, default_pairing)
    gen = resolve_seed(seed)
    allowed = held if split == "test" else ~held  # index 100 s + 10 t + c
    s, t, c = _draw_combinations(n, allowed, pair, biased, gen)
    imgs = trifeatures(2 * n, size=size, shape=s.repeat(2), texture=t.T.reshape(-1),
                       color=c.T.reshape(-1), seed=gen, device=device)
    synergy = (c[:, 1] == pair[t[:, 0]]).long()
    to = lambda v: v.to(imgs.x.device)  # noqa: E731
    return BimodalTrifeatures(imgs.x[:n], imgs.x[n:], to(s), to(t[:, 0]), to(t[:, 1]),
                              to(c[:, 0]), to(c[:, 1]), to(synergy), to(pair))


def _draw_combinations(n: int, allowed: torch.Tensor, pair: torch.Tensor, biased: bool,
                       gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Shapes (n,), textures (n, 2) and colours (n, 2) of pairs whose both (shape, texture,
    colour) combinations are ``allowed``; with ``biased``, ``colour2 = pair[texture1]``."""
    # Vectorised rejection: redraw the rows that fall outside the split until none is left
    # (a biased image 2 keeps its colour).
    s = torch.randint(0, 10, (n,), generator=gen)
    t = torch.randint(0, 10, (n, 2), generator=gen)
    c = torch.randint(0, 10, (n, 2), generator=gen)
    if biased:
        c[:, 1] = pair[t[:, 0]]
    for _ in range(1000):
        bad = ~(allowed[100 * s[:, None] + 10 * t + c])  # (n, 2)
        if not bad.any():
            break
        rows = bad.any(1).nonzero()[:, 0]
        m = len(rows)
        redo_s = torch.randint(0, 10, (m,), generator=gen)
        redo_t = torch.randint(0, 10, (m, 2), generator=gen)
        redo_c = torch.randint(0, 10, (m, 2), generator=gen)
        if biased:
            redo_c[:, 1] = pair[redo_t[:, 0]]
        s[rows], t[rows], c[rows] = redo_s, redo_t, redo_c
    else:  # pragma: no cover - every split has valid pairs for every pairing
        raise RuntimeError("bimodal_trifeatures: rejection sampling did not converge")
    return s, t, c
