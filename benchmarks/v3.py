"""Benchmark V3's pieces against their peers on the same inputs, in one process.

1. ``mpd`` (Gram form, batched) against batched ``torch.cdist`` (what a torch user writes; a
   loop of ``scipy.spatial.distance.pdist`` per sample, the former peer, checks the value):
   equal to 1e-6, then both timed alike (median of 5, CPU and wall); the batched GEMM alone is
   timed too, as the ceiling of a Gram-form method.
2. ``EMAVectorQuantizer`` against ``vector_quantize_pytorch.VectorQuantize`` (same settings:
   EMA 0.98, commitment 0.1, k-means init, dead-code threshold 16) inside one V3 fit on digit
   sequences, one fit each, alternating: TARGET step time <= 1.0x and one-to-one accuracy
   within 0.05.
   Skipped with a note when ``vector-quantize-pytorch`` (test extra) is not installed.

Run: ``python benchmarks/v3.py [--quick]``.
"""

from __future__ import annotations

import argparse

import torch
from _timing import agree, compare, measure, row, timed_row
from scipy.spatial.distance import pdist

from iclr25.datasets.views import digit_sequences
from iclr25.v3 import V3, codebook_accuracy, mpd

M = "v3"


def peer_mpd(x: torch.Tensor) -> torch.Tensor:
    """Mean pairwise Euclidean distance per sample from batched ``torch.cdist``."""
    n = x.shape[-2]
    return torch.cdist(x, x).sum((-1, -2)) / (n * (n - 1))


def bench_mpd(sizes: list[tuple[int, int, int]], inner: int) -> None:
    print("mpd (Gram form + exact recompute of cancelling pairs) vs batched torch.cdist "
          "(float64, one thread)")
    for b, n, d in sizes:
        x = torch.randn(b, n, d, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        s = torch.zeros(b, n, n, dtype=x.dtype)
        diff = agree(mpd(x), peer_mpd(x), atol=1e-6, what="mpd")
        diff_pdist = agree(mpd(x), [pdist(xi).mean() for xi in x.numpy()], atol=1e-6,
                           what="mpd vs scipy pdist")
        t_o, t_p = compare(lambda x=x: mpd(x), lambda x=x: peer_mpd(x), 5, inner=inner)
        timed_row(M, f"mpd B={b} N={n} d={d}", t_o, t_p, peer_name="batched torch.cdist",
                  agreement=f"max |Δ| {diff:.0e} (vs scipy pdist {diff_pdist:.0e})")
        # The one GEMM any exact Gram-form method needs: the ceiling of such a method.
        gemm = measure(lambda x=x, s=s: torch.baddbmm(s, x, x.mT, alpha=-2), 5, inner=inner)
        print(f"  the batched GEMM alone: {1e3 * gemm.cpu:.3f} ms CPU "
              f"({gemm.cpu / t_o.cpu:.0%} of ours)")


class _PeerVQ(torch.nn.Module):
    """``vector_quantize_pytorch.VectorQuantize`` behind EMAVectorQuantizer's interface."""

    def __init__(self, k: int, dim: int, decay: float, commitment: float, dead: float) -> None:
        super().__init__()
        import inspect

        from vector_quantize_pytorch import VectorQuantize

        # V3's official code predates the rotation trick: plain straight-through, as ours.
        extra = ({"rotation_trick": False}
                 if "rotation_trick" in inspect.signature(VectorQuantize).parameters else {})
        self.vq = VectorQuantize(dim=dim, codebook_size=k, decay=decay,
                                 commitment_weight=commitment, kmeans_init=True,
                                 threshold_ema_dead_code=dead, **extra)

    @property
    def codebook(self) -> torch.Tensor:
        return self.vq.codebook

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        return torch.cdist(flat, self.codebook).argmin(1).reshape(x.shape[:-1])

    def forward(self, x):
        q, codes, loss = self.vq(x)
        return q, codes, loss.sum()


class _PeerV3(V3):
    def fit(self, X, y=None):
        # the peer's k-means init and dead-code resets draw from torch's global generator
        # (ours never does): seed it from the fit's seed, so the row repeats run to run
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            return super().fit(X, y)

    def _build(self, fragment_shape, seed=0):
        model = super()._build(fragment_shape, seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model.vq = _PeerVQ(self.n_codes, self.d_content, 0.98, 0.1, 16)
        return model


def bench_vq(n_train: int, epochs: int, seeds: tuple[int, ...]) -> None:
    try:
        import vector_quantize_pytorch  # noqa: F401
    except ImportError:
        print("EMAVectorQuantizer vs VectorQuantize: skipped (pip install "
              "vector-quantize-pytorch, in the test extra)")
        return
    for seed in seeds:
        X, _, _ = digit_sequences(n_train, seed=seed)
        Xt, ct, _ = digit_sequences(300, split="test", seed=seed + 1)
        steps = epochs * -(-n_train // 32)
        fitted = {}

        def fit(cls, fitted=fitted, X=X, seed=seed):
            fitted[cls] = cls(epochs=epochs, seed=seed).fit(X)

        t_o, t_p = compare(lambda: fit(V3), lambda: fit(_PeerV3), 1, warmup=0)
        ao, ap = (codebook_accuracy(fitted[c].predict(Xt), ct) for c in (V3, _PeerV3))
        case = f"V3 fit with EMA VQ, {n_train} sequences, {epochs} epochs, seed {seed}"
        timed_row(M, f"{case}: ms per step", t_o, t_p, scale=1e3 / steps,
                  peer_name="vector_quantize_pytorch.VectorQuantize", target=1.0,
                  agreement=f"one-to-one accuracy {ao:.3f} vs {ap:.3f}", note="one fit each")
        row(M, f"{case}: one-to-one accuracy", ao, ap, better="higher", unit="accuracy",
            peer_name="vector_quantize_pytorch.VectorQuantize", target="within 0.05",
            met=abs(ao - ap) <= 0.05)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes, one seed")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    torch.optim.AdamW  # noqa: B018  (pay torch's lazy optimiser import before timing)
    V3(epochs=1, seed=0).fit(digit_sequences(64, seed=0)[0])  # warm up
    if a.quick:
        bench_mpd([(256, 16, 64)], inner=20)
        bench_vq(300, 3, (0,))
    else:
        bench_mpd([(64, 16, 64), (256, 16, 64), (1024, 16, 64), (256, 64, 64)], inner=20)
        bench_vq(1000, 10, (0, 1))


if __name__ == "__main__":
    main()
