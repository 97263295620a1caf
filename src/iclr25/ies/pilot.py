"""The pilot that chose IES's learning rate (issue 72): it trains ONLY plain training and the
control's random-removal arms, on held-apart seeds, over a declared grid, and applies a rule
written down before it ran. No IES arm and no delta search run here.

    python -m iclr25.ies.pilot      # one thread, about 1 minute of CPU

Rule (fixed before the pilot, also in the Setting's deviations): the control certifies the
cost of random removal over the grid of saved fractions :data:`~iclr25.ies.claim.CONTROL_SAVED`
(the paper's 10-50%): a lr passes when on every pilot seed plain training gains >=
``LEARNED_MIN`` points over its untrained self and the smallest cost over the grid is >=
``RANDOM_COST_MIN`` points. The largest passing lr is chosen (the least step-limited, nearest
the paper's 0.1); with none passing, the lr with the largest smallest cost.
"""

from __future__ import annotations

import numpy as np

from iclr25.claims import torch_threads
from iclr25.datasets import digits
from iclr25.ies.claim import (
    CONTROL_SAVED,
    LEARNED_MIN,
    RANDOM_COST_MIN,
    _MatchedRemoval,
    saved_schedule,
)
from iclr25.ies.testbed import train

SEEDS = (50_000, 50_001, 50_002)  # no claim seed: claims use seed + 400_000 x draw (+ 0..2)
LRS = (0.003, 0.002, 0.0015, 0.001)
EPOCHS = 30


def run(lrs=LRS, seeds=SEEDS, epochs: int = EPOCHS, saved=CONTROL_SAVED) -> list[dict]:
    """The pilot's table: one row per (lr, seed), with plain's gain and each grid cost."""
    from iclr25._train import accuracy, seeded_mlp

    rows = []
    with torch_threads(1):
        for lr in lrs:
            for s in seeds:
                split = digits(seed=s)
                n = len(split.X_train)
                net = seeded_mlp((split.X_train.shape[1], 256, 256, 10), seed=s)
                init = 100 * accuracy(net, split.X_test, split.y_test)
                plain = 100 * train(*split, epochs=epochs, lr=lr, seed=s).final_acc
                cost = []
                for i, f in enumerate(saved):
                    stop = _MatchedRemoval(n, saved_schedule(n, epochs, f), "random",
                                           40_000 + 1_000 * i + s)
                    acc = 100 * train(*split, stopper=stop, epochs=epochs, lr=lr,
                                      seed=s).final_acc
                    cost.append(plain - acc)
                rows.append(dict(lr=lr, seed=s, plain=plain, gain=plain - init, cost=cost))
    return rows


def choose(rows: list[dict]) -> tuple[float, bool]:
    """(the chosen lr, whether it passes the rule) from :func:`run`'s rows."""
    lrs = sorted({r["lr"] for r in rows}, reverse=True)
    worst = {lr: min(min(r["cost"]) for r in rows if r["lr"] == lr) for lr in lrs}
    ok = {lr: all(r["gain"] >= LEARNED_MIN and min(r["cost"]) >= RANDOM_COST_MIN
                  for r in rows if r["lr"] == lr) for lr in lrs}
    passing = [lr for lr in lrs if ok[lr]]
    if passing:
        return passing[0], True
    return max(lrs, key=lambda lr: worst[lr]), False


def main() -> None:
    rows = run()
    head = " ".join(f"{f:>5.0%}" for f in CONTROL_SAVED)
    print(f"{'lr':>7} {'seed':>6} {'plain':>6} {'gain':>5} | cost at saved {head} | min")
    for r in rows:
        cost = " ".join(f"{c:5.2f}" for c in r["cost"])
        print(f"{r['lr']:7g} {r['seed']:6d} {r['plain']:6.2f} {r['gain']:5.1f} | "
              f"{'':13} {cost} | {min(r['cost']):5.2f}")
    for lr in sorted({r["lr"] for r in rows}, reverse=True):
        sub = [r for r in rows if r["lr"] == lr]
        print(f"lr {lr:g}: mean cost per rate "
              f"{np.round(np.mean([r['cost'] for r in sub], axis=0), 2).tolist()}, "
              f"smallest per seed {[round(min(r['cost']), 2) for r in sub]}")
    lr, ok = choose(rows)
    print(f"chosen lr {lr:g} ({'passes' if ok else 'none passes: the largest smallest cost'})")


if __name__ == "__main__":
    main()
