"""Running LoCoDL on a torch.distributed process group: spawned here, or under torchrun.

:func:`spawn_runs` starts ``n_proc`` local processes with ``torch.multiprocessing.spawn``
(gloo on CPU), each holding a contiguous block of clients, and returns rank 0's results;
``python -m torch.distributed.run --standalone --nproc_per_node=P -m iclr25.locodl.launch``
does the same from the command line.
"""

from __future__ import annotations

import socket
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch

ALGORITHMS = ("locodl", "gd", "scaffnew", "diana", "adiana")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_objective(spec: dict[str, Any]):
    """A client objective from ``{"kind", "X", "y", "clients", "alpha"}``."""
    from iclr25.locodl.objectives import ClientLogistic, ClientRidge

    cls = ClientLogistic if spec["kind"] == "logistic" else ClientRidge
    return cls(spec["X"], spec["y"], spec["clients"], spec["alpha"])


def run_jobs(spec: dict[str, Any], jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run each job ``{"algorithm", "sparse", **kwargs}`` on the initialised process group."""
    from sklearn.exceptions import ConvergenceWarning

    from iclr25.locodl import algorithms
    from iclr25.locodl.comm import DistributedComm

    objective = build_objective(spec)
    out = []
    for job in jobs:
        job = dict(job)
        fn = getattr(algorithms, job.pop("algorithm", "locodl"))
        comm = DistributedComm(sparse=job.pop("sparse", True))
        with warnings.catch_warnings():  # each rank would warn; the caller reads converged
            warnings.simplefilter("ignore", ConvergenceWarning)
            r = fn(objective, comm=comm, **job)
        out.append(dict(x=r.x.cpu(), rounds=r.rounds, iterations=r.iterations,
                        uplink_bits=r.uplink_bits, wire_bytes=r.wire_bytes,
                        history=r.history, converged=r.converged))
    return out


def _worker(rank: int, world: int, port: int, spec: dict, jobs: list, out: str) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    try:
        res = run_jobs(spec, jobs)
        if rank == 0:
            torch.save(res, out)
    finally:
        dist.destroy_process_group()


def spawn_runs(spec: dict[str, Any], jobs: list[dict[str, Any]], n_proc: int
               ) -> list[dict[str, Any]]:
    """Run ``jobs`` on ``n_proc`` spawned gloo processes; the results of rank 0.

    Args:
        spec: the objective, ``{"kind": "logistic"|"ridge", "X", "y", "clients", "alpha"}``.
        jobs: dicts of ``algorithm`` (default "locodl"), ``sparse`` (default True) and the
            algorithm's keyword arguments (compressor, seed, max_iter, tol, ...).
        n_proc: processes (1 ≤ n_proc ≤ clients).
    """
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "out.pt")
        mp.spawn(_worker, args=(n_proc, free_port(), spec, jobs, out), nprocs=n_proc,
                 join=True)
        return torch.load(out, weights_only=False)
