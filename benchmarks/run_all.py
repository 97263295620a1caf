"""Run every benchmark (each in its own process) and write the table of their rows.

    pip install -e ".[all,test,bench]"        # every peer, once
    python benchmarks/run_all.py --quick      # writes benchmarks/RESULTS.md and results.json

Each ``benchmarks/<method>.py`` records its rows through ``_timing.row`` (ours, the peer and its
name, the unit, the ratio (> 1: ours is better), the target, the load average and the date).
``--only`` re-runs some methods and keeps the other methods' rows from the last run; ``--gate``
prefixes each command (e.g. ``--gate "/work/heavy nice -n 10"`` on a shared machine).

The run's command, its seconds and the load average before and after it head RESULTS.md; then
the figure marks of README.md and the user guides are re-rendered from the rows
(``_quote.py``), so they quote this run and no other (only when ``--out`` is this folder).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _quote

HERE = Path(__file__).resolve().parent
#: benchmarks/<name>.py that are not method benchmarks
NOT_METHODS = {"run_all", "reproduce"}
#: benchmarks of the training engine every method trains with (iclr25._engine), run too
ENGINE = {"train_scale", "train_memory"}
BENCHMARKS = sorted(p.stem for p in HERE.glob("*.py")
                    if not p.stem.startswith("_") and p.stem not in NOT_METHODS)
#: numpy's and torch's BLAS on one thread: a slot of the shared machine is one core, and both
#: sides of a comparison get the same
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
KEYS = ("method", "case", "ours", "peer", "peer_name", "unit", "ratio", "target", "load", "date")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="each benchmark's --quick sizes")
    ap.add_argument("--only", nargs="+", default=None, metavar="METHOD",
                    help=f"run these only (of {', '.join(BENCHMARKS)})")
    ap.add_argument("--gate", default="", help="command prefix, e.g. '/work/heavy nice -n 10'")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per benchmark")
    ap.add_argument("--out", type=Path, default=HERE, help="folder of RESULTS.md, results.json")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.only or ()) - set(BENCHMARKS))
    if unknown:
        ap.error(f"--only: unknown benchmark(s) {', '.join(unknown)}")
    return args


def run_one(name: str, args: argparse.Namespace, logs: Path) -> tuple[dict, list[dict]]:
    """Run ``benchmarks/<name>.py``; its status and the rows it recorded."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as rows:
        env = os.environ | {"ICLR25_BENCH_ROWS": rows.name} | ONE_THREAD
        cmd = [*shlex.split(args.gate), sys.executable, str(HERE / f"{name}.py")]
        cmd += ["--quick"] if args.quick else []
        t0 = time.perf_counter()
        with open(logs / f"{name}.log", "w") as log:
            try:
                rc = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    timeout=args.timeout, cwd=HERE.parent).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        out = [json.loads(line) for line in Path(rows.name).read_text().splitlines() if line]
    status = {"status": "ok" if rc == 0 else f"failed ({rc})", "rows": len(out),
              "seconds": round(time.perf_counter() - t0, 1),
              "date": _now(),
              "command": shlex.join(cmd[len(shlex.split(args.gate)):])}
    return status, out


def _cell(x: object) -> str:
    return "-" if x is None or x == "" else f"{x:g}" if isinstance(x, float) else str(x)


def write_markdown(path: Path, runs: dict, rows: list[dict], run: dict | None = None) -> None:
    """RESULTS.md: the rows of ``results.json`` and the status of each benchmark's run."""
    lines = ["# Benchmark results", "",
             "Written by `python benchmarks/run_all.py --quick` (after "
             '`pip install -e ".[all,test,bench]"`); do not edit by hand.', ""]
    if run:
        lines += [f"Run: `{run['command']}`, {run['started']} to {run['finished']}, "
                  f"{run['seconds']:g} s wall; load average {run['load_before']:g} before, "
                  f"{run['load_after']:g} after, {run['cpus']} CPUs."
                  + (" It re-ran some benchmarks only (`--only`): the others' rows are from "
                     "earlier runs (their dates)." if "--only" in run["command"] else ""), ""]
    lines += ["*ours* and *peer* are medians of the same number of alternating calls in one "
              "process (CPU time unless the unit says otherwise; wall time in results.json); "
              "*ratio* is how many times better ours is (peer / ours for times and memory, "
              "ours / peer for rates and scores); *target* bounds the ratio (or the figure "
              "itself); *load* is the 1-minute load average of the 2-core machine when the row "
              "was measured. Each timed pair was checked to give the same output first "
              "(*agreement*). A missed target's reason (its profile) is in the notes below.", "",
              "| method | case | ours | peer | ratio | target | load | date | agreement |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        met = {True: " (met)", False: " (missed)"}.get(r.get("met"), "")
        peer = "-" if r["peer"] is None else f"{_cell(r['peer'])} {r['unit']} ({r['peer_name']})"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:g}×"
        lines.append(f"| {r['method']} | {r['case']} | {_cell(r['ours'])} {r['unit']} | {peer} "
                     f"| {ratio} | {_cell(r['target'])}{met} | {r['load']:g} | {r['date']} "
                     f"| {r.get('agreement') or '-'} |")
    notes = [r for r in rows if r.get("note") and not re.fullmatch(r"median of \d+", r["note"])]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- **{r['method']} | {r['case']}**: {r['note']}" for r in notes]
    lines += ["", "## Runs", "", "| benchmark | status | rows | seconds | finished (UTC) |",
              "|---|---|---|---|---|"]
    lines += [f"| {m} | {s['status']} | {s['rows']} | {s['seconds']} | {s['date']} |"
              for m, s in sorted(runs.items())]
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    logs = args.out / "logs"
    logs.mkdir(exist_ok=True)
    store = args.out / "results.json"
    old = json.loads(store.read_text()) if store.exists() and args.only else {}
    names = args.only or BENCHMARKS
    runs = {m: s for m, s in old.get("runs", {}).items() if m not in names}
    rows = [r for r in old.get("rows", []) if r["method"] not in names]
    run = {"command": shlex.join(["python", "benchmarks/run_all.py", *(argv or sys.argv[1:])]),
           "started": _now(), "load_before": round(os.getloadavg()[0], 2),
           "cpus": os.cpu_count()}
    t0 = time.perf_counter()
    for name in names:
        print(f"{name} ...", end=" ", flush=True)
        status, out = run_one(name, args, logs)
        runs[name] = status
        rows += out
        print(f"{status['status']}, {status['rows']} rows, {status['seconds']} s", flush=True)
        rows.sort(key=lambda r: BENCHMARKS.index(r["method"]) if r["method"] in BENCHMARKS
                  else len(BENCHMARKS))
        run |= {"finished": _now(), "seconds": round(time.perf_counter() - t0, 1),
                "load_after": round(os.getloadavg()[0], 2)}
        store.write_text(json.dumps({"run": run, "runs": runs, "rows": rows}, indent=1,
                                    ensure_ascii=False) + "\n")
        write_markdown(args.out / "RESULTS.md", runs, rows, run)
    print(f"{run['seconds']} s, load {run['load_before']} before, {run['load_after']} after")
    if args.out.resolve() == HERE:
        for doc in _quote.documents(HERE.parent):
            try:
                doc.write_text(_quote.fill(doc.read_text(), rows))
            except LookupError as exc:  # a mark names a row this run did not write
                print(f"{doc.name} not updated: {exc}", file=sys.stderr)
                return 1
    return 0 if all(s["status"] == "ok" for s in runs.values()) else 1


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes")


if __name__ == "__main__":
    sys.exit(main())
