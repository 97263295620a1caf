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

from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from iclr25._checks import as_tensor, check_choice, check_int, check_range, resolve_seed

__all__ = [
    "COLORS", "OOD_COLORS", "TEXTURES", "TRAIN_COLORS", "BimodalDigits", "ImageSplit",
    "RandomSensor", "bimodal_digits", "digit_images", "digit_sequences", "jitter",
    "permute_features", "random_sensor", "textures", "tint",
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


def tint(ink: torch.Tensor, rgb: object, background: torch.Tensor | None = None
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
                    device: torch.device | str | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sequences of the ten digits, each once in random order, tinted with one sample colour.

    Args:
        n: number of sequences.
        colors: name -> rgb (default :data:`TRAIN_COLORS`; :data:`OOD_COLORS` for OOD tests).
        split: ``"train"`` or ``"test"`` exemplars (8x8, :func:`digit_images` split, seed 0).
        seed: int, Generator or None.

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
    data = digit_images(8, 0)
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
    """A fixed random sensor ``x -> tanh(... tanh(x W1) ... Wk) + N(0, noise^2)``.

    Args:
        d_in, d_out: input and output widths. depth: number of tanh layers (>= 1).
        noise: standard deviation of the additive noise (>= 0).
        seed: seeds the weights.
    """
    d_in, d_out = check_int(d_in, "d_in", 1), check_int(d_out, "d_out", 1)
    depth = check_int(depth, "depth", 1)
    noise = check_range(noise, "noise", 0)
    return RandomSensor(d_in, d_out, depth, noise, resolve_seed(seed))
