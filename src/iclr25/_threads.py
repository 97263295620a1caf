"""Thread-count control for code that runs tiny networks."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run a block (or, as a decorator, a function) with ``n`` torch threads, then restore.

    Tiny networks (the reproductions', the MoTHer zoo's) run faster on one thread than on a
    pool whose synchronisation dominates matmuls of a few thousand flops.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
