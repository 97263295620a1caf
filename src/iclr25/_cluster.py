"""The reproduction on a Ray cluster: one Ray task per experiment (and budget, and seed).

``iclr25 reproduce --cluster ray`` starts a local Ray instance; ``--cluster ray://HOST:PORT``
connects to a running cluster through Ray Client. Each task asks for ``threads`` CPUs (and one
GPU with ``--device cuda``), runs :func:`iclr25.claims.run_experiment` on a worker, judges its
claims there and sends back the record, the verdicts and the figures' bytes, which are written
where a local run writes them. Every node needs iclr25 installed with the extras of the
methods it runs (the driver's ``PYTHONPATH`` is passed on to a local instance).

Faults: a task whose worker or node dies (SIGKILL, out of memory, node lost) errors only its
own experiment's claims, with Ray's cause; a lost connection to the cluster errors every task
that had not finished with :data:`LOST` (the finished ones are kept), and the command line
ends the run with one line after writing the report. Ray is the ``cluster`` extra, imported
only here.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LOST", "in_ray_worker", "map_on_ray", "parse_cluster", "ray_session", "run_on_ray"]

LOST = "the connection to the Ray cluster was lost"


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


def _task(order: Any) -> tuple[Any, list[Any], dict[str, bytes]]:
    """What a Ray worker runs: the order (:func:`iclr25.claims._perform`), and the figures'
    bytes, since the worker's disk is not the driver's."""
    import dataclasses

    from iclr25 import claims

    with tempfile.TemporaryDirectory() as figs:
        rec, results = claims._perform(dataclasses.replace(order, figure_dir=figs))
        pngs = {Path(f).name: Path(f).read_bytes() for f in rec.figures}
    return rec, results, pngs


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


def run_on_ray(ray: Any, tasks: Sequence[Any], how: tuple[Any, str, int],
               on_experiment: Callable[[Any], None] | None,
               finish: Callable[[int, Any, list[Any]], None], order: Sequence[int],
               failed: Callable[[Any, str], tuple[Any, list[Any]]]) -> None:
    """Submit every task (in ``order``) to Ray and ``finish`` each as it ends.

    ``how`` is (scale, device, threads); ``failed(task, why)`` makes the errored record and
    verdicts of a task that could not report.
    """
    from ray import exceptions as rx

    from iclr25.claims import _Order

    _scale, device, threads = how
    remote = ray.remote(_task).options(num_cpus=threads, max_retries=0,
                                       num_gpus=1 if device.startswith("cuda") else 0)
    refs: dict[Any, int] = {}
    for i in order:
        refs[remote.remote(_Order.of(tasks[i], how))] = i
        if on_experiment is not None:
            on_experiment(tasks[i].exp)
    lost = None
    while refs:
        try:
            (ref,), _ = ray.wait(list(refs), num_returns=1)
        except (ConnectionError, rx.RaySystemError) as exc:
            lost = exc
            break
        i = refs.pop(ref)
        try:
            rec, results, pngs = ray.get(ref)
        except (rx.WorkerCrashedError, rx.NodeDiedError, rx.OutOfMemoryError,
                rx.TaskCancelledError, rx.RayTaskError, rx.ObjectLostError) as exc:
            rec, results = failed(tasks[i], f"Ray task failed: {type(exc).__name__}: "
                                            f"{str(exc).strip().splitlines()[0][:300]}")
        except (ConnectionError, rx.RaySystemError) as exc:
            refs[ref] = i
            lost = exc
            break
        else:
            figure_dir = Path(tasks[i].figure_dir)
            figure_dir.mkdir(parents=True, exist_ok=True)
            rec.figures = []
            for name, data in pngs.items():
                (figure_dir / name).write_bytes(data)
                rec.figures.append(str(figure_dir / name))
        finish(i, rec, results)
    if lost is not None:
        for i in refs.values():
            rec, results = failed(tasks[i], f"{LOST} ({type(lost).__name__})")
            finish(i, rec, results)
