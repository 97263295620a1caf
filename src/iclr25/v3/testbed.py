"""PhoneNums, the paper's controlled image setting (official ``dataset/phonenums``): a page is
the ten digits, each once in random order, printed in one colour per page; each digit is one
fragment of 48 x 32 pixels (``n_feature: 48``, ``fragment_len: 32``), and the codebook has
K = 10 atoms.

The page is made as the official ``Typography.printer`` makes it (``distortion="color,
gaussian, salt, blur, translate"``):

- each digit is the one glyph of the font at size 48, centred in a 32 x 48 white-ish patch,
  8 pixels up, shifted by a random sub-pixel offset in [0, 1) on each axis (``translate``);
- ink colour ``int(240 * rgb + 8)`` per channel (0-255), jittered by an integer in [-2, 2]
  per page and again per digit (``color``); background 245, jittered per page;
- a gradual vertical blur: each patch-wide strip draws a Gaussian kernel size in {5, 9, 13}
  (the official ``2 * (randint(1, randint(2, 5)) * 2) + 1``), interpolated column by column
  towards the next strip's, each column blurred vertically (``cv2.GaussianBlur`` on a
  one-column image: OpenCV's kernels for sigma 0 and its reflect-101 border);
- Gaussian noise of standard deviation ``10 U(0, 1)`` per page, added in uint8 arithmetic as
  the official ``canvas += np.uint8(noise)`` does: the noise truncates towards zero and wraps
  modulo 256, so near-white background plus positive noise turns dark (the ``salt``).

Deviations (the Setting's deviations say so too): the font is DejaVu Sans (matplotlib's; the
official ITC Kristen is not redistributable); values are ``uint8 / 255`` in [0, 1] (the
official loader maps to [-1, 1], an affine change); ``pool`` > 1 average-pools each fragment
``pool x pool`` (a size cut for time, chosen by the pilot in :mod:`iclr25.v3.pilot`).
"""

from __future__ import annotations

import functools

import numpy as np
import torch
import torch.nn.functional as F

from iclr25._checks import check_int, resolve_seed

__all__ = ["FRAGMENT", "phone_numbers"]

FRAGMENT = (48, 32)  #: (height, width) of one digit fragment, as the official data
_KERNELS = (5, 7, 9, 11, 13)  # every odd size the interpolated blur can reach


@functools.cache
def _glyphs() -> torch.Tensor:
    """(10, 48 + 1, 32 + 1) float ink (alpha in [0, 1]) of the digits 0-9 as PIL draws them
    at the official integer position, one pixel of margin right and below for the shift."""
    from matplotlib import font_manager
    from PIL import Image, ImageDraw, ImageFont

    h, w = FRAGMENT
    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), h)
    out = []
    for d in range(10):
        img = Image.new("L", (w + 1, h + 1), 0)
        draw = ImageDraw.Draw(img)
        x = (w - draw.textlength(str(d), font)) // 2
        draw.text((x, -8), str(d), font=font, fill=255)  # (h - text_h) // 2 - 8, text_h = h
        out.append(torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0))
    return torch.stack(out)


def _shifted(ink: torch.Tensor, dx: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """Bilinear sub-pixel shift right/down by (dx, dy) in [0, 1): (M, H + 1, W + 1) -> (M, H, W)
    (PIL positions fractional text anti-aliased, as this does)."""
    h, w = FRAGMENT
    pad = F.pad(ink, (1, 0, 1, 0))  # a zero row/column above and left: the shift's source
    a, b = pad[:, 1:h + 1, 1:w + 1], pad[:, 1:h + 1, :w]   # (y, x), (y, x - 1)
    c, d = pad[:, :h, 1:w + 1], pad[:, :h, :w]             # (y - 1, x), (y - 1, x - 1)
    dx, dy = dx[:, None, None], dy[:, None, None]
    return (1 - dy) * ((1 - dx) * a + dx * b) + dy * ((1 - dx) * c + dx * d)


#: OpenCV's fixed kernels for ``getGaussianKernel(k, 0)`` with k <= 7 (``small_gaussian_tab``)
_SMALL = {5: (1, 4, 6, 4, 1), 7: (1, 3.5, 7, 9, 7, 3.5, 1)}


def _gaussian(k: int) -> torch.Tensor:
    """OpenCV's ``getGaussianKernel(k, 0)`` (what ``GaussianBlur(.., (k, k), 0)`` uses): its
    fixed table for k <= 7, else sigma = 0.3 ((k - 1) / 2 - 1) + 0.8."""
    if k in _SMALL:
        g = torch.tensor(_SMALL[k], dtype=torch.float64)
    else:
        sigma = 0.3 * ((k - 1) * 0.5 - 1) + 0.8
        t = torch.arange(k, dtype=torch.float64) - (k - 1) // 2
        g = torch.exp(-t * t / (2 * sigma * sigma))
    return g / g.sum()


@functools.cache
def _blur_matrix(k: int) -> torch.Tensor:
    """(48, 48) matrix of OpenCV's vertical ``GaussianBlur`` with kernel size ``k`` and the
    reflect-101 border (on a one-column image the horizontal pass is the identity)."""
    h = FRAGMENT[0]
    t = torch.arange(k) - (k - 1) // 2
    src = torch.arange(h)[:, None] + t                           # (h, k) rows each tap reads
    src = torch.where(src < 0, -src, torch.where(src >= h, 2 * (h - 1) - src, src))
    m = torch.zeros(h, h, dtype=torch.float64)
    m.index_put_((torch.arange(h)[:, None].expand(h, k), src), _gaussian(k).expand(h, k),
                 accumulate=True)
    return m.float()


def _column_kernels(n: int, gen: torch.Generator) -> torch.Tensor:
    """(n, 10 * 32) kernel size of every page column (the official ``random_gradual_blur``)."""
    w = FRAGMENT[1]
    top = torch.randint(2, 5, (n, 10), generator=gen)                       # randint(2, 5)
    v = 1 + (torch.rand(n, 10, generator=gen) * (top - 1)).long()          # randint(1, top)
    level = (4 * v + 1).double()                                            # 2 (2 v) + 1
    frac = torch.linspace(0, 1, w, dtype=torch.float64)
    nxt = torch.cat([level[:, 1:], level[:, -1:]], 1)  # the last strip keeps its own level
    k = (level[..., None] + (nxt - level)[..., None] * frac).long()        # int(linspace)
    return (k + (k % 2 == 0).long()).reshape(n, -1)                        # odd, as cv2 needs


def _blur(page: torch.Tensor, ksize: torch.Tensor) -> torch.Tensor:
    """Vertical Gaussian blur of each column of (n, 3, H, W') with its own kernel size
    ``ksize`` (n, W'), on uint8 values (rounded back as cv2 does)."""
    cols = page.permute(0, 3, 2, 1)                    # (n, W', H, 3): a column per (n, W')
    out = torch.empty_like(cols)
    for k in _KERNELS:
        sel = ksize == k
        out[sel] = _blur_matrix(k) @ cols[sel]
    return out.permute(0, 3, 2, 1).round().clamp(0, 255)


def phone_numbers(n: int, colors: dict[str, tuple[float, float, float]], *,
                  seed: int | torch.Generator | None = 0, pool: int = 1
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` PhoneNums pages as sequences of digit fragments (module docstring).

    Args:
        n: number of pages (>= 1).
        colors: name -> rgb in [0, 1], one drawn per page (the official training palette is
            :data:`~iclr25.datasets.views.TRAIN_COLORS`, its OOD palette ``OOD_COLORS``).
        seed: int, Generator or None: everything random on the page.
        pool: average-pool each fragment ``pool x pool`` (1 = the official 48 x 32); must
            divide 48 and 32.

    Returns:
        ``x`` (n, 10, 3, 48 / pool, 32 / pool) float32 in [0, 1], ``content`` (n, 10) the
        digit of each fragment, ``style`` (n,) the colour's index into ``colors``.

    Examples:
        >>> from iclr25.datasets.views import TRAIN_COLORS
        >>> x, content, style = phone_numbers(2, TRAIN_COLORS, seed=0, pool=2)
        >>> tuple(x.shape), sorted(content[0].tolist()) == list(range(10))
        ((2, 10, 3, 24, 16), True)
    """
    n = check_int(n, "n", 1)
    pool = check_int(pool, "pool", 1)
    if FRAGMENT[0] % pool or FRAGMENT[1] % pool:
        raise ValueError(f"pool must divide the fragment {FRAGMENT}, got {pool}")
    if not colors:
        raise ValueError("colors must name at least one colour")
    gen = resolve_seed(seed)
    h, w = FRAGMENT
    content = torch.argsort(torch.rand(n, 10, generator=gen), dim=1)  # a permutation each
    style = torch.randint(0, len(colors), (n,), generator=gen)
    rgb = (torch.tensor(list(colors.values()), dtype=torch.float64)[style] * 240 + 8).long()
    fg_page = rgb + torch.randint(-2, 3, (n, 3), generator=gen)
    bg = (245 + torch.randint(-2, 3, (n, 3), generator=gen)).clamp(0, 255)
    fg = (fg_page.clamp(0, 255)[:, None] + torch.randint(-2, 3, (n, 10, 3), generator=gen)
          ).clamp(0, 255).float()                                         # (n, 10, 3)
    shift = torch.rand(2, n * 10, generator=gen)
    ink = _shifted(_glyphs()[content.reshape(-1)], shift[0], shift[1]).reshape(n, 10, 1, h, w)
    bgf = bg.float()[:, None, :, None, None]
    frag = (bgf + ink * (fg[..., None, None] - bgf)).round()              # PIL's blend, uint8
    page = frag.permute(0, 2, 3, 1, 4).reshape(n, 3, h, 10 * w)           # side by side
    page = _blur(page, _column_kernels(n, gen))
    sigma = 10 * torch.rand(n, generator=gen)
    noise = torch.randn(n, 3, h, 10 * w, generator=gen) * sigma[:, None, None, None]
    page = torch.remainder(page + noise.trunc(), 256)                     # uint8 wrap-around
    x = page.reshape(n, 3, h, 10, w).permute(0, 3, 1, 2, 4) / 255.0
    if pool > 1:
        x = F.avg_pool2d(x.reshape(n * 10, 3, h, w), pool).reshape(n, 10, 3, h // pool,
                                                                    w // pool)
    return x.contiguous().float(), content, style
