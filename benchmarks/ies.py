"""Benchmark IES against plain training and small-loss removal on digits, same epochs.

Prints, per method: wall time of the training loop, backpropagated and forwarded instances,
final/best test accuracy, and ratios to plain training. A second table times the per-epoch
IES bookkeeping (record one loss per sample, recompute the mastered set) of the vectorised
tensor state against a per-sample Python loop over dicts (the released code's structure).

    python benchmarks/ies.py --quick     # seconds
    python benchmarks/ies.py             # ~ a few minutes
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from _timing import compare, row, timed_row

from iclr25.datasets import digits
from iclr25.ies import InstanceEarlyStopping, LossThresholdStopping
from iclr25.ies.testbed import train

M = "ies"


def training_table(epochs: int, seeds: list[int]) -> None:
    configs = [
        ("plain", lambda n: None),
        ("IES shipped d=1e-3", lambda n: InstanceEarlyStopping(n, 1e-3)),
        ("IES algorithm1 d=1e-3", lambda n: InstanceEarlyStopping(n, 1e-3, mode="algorithm1")),
        ("loss<1e-2", lambda n: LossThresholdStopping(n, 1e-2)),
        ("loss<1e-3", lambda n: LossThresholdStopping(n, 1e-3)),
    ]
    rows = {name: [] for name, _ in configs}
    for s in seeds:
        split = digits(seed=s)
        for name, make in configs:
            rows[name].append(train(*split, stopper=make(len(split.X_train)), epochs=epochs,
                                    seed=s))
    base_t = np.mean([g.seconds for g in rows["plain"]])
    base_bp = np.mean([g.n_backprop for g in rows["plain"]])
    base_acc = 100 * np.mean([g.final_acc for g in rows["plain"]])
    print(f"\ndigits, MLP 64-256-256-10, {epochs} epochs, seeds {seeds} (means)")
    head = (f"{'method':<24}{'wall s':>8}{'x plain':>8}{'backprops':>11}{'x plain':>8}"
            f"{'forwards':>10}{'saved %':>9}{'final acc':>10}{'d acc':>7}{'best acc':>9}")
    print(head)
    print("-" * len(head))
    mean = {}
    for name, logs in rows.items():
        t = np.mean([g.seconds for g in logs])
        bp = np.mean([g.n_backprop for g in logs])
        fw = np.mean([g.n_forward for g in logs])
        acc = 100 * np.mean([g.final_acc for g in logs])
        best = 100 * np.mean([g.best_acc for g in logs])
        saved = 100 * np.mean([g.saved_fraction for g in logs])
        mean[name] = (bp, acc, t)
        print(f"{name:<24}{t:>8.2f}{t / base_t:>8.2f}{bp:>11.0f}{bp / base_bp:>8.3f}"
              f"{fw:>10.0f}{saved:>9.1f}{acc:>10.2f}{acc - base_acc:>+7.2f}{best:>9.2f}")
    ies = mean["IES shipped d=1e-3"]
    for peer in ("plain", "loss<1e-3"):
        p = mean[peer]
        row(M, f"digits MLP, {epochs} epochs: backpropagated instances", ies[0], p[0],
            peer_name=f"{peer} training" if peer == "plain" else f"small-loss removal ({peer})",
            unit="backprops", agreement=f"final accuracy {ies[1]:.2f}% vs {p[1]:.2f}%",
            note=f"wall s {ies[2]:.2f} vs {p[2]:.2f}; seeds {seeds}")


class _LoopState:
    """The same shipped rule, kept as Python lists per sample (released-code structure)."""

    def __init__(self, n: int, delta: float, window: int = 3, k: int = 1) -> None:
        self.loss = {i: [] for i in range(n)}
        self.d2 = {i: [] for i in range(n)}
        self.delta, self.window, self.k = delta, window, k

    def update(self, idx: list[int], losses: list[float]) -> None:
        for i, v in zip(idx, losses, strict=True):
            self.loss[i].append(v)

    def step(self) -> list[int]:
        for i, h in self.loss.items():
            if len(h) >= 3:
                self.d2[i].append(h[-1] - 2 * h[-2] + h[-3])
                self.d2[i] = self.d2[i][-(self.window + self.k):]
        out = []
        for i, d in self.d2.items():
            if len(d) >= self.window + self.k:
                a = np.abs(d)
                ma = [a[j - self.window:j].mean() for j in range(self.window, len(a) + 1)]
                if sum(ma[-self.k:]) < self.delta:
                    out.append(i)
        return out


def bookkeeping_table(sizes: list[int], epochs: int) -> None:
    print(f"\nbookkeeping (update all + step) over {epochs} epochs")
    for n in sizes:
        g = torch.Generator().manual_seed(0)
        rate = torch.rand(n, 1, generator=g, dtype=torch.float64)
        t = torch.arange(epochs, dtype=torch.float64)[None, :]
        traj = torch.exp(-rate * t) + 1e-4 * torch.randn(n, epochs, generator=g,
                                                         dtype=torch.float64)
        idx = torch.arange(n)
        idx_l, traj_l = idx.tolist(), traj.T.tolist()

        def tensor(idx=idx, traj=traj, n=n):
            ies = InstanceEarlyStopping(n, delta=1e-3)
            for e in range(epochs):
                ies.update(idx, traj[:, e])
                ies.step()
            return ies.excluded_indices.tolist()

        def loop(idx_l=idx_l, traj_l=traj_l, n=n):
            state = _LoopState(n, 1e-3)
            for e in range(epochs):
                state.update(idx_l, traj_l[e])
                excluded = state.step()
            return sorted(excluded)

        ours, peer = tensor(), loop()
        assert ours == peer, "the two bookkeepers exclude different samples"
        t_o, t_p = compare(tensor, loop, 3)
        timed_row(M, f"bookkeeping, {epochs} epochs of n={n}", t_o, t_p,
                  peer_name="per-sample Python loop (released code's structure)",
                  agreement=f"same mastered set ({len(ours)} samples)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one seed, 30 epochs, small sizes")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.quick:
        training_table(epochs=30, seeds=[0])
        bookkeeping_table([1_000, 10_000], epochs=10)
    else:
        training_table(epochs=100, seeds=[0, 1, 2])
        bookkeeping_table([1_000, 10_000, 50_000], epochs=12)


if __name__ == "__main__":
    main()
