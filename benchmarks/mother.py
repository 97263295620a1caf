"""Benchmark: streaming MoTHer distances vs a vectorised load-everything implementation.

Both compute the same thing (the ICLR ``l_FT`` distance matrix and the kurtosis scores of
N models saved as safetensors), checked equal before the times are read. The peer loads every
model into memory, stacks each layer across models and takes one ``torch.cdist`` and one
``scipy.stats.kurtosis`` per layer (a loop over model pairs, the official code's structure, is
slower still). Each run happens in a fresh subprocess so its peak resident memory is its own.

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

M = "mother"


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


def _vectorised(directory: Path) -> tuple[list[list[float]], list[float]]:
    """The peer a user writes with torch: load every model, stack each square layer across
    models, one ``torch.cdist`` per layer (direct differences, no Gram cancellation) and
    ``scipy.stats.kurtosis`` along the stacked rows."""
    import scipy.stats
    import torch
    from safetensors.torch import load_file

    files = sorted(directory.glob("*.safetensors"))
    models = [load_file(str(f)) for f in files]  # everything in memory at once
    keys = [k for k, v in models[0].items() if v.ndim == 2 and v.shape[0] == v.shape[1]]
    D = torch.zeros(len(models), len(models), dtype=torch.float64)
    ku = torch.zeros(len(models), dtype=torch.float64)
    for k in keys:
        S = torch.stack([m[k].reshape(-1) for m in models])
        D += torch.cdist(S, S, compute_mode="donot_use_mm_for_euclid_dist").double() \
            / S.shape[1] ** 0.5
        ku += torch.from_numpy(scipy.stats.kurtosis(S.numpy(), axis=1)).double()
    return (D / len(keys)).tolist(), ku.tolist()


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
    t0, c0 = time.perf_counter(), time.process_time()
    D, ku = (_vectorised if impl == "vectorised" else _stream)(Path(directory))
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    sampler.done.set()
    sampler.join()
    peak = max(sampler.peak, _rss_mb())
    print(json.dumps({"seconds": secs, "cpu": cpu, "peak_mb": peak, "base_mb": base, "D": D,
                      "ku": ku}))


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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side (median)")
    ap.add_argument("--worker", nargs=2, metavar=("IMPL", "DIR"))
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args.worker[0], args.worker[1], args.threads)
        return
    import statistics

    from _timing import agree, row

    sizes = (10, 20) if args.quick else (50, 100, 200)
    width, n_layers = (128, 4) if args.quick else (512, 4)
    print(f"models of {n_layers} x {width}x{width} = {n_layers * width * width:,} parameters "
          f"(+ biases), float32 safetensors; {args.threads} thread(s); each side run "
          f"{args.repeat} times in fresh processes, alternating; medians")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            _make(Path(tmp), n, width, n_layers, seed=0)
            res: dict[str, list[dict]] = {"vectorised": [], "stream": []}
            for _ in range(args.repeat):
                for impl in res:
                    out = subprocess.run([sys.executable, __file__, "--threads",
                                          str(args.threads), "--worker", impl, tmp],
                                         capture_output=True, text=True, check=True)
                    res[impl].append(json.loads(out.stdout.strip().splitlines()[-1]))
        a, b = res["vectorised"][0], res["stream"][0]
        err = agree(b["D"], a["D"], rtol=1e-5, what="distance matrix")
        err_ku = agree(b["ku"], a["ku"], atol=1e-5, what="kurtosis (float32 weights)")

        def med(impl: str, key: str, res: dict = res) -> float:
            return statistics.median(r[key] for r in res[impl])

        def mem(impl: str, res: dict = res) -> float:  # above each process's post-import memory
            return statistics.median(r["peak_mb"] - r["base_mb"] for r in res[impl])

        check = f"max |ΔD| {err:.0e}, |Δku| {err_ku:.0e}"
        peer = "load all + torch.cdist per layer"
        row(M, f"N={n} models: distances + kurtosis", med("stream", "cpu"),
            med("vectorised", "cpu"), peer_name=peer, unit="s CPU", agreement=check,
            wall=(med("stream", "seconds"), med("vectorised", "seconds")),
            note=f"median of {args.repeat} processes each")
        row(M, f"N={n} models: peak RSS", mem("stream"), mem("vectorised"), peer_name=peer,
            unit="MB", agreement=check, note="sampled every 5 ms, above post-import memory")


if __name__ == "__main__":
    main()
