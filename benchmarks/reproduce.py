"""How long the reproduction takes, experiment by experiment, and how well --jobs can pack it.

Runs each experiment of the selected claims one by one in this process on one torch thread
and times it: CPU time of the process and of its children (gsd and lsdt run process pools),
and wall time. Prints each beside its share of the total, then the wall-time bound of a
perfect packing on 2 and 4 jobs (max(total / jobs, the longest)) and what the runner's
longest-first order achieves (the greedy LPT schedule). With ``--from results.json`` it reads
the times of an earlier run instead of running anything (their seconds are wall times of each
experiment on its own thread budget).

    python benchmarks/reproduce.py --scale quick            # a couple of minutes
    python benchmarks/reproduce.py --scale full             # the full suite, ~1 hour
    python benchmarks/reproduce.py --from reproduction/results.json
"""

from __future__ import annotations

import argparse
import heapq
import os
import resource
import tempfile
import time
from pathlib import Path

from iclr25 import claims, runner
from iclr25.report import read_results


def _cpu() -> float:
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                 resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def time_experiments(names: list[str], scale: str, seed: int) -> list[tuple[str, float, float]]:
    """``(experiment id, CPU seconds, wall seconds)`` of each selected experiment, one thread."""
    selected = claims.select(names, claims.discover())
    experiments = list({c.experiment.id: c.experiment for c in selected}.values())
    rows = []
    with tempfile.TemporaryDirectory() as figs, claims.torch_threads(1):
        for exp in experiments:
            c0, w0 = _cpu(), time.perf_counter()
            rec, _ = runner.run_experiment(exp, claims.Scale(scale), seed, "cpu", Path(figs))
            rows.append((exp.id, _cpu() - c0, time.perf_counter() - w0))
            if rec.error:
                print(f"  {exp.id} raised: {rec.error.strip().splitlines()[-1]}")
    return rows


def lpt_makespan(times: list[float], jobs: int) -> float:
    """Wall time of the longest-first greedy schedule on ``jobs`` workers."""
    loads = [0.0] * jobs
    for t in sorted(times, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def print_table(rows: list[tuple[str, float, float]], label: str) -> None:
    total = sum(r[1] for r in rows)
    print(f"{'experiment':32s} {label:>10s} {'wall s':>8s} {'share':>7s}")
    for eid, cpu, wall in sorted(rows, key=lambda r: -r[1]):
        print(f"{eid:32s} {cpu:10.1f} {wall:8.1f} {cpu / total:7.1%}")
    print(f"{'total':32s} {total:10.1f}")
    longest = max(r[1] for r in rows)
    for jobs in (2, 4):
        bound = max(total / jobs, longest)
        print(f"--jobs {jobs}: perfect packing {bound:.0f} s, longest first (LPT) "
              f"{lpt_makespan([r[1] for r in rows], jobs):.0f} s")
    print(f"load average (1 min) {os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="claim ids or methods (default: all)")
    ap.add_argument("--scale", choices=("quick", "full"), default="quick")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--from", dest="results", type=Path,
                    help="a results.json: print its experiments' times, run nothing")
    args = ap.parse_args()
    if args.results is not None:
        _, records, _, _ = read_results(args.results)
        print_table([(r.id, r.seconds, r.seconds) for r in records], "seconds")
        return
    print_table(time_experiments(args.names, args.scale, args.seed), "CPU s")


if __name__ == "__main__":
    main()
