"""Checks every training method's engine keywords must pass (tests/<method>/test_*_engine.py).

Each takes ``train(**engine) -> (history, states)``: one training from a fresh start (model,
optimiser, data built anew, as a new process would) with the engine's keywords passed to the
method's API, returning its loss history and the trained tensors (a list).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

Train = Callable[..., tuple[list[float], list[torch.Tensor]]]


class Crash(Exception):
    """A run killed between two optimiser steps."""


@contextmanager
def crash_after(k: int) -> Iterator[None]:
    """Raise :class:`Crash` from the optimiser step after the ``k``-th (any optimiser)."""
    calls = [0]

    def hook(*_: Any) -> None:
        calls[0] += 1
        if calls[0] > k:
            raise Crash

    handle = register_optimizer_step_post_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def _fresh(train: Train, **engine: Any) -> tuple[list[float], list[torch.Tensor]]:
    """``train`` with torch's global RNG from one seed (dropout, a new process's state)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(11)
        return train(**engine)


def check_resume(train: Train, k: int, tmp_path: Any) -> None:
    """Stopped after step ``k`` and resumed equals the uninterrupted run, bit for bit."""
    h_ref, s_ref = _fresh(train)
    ckpt = tmp_path / "run.ckpt"
    with crash_after(k), pytest.raises(Crash):
        _fresh(train, checkpoint=ckpt, checkpoint_every=k)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(99)              # whatever it is now: the checkpoint's state wins
        h, s = train(resume=ckpt)
    assert h == h_ref
    assert len(s) == len(s_ref)
    assert all(torch.equal(a, b) for a, b in zip(s, s_ref, strict=True))


def check_ddp(train: Train, atol: float = 1e-5) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """2 gloo processes equal 1 process at the same global batch to ``atol``; returns both
    runs' tensors."""
    h1, s1 = _fresh(train)
    h2, s2 = _fresh(train, devices=2, strategy="ddp")
    assert h2 == pytest.approx(h1, rel=atol, abs=atol)     # losses of a few units: relative
    for a, b in zip(s1, s2, strict=True):
        torch.testing.assert_close(b, a, rtol=0, atol=atol)
    return s1, s2


def check_bf16(train: Train) -> None:
    """bf16-mixed trains: float32 weights, a loss that falls, not the float32 run."""
    h, s = _fresh(train, precision="bf16-mixed")
    h32, _ = _fresh(train)
    assert h[-1] < h[0]
    assert h != h32
    assert all(t.dtype != torch.bfloat16 for t in s)


def check_refused(train: Train, other: Train, tmp_path: Any, match: str) -> None:
    """A checkpoint of ``other`` (another model or size), a corrupted and a foreign file are
    refused with one line (``match`` for the first), the file untouched."""
    ckpt = tmp_path / "other.ckpt"
    _fresh(other, checkpoint=ckpt)
    for expect in (match, "is not a readable checkpoint", "not a checkpoint of this"):
        if expect.startswith("is not"):
            raw = ckpt.read_bytes()
            ckpt.write_bytes(raw[: len(raw) // 2])
        elif expect.startswith("not a"):
            torch.save({"state_dict": {}}, ckpt)
        raw = ckpt.read_bytes()
        with pytest.raises(ValueError, match=expect) as err:
            _fresh(train, checkpoint=ckpt, resume=ckpt)
        assert "\n" not in str(err.value)
        assert ckpt.read_bytes() == raw


def tensors(module: torch.nn.Module, *, key_bias: bool = True) -> list[torch.Tensor]:
    """``module``'s trained tensors (copies). ``key_bias=False`` leaves the attention's key
    bias out (the middle third of ``in_proj_bias``): softmax is invariant to it, so its
    gradient is 0 up to rounding, and Adam's normalised step turns that noise (not the same
    in one process and in two) into moves of about lr, which no other weight feels."""
    out = []
    for name, t in module.state_dict().items():
        t = t.detach().clone()
        if not key_bias and name.endswith("in_proj_bias"):
            d = len(t) // 3
            t = torch.cat([t[:d], t[2 * d:]])
        out.append(t)
    return out
