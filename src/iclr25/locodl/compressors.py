"""Unbiased compressors C with E[C(x)] = x and E‖C(x) − x‖² ≤ ω‖x‖² (LoCoDL §2, class U(ω)).

Each compressor works on a block of client vectors ``V`` (n_clients, d), one independent draw
per row. ``generator`` is one ``torch.Generator`` (rows drawn from it), a sequence of
generators (one per row), or :class:`ClientStreams`: the per-client streams the engines use,
so that client i's draws do not depend on which process holds it. A sparse compressor
(rand-k, alone or composed with a
coordinate-wise one) also has a physical wire format, :meth:`Compressor.compress`: the
``(index int64 (n, k), value (n, k))`` pair the distributed engine all-gathers.

Uplink bits per client (float_bits = 32 as in the paper): dense 32d; rand-k k(32 + ⌈log2 d⌉);
natural 9d; rand-k∘natural k(9 + ⌈log2 d⌉).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import torch

from iclr25._checks import check_int
from iclr25._contract import checked


class ClientStreams:
    """One random stream per client (a seeded ``torch.Generator`` each), drawn in blocks.

    ``streams(width, like)`` returns the next (m, width) uniforms, row i from client i's own
    generator. Each client draws B rows of ``width`` at once (B depends on ``width`` only, not
    on the number of clients a process holds), so the Python loop over clients runs once
    every B rounds and the draws do not depend on the rank layout. Blocks are drawn on the
    generators' ``device`` and moved to ``like``'s (the engines use CPU generators, so a seed
    draws the same numbers on every device).
    """

    def __init__(self, seeds: Sequence[int], device: torch.device | str = "cpu") -> None:
        self.gens = [torch.Generator(device=device).manual_seed(int(s)) for s in seeds]
        self._buf: dict[tuple[int, torch.dtype], list] = {}

    def __len__(self) -> int:
        return len(self.gens)

    def __call__(self, width: int, like: torch.Tensor) -> torch.Tensor:
        key = (width, like.dtype)
        B = max(1, min(256, 2**16 // max(width, 1)))
        buf = self._buf.get(key)
        if buf is None or buf[1] == B:
            block = torch.stack([torch.rand(B, width, generator=g, dtype=like.dtype,
                                            device=g.device) for g in self.gens], 1)
            block = block.to(like.device)
            buf = [block, 0]
            self._buf[key] = buf
        buf[1] += 1
        return buf[0][buf[1] - 1]


Generators = torch.Generator | Sequence[torch.Generator] | ClientStreams

# bits of a naturally compressed number: sign + exponent of the float format
_NATURAL_BITS = {16: 6, 32: 9, 64: 12}


def _uniform(shape: tuple[int, int], generator: Generators, like: torch.Tensor) -> torch.Tensor:
    """U[0,1) of ``shape`` (rows, cols): from one generator, or row i from ``generator[i]``;
    drawn on the generators' device, returned on ``like``'s."""
    if isinstance(generator, torch.Generator):
        return torch.rand(shape, generator=generator, dtype=like.dtype,
                          device=generator.device).to(like.device)
    if isinstance(generator, ClientStreams):
        if len(generator) != shape[0]:
            raise ValueError(f"generator must hold one stream per row ({shape[0]}), "
                             f"got {len(generator)}")
        return generator(shape[1], like)
    gens = list(generator)
    if len(gens) != shape[0]:
        raise ValueError(f"generator must hold one generator per row ({shape[0]}), "
                         f"got {len(gens)}")
    if not gens:
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    # one draw per client: a loop over clients (each owns its stream), not over points
    return torch.stack([torch.rand(shape[1], generator=g, dtype=like.dtype, device=g.device)
                        for g in gens]).to(like.device)


def _check_block(V: object) -> torch.Tensor:
    if not isinstance(V, torch.Tensor):
        raise TypeError(f"V must be a torch.Tensor, got {type(V).__name__}")
    if V.ndim != 2 or not V.is_floating_point():
        raise ValueError(f"V must be a 2-D floating tensor (n_clients, d), got {V.dtype} "
                         f"{tuple(V.shape)}")
    return V


@checked
class Compressor:
    """Base: an unbiased random map on rows; subclasses define ω, the bits and the draw."""

    sparse = False

    def omega(self, d: int) -> float:
        """Variance factor ω of the compressor on R^d."""
        raise NotImplementedError

    def kept(self, d: int) -> int:
        """Coordinates sent per client."""
        return d

    def index_bits(self, d: int) -> int:
        """Bits of one coordinate index sent beside each value (0 for dense)."""
        return 0

    def value_bits(self, float_bits: int = 32) -> int:
        """Bits of one sent value."""
        return float_bits

    def bits(self, d: int, float_bits: int = 32) -> int:
        """Uplink bits one client sends per communication round."""
        check_int(d, "d", 1)
        return self.kept(d) * (self.value_bits(float_bits) + self.index_bits(d))

    def check(self, d: int) -> None:
        """Raise ValueError if the compressor cannot act on R^d."""

    def values(self, V: torch.Tensor, generator: Generators) -> torch.Tensor:
        """The coordinate-wise part (dense compressors): the compressed rows."""
        raise NotImplementedError

    def __call__(self, V: torch.Tensor, generator: Generators) -> torch.Tensor:
        """Compress each row of ``V`` (n_clients, d) independently; returns (n_clients, d)."""
        V = _check_block(V)
        self.check(V.shape[1])
        idx, val = self.compress(V, generator)
        return densify(idx, val, V.shape[1])

    def compress(self, V: torch.Tensor, generator: Generators
                 ) -> tuple[torch.Tensor | None, torch.Tensor]:
        """Wire format: ``(None, values (n, d))`` if dense, ``(index (n, k), values (n, k))``
        if sparse."""
        return None, self.values(V, generator)


def densify(idx: torch.Tensor | None, val: torch.Tensor, d: int) -> torch.Tensor:
    """Dense rows (n, d) from a wire payload (``idx`` None: ``val`` already dense)."""
    if idx is None:
        return val
    out = torch.zeros(val.shape[0], d, dtype=val.dtype, device=val.device)
    return out.scatter_(1, idx, val)


@checked
class Identity(Compressor):
    """No compression: ω = 0, float_bits·d bits."""

    def omega(self, d: int) -> float:
        return 0.0

    def values(self, V: torch.Tensor, generator: Generators) -> torch.Tensor:
        return V

    def __repr__(self) -> str:
        return "Identity()"


@checked
class RandK(Compressor):
    """rand-k: keep k coordinates drawn uniformly without replacement, scaled by d/k.

    ω = d/k − 1; bits k(float_bits + ⌈log2 d⌉) (value plus index).

    Raises:
        ValueError: ``k`` < 1 (here) or ``k`` > d (when applied).
    """

    sparse = True

    def __init__(self, k: int) -> None:
        self.k = check_int(k, "k", 1)

    def check(self, d: int) -> None:
        if self.k > d:
            raise ValueError(f"k must lie in [1, d={d}], got {self.k}")

    def omega(self, d: int) -> float:
        self.check(d)
        return d / self.k - 1.0

    def kept(self, d: int) -> int:
        return min(self.k, d)

    def index_bits(self, d: int) -> int:
        return math.ceil(math.log2(d)) if d > 1 else 0

    def indices(self, n: int, d: int, generator: Generators, like: torch.Tensor) -> torch.Tensor:
        """(n, k) int64 indices, k distinct per row."""
        self.check(d)
        scores = _uniform((n, d), generator, like)
        return scores.topk(self.k, dim=1, largest=False, sorted=False).indices

    def compress(self, V: torch.Tensor, generator: Generators
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        n, d = V.shape
        idx = self.indices(n, d, generator, V)
        return idx, V.gather(1, idx) * (d / self.k)

    def __repr__(self) -> str:
        return f"RandK({self.k})"


@checked
class Natural(Compressor):
    """Natural compression (Horváth et al. 2022): round |x| to a neighbouring power of two,
    up with probability |x|/2^⌊log2|x|⌋ − 1; ω = 1/8, 9 bits (sign, exponent) per value."""

    def omega(self, d: int) -> float:
        return 0.125

    def value_bits(self, float_bits: int = 32) -> int:
        return _NATURAL_BITS.get(float_bits, 1 + math.ceil(math.log2(float_bits)) + 3)

    def values(self, V: torch.Tensor, generator: Generators) -> torch.Tensor:
        m, e = torch.frexp(V.abs())            # |v| = m 2^e, m in [0.5, 1)
        u = _uniform(tuple(V.shape), generator, V)
        up = (u < 2 * m - 1).to(V.dtype)       # P(up) = |v|/a − 1 with a = 2^(e−1)
        return torch.sign(V) * torch.ldexp(1 + up, (e - 1).to(V.dtype))

    def __repr__(self) -> str:
        return "Natural()"


@checked
class ComposedCompressor(Compressor):
    """C1∘C2 with independent draws: ω = (1+ω1)(1+ω2) − 1 (LoCoDL §2).

    When one part is rand-k and the other coordinate-wise (Identity, Natural), the result is
    sparse: the coordinate-wise part acts on the k kept values only (same law, fewer draws).
    """

    def __init__(self, c1: Compressor, c2: Compressor) -> None:
        for name, c in (("c1", c1), ("c2", c2)):
            if not isinstance(c, Compressor):
                raise TypeError(f"{name} must be a Compressor, got {type(c).__name__}")
        self.c1, self.c2 = c1, c2
        sparse = [c for c in (c1, c2) if c.sparse]
        self.sparse = len(sparse) == 1 and not isinstance(sparse[0], ComposedCompressor)

    def check(self, d: int) -> None:
        self.c1.check(d)
        self.c2.check(d)

    def omega(self, d: int) -> float:
        return (1 + self.c1.omega(d)) * (1 + self.c2.omega(d)) - 1

    def kept(self, d: int) -> int:
        return min(self.c1.kept(d), self.c2.kept(d))

    def index_bits(self, d: int) -> int:
        return max(self.c1.index_bits(d), self.c2.index_bits(d))

    def value_bits(self, float_bits: int = 32) -> int:
        return min(self.c1.value_bits(float_bits), self.c2.value_bits(float_bits))

    def compress(self, V: torch.Tensor, generator: Generators
                 ) -> tuple[torch.Tensor | None, torch.Tensor]:
        if self.sparse:
            rk, other = (self.c1, self.c2) if self.c1.sparse else (self.c2, self.c1)
            idx, val = rk.compress(V, generator)
            return idx, other.values(val, generator)
        inner = densify(*self.c2.compress(V, generator), V.shape[1])
        return self.c1.compress(inner, generator)

    def __repr__(self) -> str:
        return f"ComposedCompressor({self.c1!r}, {self.c2!r})"


_PART = re.compile(r"^(none|natural|rand-(\d+))$")


def auto_compressor(d: int) -> str:
    """What ``"auto"`` (the estimator's and the CLI's default) stands for on R^d: rand-k with
    k = ⌈d/10⌉, a tenth of the features (ω = d/k − 1 ≈ 9).

    Sized to d because LoCoDL's rounds grow with ω: on 1,000 sparse features rand-1
    (ω = 999) had not converged after 100,000 iterations where rand-100 took about 1,000
    rounds; each round then sends a tenth of the coordinates.
    """
    return f"rand-{-(-check_int(d, 'd', 1) // 10)}"


@checked
def make_compressor(spec: str | Compressor) -> Compressor:
    """A compressor from its name: ``"none"``, ``"natural"``, ``"rand-k"``, ``"a+b"``
    (composition, e.g. ``"rand-3+natural"``); a Compressor is returned as is.

    Raises:
        ValueError: an unknown name, or k < 1.
        TypeError: neither a string nor a Compressor.
    """
    if isinstance(spec, Compressor):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"compressor must be a string or a Compressor, got "
                        f"{type(spec).__name__}")
    parts = []
    for p in spec.strip().lower().split("+"):
        m = _PART.match(p.strip())
        if m is None:
            raise ValueError(f"compressor must be 'none', 'natural', 'rand-<k>' or a '+' "
                             f"composition of them; got {spec!r}")
        if m.group(2) is not None:
            k = int(m.group(2))
            if k < 1:
                raise ValueError(f"compressor {spec!r}: k must be >= 1")
            parts.append(RandK(k))
        else:
            parts.append(Natural() if p.strip() == "natural" else Identity())
    out = parts[0]
    for p in parts[1:]:
        out = ComposedCompressor(out, p)
    return out
