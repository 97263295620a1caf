"""The pilot that chose the multivariate testbed's ``het_scale`` (issue 72, item 5): it reads
ONLY the testbed, the pseudo-labels built from the data, and the baselines NLL and TIC,
on held-apart seeds, over a declared grid, and applies a rule written down before it ran.
No W2-bound arm (ToSS or the bound with true Σ) is trained here.

    python -m iclr25.toss.pilot      # one thread, a few minutes of CPU

Why: on TIC-TAC's sampler at dim 8 the x-dependent term diag(√|x − μ_x|) is about a tenth of
Σ(x)'s norm, so the best x-blind covariance (the mean true Σ) is within ~0.10 of every Σ(x)
while the default pseudo-labels are 0.67 off: no neighbourhood label can inform a fit there.

Rule (fixed before the pilot, also in the Setting's deviations): over ``HET_SCALES`` (1 is
TIC-TAC's sampler) at the full Setting's dim, n and epochs, a scale passes when on every pilot
seed (a) Σ(x) depends on x: the mean true Σ of the training points, used as a prediction, has
test cov_error >= :data:`X_DEPENDENCE_MIN`, to be the claims' testbed control;
(b) the pseudo-labels (default ``pseudo_covariance``) are informative: their cov_error on the
training points is below that x-blind prediction's; (c) NLL and TIC learned: each one's test
cov_error is <= 0.9x that of Cov(Y_train) (the claims' existing baseline controls). The
smallest passing scale is chosen (the nearest TIC-TAC's); with none passing, scale 1, and the
claims read what the testbed control makes of it. Scales are tried in increasing order and TIC
(the costly arm) only where (a), (b) and NLL pass, so the table stops at the choice.

Outcome (the table is in the Setting's deviations and the issue-72 note): no scale passes. The
pseudo-labels are 0.59-0.73 off Σ(x) at every scale, while the x-blind mean true Σ is
0.08-0.31 off and NLL 0.18-0.28: (b) fails everywhere, and (a) passes from scale 8 on. So the
testbed is kept (scale 1), and the control (a) was NOT added to the claims: where it fails
(scale 1, 0.08-0.11) the run still separates ToSS from NLL by 2.6-3.4x, and "inconclusive"
is for runs that cannot separate them. What limits ToSS here is its pseudo-labels, at any
heteroscedasticity, so its two claims stay failing with the pilot as their why.
"""

from __future__ import annotations

import torch

from iclr25.claims import torch_threads
from iclr25.toss.claim import Multivariate, _beats, _run, multivariate
from iclr25.toss.metrics import cov_error
from iclr25.toss.pseudo import pseudo_covariance
from iclr25.toss.testbed import make_heteroscedastic

X_DEPENDENCE_MIN = 0.25  # (a): a quarter of Σ(x)'s norm depends on x, fixed before the pilot
SEEDS = (60_000, 60_001, 60_002)  # no claim seed: claims use seed + 400_000 x draw
HET_SCALES = (1.0, 2.0, 4.0, 8.0, 16.0)


def _row(setting: Multivariate, scale: float, seed: int) -> dict:
    """Testbed and pseudo-label readings, and NLL's (TIC's later) learning, at one seed."""
    n, dev = setting.n, torch.device("cpu")
    data = make_heteroscedastic(n + setting.n_test, setting.dim, het_scale=scale, seed=seed)
    blind = data.cov[:n].mean(0)
    row = dict(het_scale=scale, seed=seed,
               blind_test=cov_error(blind.expand(setting.n_test, -1, -1), data.cov[n:]),
               blind_train=cov_error(blind.expand(n, -1, -1), data.cov[:n]),
               labels=cov_error(pseudo_covariance(data.X[:n], data.Y[:n]), data.cov[:n]),
               cov_y=cov_error(torch.cov(data.Y[:n].T).expand(setting.n_test, -1, -1),
                               data.cov[n:]))
    row["nll"] = _run(data, n, ("nll", "mean"), setting, seed, dev)["cov_error"]
    row["data"] = data
    return row


def _passes_before_tic(r: dict) -> bool:
    return (r["blind_test"] >= X_DEPENDENCE_MIN and r["labels"] < r["blind_train"]
            and _beats(r["nll"], r["cov_y"]))


def run(setting: Multivariate | None = None, scales=HET_SCALES, seeds=SEEDS) -> list[dict]:
    """The pilot's table, one row per (scale, seed), in the order the rule reads it."""
    setting = setting or multivariate.full
    rows: list[dict] = []
    with torch_threads(1):
        for scale in scales:
            batch = [_row(setting, scale, s) for s in seeds]
            if all(_passes_before_tic(r) for r in batch):
                for r in batch:
                    r["tic"] = _run(r["data"], setting.n, ("tic", "mean"), setting, r["seed"],
                                    torch.device("cpu"))["cov_error"]
            for r in batch:
                r.pop("data")
                r["passes"] = _passes_before_tic(r) and _beats(r.get("tic", float("inf")),
                                                               r["cov_y"])
            rows += batch
            if all(r["passes"] for r in batch):
                break
    return rows


def choose(rows: list[dict]) -> tuple[float, bool]:
    """(the chosen het_scale, whether it passes the rule) from :func:`run`'s rows."""
    for scale in dict.fromkeys(r["het_scale"] for r in rows):
        if all(r["passes"] for r in rows if r["het_scale"] == scale):
            return scale, True
    return 1.0, False


def main() -> None:
    rows = run()
    print("| het_scale | seed | blind test | blind train | labels | Cov(Y) | NLL | TIC | passes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        tic = f"{r['tic']:.3f}" if "tic" in r else "-"
        print(f"| {r['het_scale']:g} | {r['seed']} | {r['blind_test']:.3f} | "
              f"{r['blind_train']:.3f} | {r['labels']:.3f} | {r['cov_y']:.3f} | "
              f"{r['nll']:.3f} | {tic} | {'yes' if r['passes'] else 'no'} |")
    scale, ok = choose(rows)
    print(f"choice: het_scale {scale:g} (passes: {ok})")


if __name__ == "__main__":
    main()
