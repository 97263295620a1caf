"""torchrun entry point: ``torchrun --standalone --nproc_per_node=P -m iclr25.locodl.launch
IN.pt OUT.pt``. IN holds ``{"spec": objective spec, "jobs": [...]}`` (see
:func:`iclr25.locodl.distributed.run_jobs`); rank 0 writes the results to OUT."""

from __future__ import annotations

import sys

import torch


def main(argv: list[str] | None = None) -> None:
    import torch.distributed as dist

    from iclr25.locodl.distributed import run_jobs

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        raise SystemExit("usage: torchrun ... -m iclr25.locodl.launch IN.pt OUT.pt")
    payload = torch.load(args[0], weights_only=False)
    X = payload["spec"]["X"]
    backend = "nccl" if isinstance(X, torch.Tensor) and X.is_cuda else "gloo"
    dist.init_process_group(backend)
    try:
        res = run_jobs(payload["spec"], payload["jobs"])
        if dist.get_rank() == 0:
            torch.save(res, args[1])
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
