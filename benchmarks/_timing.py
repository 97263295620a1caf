"""What the benchmark scripts share: one way to time ours against a peer, to check that both
give the same output before timing them, to measure memory, and to record a row of the table
that ``run_all.py`` writes.

Timing: both sides are called alternately (ours, peer, ours, peer, ...) after the same warm-up,
the same number of times, and each side's figure is the median of its calls, in CPU time
(``time.process_time``: what a loaded machine disturbs least) and in wall time. Rows carry the
1-minute load average at the time they were measured.
"""

from __future__ import annotations

import datetime
import gc
import json
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: where ``row`` appends its JSON lines (set by run_all.py); unset: rows are only printed
ROWS_ENV = "ICLR25_BENCH_ROWS"


def load() -> float:
    """The 1-minute load average (the machine is shared: every row states it)."""
    return os.getloadavg()[0]


@dataclass(frozen=True)
class Timing:
    """Median seconds per call over ``repeat`` calls, CPU and wall."""

    cpu: float
    wall: float
    repeat: int


def _calls(fn: Callable[[], object], inner: int) -> tuple[float, float]:
    c, w = time.process_time(), time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.process_time() - c) / inner, (time.perf_counter() - w) / inner


def measure(fn: Callable[[], object], repeat: int = 5, warmup: int = 1,
            inner: int = 1) -> Timing:
    """Median CPU and wall seconds per call of ``fn`` (``inner`` calls per timing)."""
    for _ in range(warmup):
        fn()
    ts = [_calls(fn, inner) for _ in range(repeat)]
    return Timing(statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts),
                  repeat)


def compare(ours: Callable[[], object], peer: Callable[[], object], repeat: int = 5,
            warmup: int = 1, inner: int = 1) -> tuple[Timing, Timing]:
    """Time ``ours`` and ``peer`` the same way: same warm-up, then ``repeat`` rounds of one
    timing each, alternating, so that a drift in the machine's load hits both alike."""
    for _ in range(warmup):
        ours()
        peer()
    a, b = [], []
    for _ in range(repeat):
        a.append(_calls(ours, inner))
        b.append(_calls(peer, inner))

    def med(ts: list[tuple[float, float]]) -> Timing:
        return Timing(statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts),
                      repeat)

    return med(a), med(b)


def cpu_median(fn: Callable[[], object], repeat: int = 3) -> float:
    """Median CPU seconds of ``repeat`` calls (no warm-up): for a part timed alone."""
    return measure(fn, repeat, warmup=0).cpu


def _array(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=np.float64)


def agree(ours: Any, peer: Any, *, atol: float = 0.0, rtol: float = 0.0,
          what: str = "outputs") -> float:
    """Assert that two outputs are equal within ``atol + rtol * max|peer|`` (max abs
    difference, element-wise, same shape) and return that difference. Called before timing:
    a benchmark times only implementations that give the same answer."""
    a, b = _array(ours), _array(peer)
    if a.shape != b.shape:
        raise AssertionError(f"{what}: shapes differ, ours {a.shape} vs peer {b.shape}")
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    bound = atol + rtol * (float(np.max(np.abs(b))) if b.size else 0.0)
    if not diff <= bound:
        raise AssertionError(f"{what}: ours and the peer differ by {diff:.3g} > {bound:.3g}")
    return diff


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _peak_child(fn: Callable[..., object], args: tuple) -> float:
    gc.collect()
    try:  # reset the high-water mark to the current RSS (Linux >= 4.0)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    base = _status_mb("VmRSS")
    fn(*args)
    return _status_mb("VmHWM") - base


def _fork_child(fn: Callable[..., object], args: tuple, q: multiprocessing.Queue) -> None:
    q.put(_peak_child(fn, args))


def peak_rss_mb(fn: Callable[..., object], *args: object, fork: bool = False) -> float:
    """Measured peak resident memory (MB) of ``fn(*args)`` above the memory of the process it
    runs in, just before the call: the process's own high-water mark (``VmHWM``, reset just
    before the call; not ``ru_maxrss``, which a spawned child inherits from its parent).

    By default in a fresh spawned process that has imported what the benchmark imports:
    ``fn`` must then be a module-level function of an importable module (or of the script,
    guarded by ``if __name__ == "__main__"``). ``fork=True`` runs any callable (a closure over
    fitted objects) in a forked copy of this process instead."""
    if fork:
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_fork_child, args=(fn, args, q))
        p.start()
        out = q.get()
        p.join()
        return float(out)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        return float(pool.apply(_peak_child, (fn, args)))


def row(method: str, case: str, ours: float, peer: float | None, *, peer_name: str,
        unit: str, better: str = "lower", target: float | str | None = None,
        met: bool | None = None, agreement: str = "", wall: tuple[float, float] | None = None,
        note: str = "", ratio: bool = True) -> dict:
    """Print one result and append it to the run's rows (``$ICLR25_BENCH_ROWS``).

    ``ratio`` is how many times better ours is than the peer: ``peer / ours`` when lower is
    better (times, memory), ``ours / peer`` when higher is better (rates, scores). A numeric
    ``target`` is a bound on that ratio (``ratio >= target``); a string target is an absolute
    bound the caller judges (pass ``met``). ``ratio=False``: the two figures do not divide
    (an agreement in %, a PSNR in dB): no ratio is written and the string ``target`` bounds
    the figure itself (``"≥ 90%"``, ``"≥ peer + 1.0 dB"``). ``wall`` gives (ours, peer) in
    wall time beside CPU time."""
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    if not ratio and isinstance(target, (int, float)):
        raise ValueError("ratio=False: target bounds the figure itself, give it as a string")
    divides, ratio = ratio, None
    if divides and peer is not None and ours and peer:
        ratio = float(peer / ours if better == "lower" else ours / peer)
    if isinstance(target, (int, float)) and not isinstance(target, bool):
        met = ratio is not None and ratio >= target
        target = f"≥ {target:.3g}×"
    met = None if met is None else bool(met)  # numpy's bool is not JSON
    r = {"method": method, "case": case, "ours": _round(ours), "peer": _round(peer),
         "peer_name": peer_name, "unit": unit, "ratio": _round(ratio),
         "target": target or "", "met": met, "load": round(load(), 2),
         "date": datetime.date.today().isoformat(), "agreement": agreement,
         "wall_ours": _round(wall[0]) if wall else None,
         "wall_peer": _round(wall[1]) if wall else None, "note": note}
    rat = "-" if ratio is None else f"{ratio:.3g}x"
    print(f"ROW {method} | {case} | ours {r['ours']} {unit} | {peer_name} {r['peer']} | "
          f"ratio {rat} | target {r['target'] or '-'} ({_met(met)}) | load {r['load']}"
          + (f" | {agreement}" if agreement else ""), flush=True)
    path = os.environ.get(ROWS_ENV)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return r


def timed_row(method: str, case: str, ours: Timing, peer: Timing, *, peer_name: str,
              target: float | None = None, agreement: str = "", note: str = "",
              scale: float = 1e3, unit: str = "ms CPU") -> dict:
    """A row from two ``compare`` timings: CPU medians (ms by default), wall beside them."""
    return row(method, case, ours.cpu * scale, peer.cpu * scale, peer_name=peer_name,
               unit=unit, target=target, agreement=agreement,
               wall=(ours.wall * scale, peer.wall * scale),
               note=f"median of {ours.repeat}" + (f"; {note}" if note else ""))


def _met(met: bool | None) -> str:
    return "-" if met is None else ("met" if met else "missed")


def _round(x: float | None) -> float | None:
    return None if x is None or x != x else float(f"{x:.4g}")


def _events(fn: Callable[[], object]) -> list:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return list(prof.key_averages())


def _profiled(fn: Callable[[], object]) -> dict[str, float]:
    return {e.key: e.self_cpu_time_total / 1e6 for e in _events(fn)}


def _median_ops(runs: list[dict[str, float]]) -> dict[str, float]:
    keys = set().union(*runs)
    return {k: statistics.median(r.get(k, 0.0) for r in runs) for k in keys}


def op_times(fn: Callable[[], object], repeat: int = 3) -> dict[str, float]:
    """Self CPU seconds per call of each torch operator in ``fn`` (``torch.profiler``, one
    call per profile after a warm-up call, the median over ``repeat`` profiles; numpy work
    shows as no operator)."""
    fn()
    return _median_ops([_profiled(fn) for _ in range(repeat)])


def op_compare(ours: Callable[[], object], peer: Callable[[], object], repeat: int = 5
               ) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`op_times` of both sides, profiled alternately (a drifting load hits both)."""
    ours()
    peer()
    a, b = [], []
    for _ in range(repeat):
        a.append(_profiled(ours))
        b.append(_profiled(peer))
    return _median_ops(a), _median_ops(b)


def py_times(fn: Callable[[], object]) -> dict[str, float]:
    """Self CPU seconds of each Python function in one call of ``fn`` (``cProfile`` on
    ``time.process_time``), keyed ``function (file)``: for numpy/scipy code, which
    :func:`op_times` does not see; compiled code (qhull, a sort) counts in the Python
    function or builtin that calls it."""
    import cProfile
    import pstats

    prof = cProfile.Profile(time.process_time)
    prof.runcall(fn)
    out: dict[str, float] = {}
    for (path, _, name), (_, _, tt, _, _) in pstats.Stats(prof).stats.items():  # type: ignore
        key = name if path == "~" else f"{name} ({os.path.basename(path)})"
        out[key] = out.get(key, 0.0) + tt    # two functions of one name in one file: summed
    return out


def profile_note(ours: dict[str, float], peer: dict[str, float] | None = None,
                 top: int = 4) -> str:
    """A row's note from :func:`op_times` tables: ours' largest operators (share of the
    profiled time) and, given the peer's, the operators only ours runs and, of the shared
    ones, where ours spends more than the peer per call."""
    total = sum(ours.values()) or 1.0
    head = sorted(ours.items(), key=lambda kv: -kv[1])[:top]
    out = "profile (torch.profiler, self CPU per call, median): " + ", ".join(
        f"{k} {v * 1e3:.3g} ms ({v / total:.0%})" for k, v in head)
    if peer is not None:
        only = {k: v for k, v in ours.items() if k not in peer and v > 0}
        more = sorted(((k, v - peer[k]) for k, v in ours.items() if k in peer and v > peer[k]),
                      key=lambda kv: -kv[1])[:top]
        out += (f"; only ours runs {len(only)} operators, {sum(only.values()) * 1e3:.3g} ms ("
                + ", ".join(f"{k} {v * 1e3:.3g}" for k, v in
                            sorted(only.items(), key=lambda kv: -kv[1])[:top]) + ")")
        out += "; of the shared ones ours spends more in " + (", ".join(
            f"{k} +{d * 1e3:.3g} ms" for k, d in more) or "none")
        out += f"; total {total * 1e3:.3g} vs {sum(peer.values()) * 1e3:.3g} ms"
    return out


#: the matrix-product operators (dispatch_note counts them)
PRODUCTS = {"aten::mm", "aten::bmm", "aten::mv", "aten::addmm", "aten::addmv", "aten::baddbmm"}


def dispatch_note(fn: Callable[[], object], per: int = 1, what: str = "call",
                  seconds: float | None = None) -> str:
    """How many torch operators ``fn`` dispatches per ``what`` (``fn`` covering ``per`` of
    them; nested calls counted, as the profiler sees them), how many are matrix products,
    and the cost per call: ``seconds`` (measured unprofiled, per ``what``) spread over the
    calls, else the profiler's self CPU (which carries its own overhead and, on a loaded
    machine, the waits). At small sizes a step costs its call count times that. One profile
    after a warm-up call."""
    fn()
    ev = [e for e in _events(fn) if e.key.startswith("aten::")]
    calls = sum(e.count for e in ev) / per
    prods = sum(e.count for e in ev if e.key in PRODUCTS) / per
    src = "measured" if seconds is not None else "profiled"
    if seconds is None:
        seconds = sum(e.self_cpu_time_total for e in ev) / 1e6 / per
    return (f"{calls:.3g} operator calls per {what} ({prods:.3g} matrix products), "
            f"{seconds / max(calls, 1) * 1e6:.3g} µs per call ({src} {seconds * 1e3:.3g} ms "
            f"per {what})")
