"""Ray sessions: the ``--cluster`` address, the connection, and jobs mapped onto Ray.

``iclr25 reproduce --cluster ray`` starts a local Ray instance; ``--cluster ray://HOST:PORT``
connects to a running cluster through Ray Client. The session's ``ray`` module is what
:class:`iclr25.runner.Ray` runs tasks on (one Ray task per experiment, and budget, and seed;
its faults are described there). Every node needs iclr25 installed with the extras of the
methods it runs (the driver's ``PYTHONPATH`` is passed on to a local instance).
:meth:`iclr25.claims.Context.map_jobs` uses :func:`map_on_ray` inside a Ray worker. Ray is the
``cluster`` extra, imported only when a session opens; this module imports no other part of
iclr25.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["in_ray_worker", "map_on_ray", "parse_cluster", "ray_session"]


def parse_cluster(text: str) -> str | None:
    """``"ray"`` -> None (a local instance); ``"ray://HOST:PORT"`` -> that address.

    Raises:
        ValueError: naming ``--cluster``, for anything else.
    """
    if text == "ray":
        return None
    prefix = "ray://"
    rest = text[len(prefix):] if text.startswith(prefix) else ""
    host, _, port = rest.rpartition(":")
    if not (host and port.isdigit() and 0 < int(port) < 65536 and "/" not in rest):
        raise ValueError(f"--cluster must be 'ray' or 'ray://HOST:PORT', got {text!r}")
    return text


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError("--cluster needs Ray: pip install 'iclr25[cluster]'") from None
    return ray


@contextlib.contextmanager
def ray_session(address: str | None) -> Iterator[Any]:
    """Connect to (or start) Ray for the block, and disconnect after.

    Raises:
        ImportError: Ray is not installed (names the extra).
        ValueError: naming ``--cluster``, when the address cannot be reached.
    """
    ray = _ray()
    if address is not None:  # Ray Client waits 30 s for a port nobody listens on
        host, _, port = address[len("ray://"):].rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
        except OSError as exc:
            raise ValueError(f"--cluster: cannot reach {address} "
                             f"({exc.strerror or type(exc).__name__})") from None
    # a local instance's workers must import what the driver imports (tests' modules too)
    env = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}}
    try:
        ray.init(address=address, runtime_env=env if address is None else None,
                 include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                 configure_logging=False)
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        raise ValueError(f"--cluster: cannot reach {address or 'a local Ray instance'} "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
                         ) from None
    try:
        yield ray
    finally:
        ray.shutdown()


def in_ray_worker() -> bool:
    """Whether this process is a Ray worker (where :meth:`iclr25.claims.Context.map_jobs` must not
    fork: Ray's threads do not survive it, and the cluster should place the jobs)."""
    ray = sys.modules.get("ray")
    return (ray is not None and ray.is_initialized()
            and ray.get_runtime_context().worker.mode == ray.WORKER_MODE)


def _job(fn: Callable[..., Any], args: tuple) -> Any:
    import torch

    torch.set_num_threads(1)
    return fn(*args)


def map_on_ray(fn: Callable[..., Any], jobs: Sequence[tuple], workers: int) -> list[Any]:
    """``[fn(*job) for job in jobs]`` as Ray tasks of one CPU each, at most ``workers`` at a
    time (the experiment's share, as on one machine); the results in the jobs' order."""
    ray = _ray()
    remote = ray.remote(_job).options(num_cpus=1, max_retries=0)
    refs: list[Any] = []
    running: list[Any] = []
    for job in jobs:
        if len(running) == workers:
            _, running = ray.wait(running, num_returns=1)
        refs.append(remote.remote(fn, job))
        running.append(refs[-1])
    return ray.get(refs)
