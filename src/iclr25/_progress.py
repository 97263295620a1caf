"""One progress display for every long run: a rich bar on a terminal, silence otherwise.

Training loops, fits, zoos, mesh extraction and reproductions all report through
:func:`progress_bar` (or :func:`track` over an iterable), so that a user at a terminal sees
what runs and how long is left, while pipes, logs and tests see nothing. ``verbose=False``
silences it; ``verbose=True`` forces it (to stderr) even when stderr is not a terminal.

A command-line verb wraps its work in :func:`estimating`: every bar shown inside then prints
one lasting line with the estimated run time once ``ESTIMATE_AFTER_S`` seconds have passed
(from the steps done so far), so the estimate stays on screen after the bar is gone.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

ESTIMATE_AFTER_S = 3.0
"""Seconds of a bar's run after which :func:`estimating` prints the run-time estimate."""
_clock = time.monotonic  # the estimate's clock (a test sets its own)
_ESTIMATE = contextvars.ContextVar("iclr25_progress_estimate", default=False)


@contextlib.contextmanager
def estimating() -> Iterator[None]:
    """Within the block, each shown bar with a known total prints its run-time estimate."""
    token = _ESTIMATE.set(True)
    try:
        yield
    finally:
        _ESTIMATE.reset(token)


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h {m:02d}m" if h else f"{m}m {s:02d}s" if m else f"{s}s"


def _shown(verbose: bool | None) -> tuple[bool, Any]:
    if verbose is False:  # no console to build: hot loops pass False
        return False, None
    from rich.console import Console

    console = Console(stderr=True)
    return (console.is_terminal if verbose is None else bool(verbose)), console


@contextlib.contextmanager
def progress_bar(total: int | None, description: str, *, verbose: bool | None = None,
                 ) -> Iterator[Callable[..., None]]:
    """Yield ``advance(n=1, **info)``: moves the bar by ``n`` and shows ``info`` beside it.

    The bar shows steps done, elapsed time and the estimated time left (from the steps so
    far), and is removed when the block ends (forced off a terminal, it prints
    its final state once). ``total=None`` shows a spinner-like bar.
    """
    show, console = _shown(verbose)
    if not show:
        yield lambda n=1, **info: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                  TextColumn("{task.fields[info]}"), console=console,
                  transient=console.is_terminal) as bar:  # off a terminal: one final line
        task = bar.add_task(description, total=total, info="")
        start, done = _clock(), 0
        first: tuple[float, int] | None = None  # (time, steps) at the first advance
        pending = bool(total) and _ESTIMATE.get()

        def advance(n: int = 1, **info: Any) -> None:
            nonlocal done, pending, first
            text = "  ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                             for k, v in info.items())
            bar.update(task, advance=n, **({"info": text} if info else {}))
            done += n
            now = _clock()
            if first is None:
                # one-time work (a bootstrap, warm-up, the first step's lazy set-up) ends at
                # the first advance: it is counted once, never extrapolated (a 13-s fit whose
                # first step took 3.2 s printed "about 42m 42s in all")
                first = (now, done)
                return
            if pending and now - start >= ESTIMATE_AFTER_S and done < total:
                pending = False
                rate = (now - first[0]) / (done - first[1])
                whole = first[0] - start + rate * (total - first[1])
                bar.console.print(f"{description}: about {_duration(whole)} in all, "
                                  f"{_duration(whole - (now - start))} left (estimated from "
                                  f"steps {first[1] + 1}-{done} of {total}, after the first)")

        yield advance


def track(iterable: Iterable[T], description: str, *, total: int | None = None,
          verbose: bool | None = None) -> Iterator[T]:
    """Iterate over ``iterable`` with a :func:`progress_bar` (``total`` from ``len`` if any)."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    with progress_bar(total, description, verbose=verbose) as advance:
        for item in iterable:
            yield item
            advance()
