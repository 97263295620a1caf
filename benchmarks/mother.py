"""Benchmark: streaming MoTHer distances vs a naive load-everything-and-loop implementation.

Both compute the same thing (the ICLR ``l_FT`` distance matrix and the kurtosis scores of
N models saved as safetensors). The naive version does what a direct port of the official
code does: load every model fully into memory, then loop over model pairs and layers.
Each run happens in a fresh subprocess so its peak resident memory is its own.

    python benchmarks/mother.py            # N = 50, 100, 200 models of ~1M parameters
    python benchmarks/mother.py --quick    # N = 10, 20 models of ~65k parameters (seconds)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _rss_mb() -> float:
    """Current resident memory (anonymous + file-backed pages, e.g. touched mmaps), in MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


class _PeakSampler(threading.Thread):
    """Samples the resident memory every few ms; ``peak`` is the largest value seen."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = _rss_mb()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.005):
            self.peak = max(self.peak, _rss_mb())


def _naive(directory: Path) -> tuple[list[list[float]], list[float]]:
    import numpy as np
    import scipy.stats
    from safetensors.torch import load_file

    files = sorted(directory.glob("*.safetensors"))
    models = [load_file(str(f)) for f in files]  # everything in memory at once
    keys = [k for k, v in models[0].items() if v.ndim == 2 and v.shape[0] == v.shape[1]]
    n = len(models)
    D = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            d = float(np.mean([float((models[i][k] - models[j][k]).pow(2).mean().sqrt())
                               for k in keys]))
            D[i][j] = D[j][i] = d
    ku = [float(sum(scipy.stats.kurtosis(m[k].numpy().ravel()) for k in keys)) for m in models]
    return D, ku


def _stream(directory: Path) -> tuple[list[list[float]], list[float]]:
    from iclr25.mother.distances import stream_statistics
    from iclr25.mother.sources import as_sources

    d, ku = stream_statistics(as_sources(directory), metrics=("rms",), kurtosis_layers=None)
    assert ku is not None
    return d["rms"].tolist(), ku.tolist()


def _worker(impl: str, directory: str, threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    # import everything either side needs before the clock and the memory baseline
    import gc

    import numpy  # noqa: F401
    import safetensors.torch  # noqa: F401
    import scipy.stats  # noqa: F401

    import iclr25.mother.distances  # noqa: F401

    gc.collect()
    base = _rss_mb()  # current, not high-water: import transients do not count
    sampler = _PeakSampler()
    sampler.start()
    t0 = time.perf_counter()
    D, ku = (_naive if impl == "naive" else _stream)(Path(directory))
    secs = time.perf_counter() - t0
    sampler.done.set()
    sampler.join()
    peak = max(sampler.peak, _rss_mb())
    print(json.dumps({"seconds": secs, "peak_mb": peak, "base_mb": base, "D": D, "ku": ku}))


def _make(directory: Path, n_models: int, width: int, n_layers: int, seed: int) -> None:
    import torch
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(seed)
    # a chain-of-fine-tunes-like population: each model = a random earlier model + noise
    base = [torch.randn(width, width, generator=g) / width**0.5 for _ in range(n_layers)]
    pool = [base]
    for i in range(n_models):
        parent = pool[int(torch.randint(0, len(pool), (1,), generator=g))]
        w = [p + 0.01 * torch.randn(width, width, generator=g) / width**0.5 for p in parent]
        pool.append(w)
        sd = {f"layer{li}.weight": t for li, t in enumerate(w)}
        sd.update({f"layer{li}.bias": torch.zeros(width) for li in range(n_layers)})
        save_file(sd, str(directory / f"model_{i:04d}.safetensors"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--worker", nargs=2, metavar=("IMPL", "DIR"))
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker[0], args.worker[1], args.threads)
        return
    import numpy as np

    sizes = (10, 20) if args.quick else (50, 100, 200)
    width, n_layers = (128, 4) if args.quick else (512, 4)
    print(f"models of {n_layers} x {width}x{width} = {n_layers * width * width:,} parameters "
          f"(+ biases), float32 safetensors; {args.threads} thread(s)")
    head = (f"{'N':>5} {'naive s':>9} {'stream s':>9} {'speed-up':>9} {'naive MB':>9} "
            f"{'stream MB':>10} {'mem ratio':>10} {'max |dD|':>9} {'max |dku|':>9}")
    print(head, flush=True)
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            _make(Path(tmp), n, width, n_layers, seed=0)
            res = {}
            for impl in ("naive", "stream"):
                out = subprocess.run([sys.executable, __file__, "--threads", str(args.threads),
                                      "--worker", impl, tmp], capture_output=True, text=True,
                                     check=True)
                res[impl] = json.loads(out.stdout.strip().splitlines()[-1])
        a, b = res["naive"], res["stream"]
        err = float(np.abs(np.array(a["D"]) - np.array(b["D"])).max())
        err_ku = float(np.abs(np.array(a["ku"]) - np.array(b["ku"])).max())
        # memory above the interpreter + torch import baseline, the part that scales with N
        ma, mb = a["peak_mb"] - a["base_mb"], b["peak_mb"] - b["base_mb"]
        print(f"{n:>5} {a['seconds']:>9.2f} {b['seconds']:>9.2f} "
                    f"{a['seconds'] / b['seconds']:>8.1f}x {ma:>9.0f} {mb:>10.0f} "
                    f"{ma / max(mb, 1.0):>9.1f}x {err:>9.1e} {err_ku:>9.1e}", flush=True)
    print("MB = peak resident memory (sampled every 5 ms, anonymous + touched file pages) "
          "above the post-import memory of each subprocess.")


if __name__ == "__main__":
    main()
