"""The server that forks the runner's worker processes (``--jobs N``).

It imports torch, the runner and every method's claim module once, so each worker it forks
starts with them imported instead of importing them again. This module imports none of them,
so that the CLI can start the server first and the server's imports run beside the CLI's own.
Forking the CLI's process instead would be unsafe once torch has threads; spawning re-imports.
"""

from __future__ import annotations

import multiprocessing
import pkgutil

# where there is no fork server (Windows), workers are spawned and import what they need
_FORKS = "forkserver" in multiprocessing.get_all_start_methods()
CONTEXT = multiprocessing.get_context("forkserver" if _FORKS else "spawn")


def start() -> None:
    """Start the server in the background (idempotent; it ends with this process)."""
    if not _FORKS:
        return
    import multiprocessing.forkserver

    import iclr25

    CONTEXT.set_forkserver_preload(
        ["iclr25.runner", *(f"iclr25.{m.name}.claim" for m in pkgutil.iter_modules(iclr25.__path__)
                            if m.ispkg and not m.name.startswith("_"))])
    multiprocessing.forkserver.ensure_running()
