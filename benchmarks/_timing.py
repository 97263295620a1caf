"""What the benchmark scripts share: one way to time a call in CPU time."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def cpu_median(fn: Callable[[], object], repeat: int = 3) -> float:
    """Median CPU time (``time.process_time``) of ``repeat`` calls: robust to a loaded machine."""
    ts = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return statistics.median(ts)
