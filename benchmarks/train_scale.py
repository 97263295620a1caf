"""Training throughput of the engine (iclr25._engine, Lightning Fabric): samples per second for
1 and 2 CPU processes (DDP over gloo) and for float32 against bf16-mixed autocast.

    python benchmarks/train_scale.py             # 3 epochs of 16384 rows per setting
    python benchmarks/train_scale.py --quick     # 1 epoch of 8192 rows
    python benchmarks/train_scale.py --device cuda   # the same on a GPU (1 and 2 GPUs if any)

One model and one data set for every setting: an MLP (64 -> 512 -> 512 -> 10, ReLU) trained
by :func:`iclr25._train.fit_minibatch` with Adam on seeded Gaussian rows, global batch 256.
Each process runs on one thread (``torch.set_num_threads(1)``), so 2 processes use 2 cores
against 1. The figure is wall-clock samples per second (rows x epochs / seconds, the best of
``--repeat`` runs, after a warm-up run), each row with the load average when it was measured:
on a shared machine the 2-process figure is bounded by the cores the others leave free.
"""

from __future__ import annotations

import argparse
import sys
import time

from _timing import row

M = "train_scale"


def _run(device: str, devices: int, precision: str, n: int, epochs: int) -> float:
    """Seconds of one training (the same seed, data and model each time)."""
    import torch

    from iclr25._train import fit_minibatch

    gen = torch.Generator().manual_seed(0)
    X = torch.randn(n, 64, generator=gen)
    y = (X[:, :10] + 0.5 * torch.randn(n, 10, generator=gen)).argmax(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).to(device)
    X, y = X.to(device), y.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    t0 = time.perf_counter()
    hist = fit_minibatch(model, torch.nn.functional.cross_entropy, X, y, epochs=epochs,
                         batch_size=256, optimizer=opt, seed=0, devices=devices,
                         precision=precision)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    assert hist[-1] < hist[0] or epochs == 1, f"{precision} x {devices}: the loss did not fall"
    return seconds


def rate(device: str, devices: int, precision: str, n: int, epochs: int,
         repeat: int) -> float:
    """Best samples per second over ``repeat`` runs, after one warm-up run."""
    _run(device, devices, precision, n, 1)
    return max(n * epochs / _run(device, devices, precision, n, epochs) for _ in range(repeat))


def main(argv: list[str] | None = None) -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 epoch of 8192 rows, 1 repeat")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--repeat", type=int, default=None, help="runs per setting (best kept)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    n, epochs = (8192, 1) if args.quick else (16384, 3)
    repeat = args.repeat or (1 if args.quick else 2)
    have = torch.cuda.device_count() if args.device == "cuda" else 2
    unit = f"samples/s ({args.device})"
    one = rate(args.device, 1, "32", n, epochs, repeat)
    row(M, f"float32, 1 process ({args.device})", one, None, peer_name="-", unit=unit,
        better="higher")
    if have >= 2:
        two = rate(args.device, 2, "32", n, epochs, repeat)
        row(M, f"float32, 2 processes (DDP, {'nccl' if args.device == 'cuda' else 'gloo'}) "
               f"vs 1", two, one, peer_name="1 process", unit=unit, better="higher",
            note="global batch 256 split over the processes")
    bf16 = rate(args.device, 1, "bf16-mixed", n, epochs, repeat)
    row(M, f"bf16-mixed vs float32, 1 process ({args.device})", bf16, one,
        peer_name="float32", unit=unit, better="higher")
    if args.device == "cuda":
        half = rate(args.device, 1, "16-mixed", n, epochs, repeat)
        row(M, "16-mixed vs float32, 1 GPU", half, one, peer_name="float32", unit=unit,
            better="higher")
    return 0


if __name__ == "__main__":
    sys.exit(main())
