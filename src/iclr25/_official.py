"""Reading the official repositories' released checkpoints into our modules: one reader
(.pth/.pt through ``torch.load(weights_only=True)``, or .safetensors), one unwrapping of the
usual containers, and one check that names the first key that does not fit."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

import torch
from torch import nn

from iclr25._io import check_readable

#: containers that training frameworks wrap a state dict in, most specific first
#: (basicsr saves ``params`` and, with an EMA, ``params_ema``: its test configs load the EMA)
WRAPPERS = ("params_ema", "params", "state_dict", "model", "net", "network")
SUFFIXES = (".pth", ".pt", ".safetensors")


def read_state_dict(path: str | Path, *, key: str | None = None,
                    name: str = "path") -> dict[str, torch.Tensor]:
    """The tensors of a checkpoint file, unwrapped, on the CPU.

    Args:
        path: a ``.pth``/``.pt`` file (read with ``torch.load(weights_only=True)``: no code
            in the file runs) or a ``.safetensors`` file.
        key: the container to take (e.g. ``"params"``); default the first present of
            :data:`WRAPPERS`, else the file's top level.
        name: how messages name the file's argument.

    Returns:
        ``{key: tensor}`` with a leading ``module.`` (``DataParallel``) removed from every key.

    Raises:
        ValueError: a wrong suffix, a missing or unreadable file, a named ``key`` absent, or
            no tensors at the chosen level (naming the first value that is not one).
    """
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise ValueError(f"{name} must end in {', '.join(SUFFIXES)}, got {p.name}")
    check_readable(p, name)
    try:
        if p.suffix.lower() == ".safetensors":
            from safetensors.torch import load_file

            obj: object = load_file(str(p), device="cpu")
        else:
            obj = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # pickle, zip and safetensors each raise their own types
        if "Weights only load failed" in str(exc):
            raise ValueError(f"{name} {p} is not a readable checkpoint: it holds pickled "
                             f"objects besides tensors, which are not loaded (they could run "
                             f"code)") from None
        raise ValueError(f"{name} {p} is not a readable checkpoint: not a torch.save or "
                         f"safetensors file ({type(exc).__name__})") from None
    if key is not None:
        if not isinstance(obj, dict) or key not in obj:
            have = sorted(obj)[:8] if isinstance(obj, dict) else type(obj).__name__
            raise ValueError(f"{name} {p} has no {key!r} entry (top level: {have})")
        obj = obj[key]
    else:
        for _ in range(3):  # e.g. {"state_dict": {"params_ema": ...}, "epoch": 3}
            inner = next((w for w in WRAPPERS if isinstance(obj, dict)
                          and isinstance(obj.get(w), dict)), None)
            if inner is None:
                break
            obj = obj[inner]
    if not isinstance(obj, dict) or not obj:
        raise ValueError(f"{name} {p} holds no state dict (got {type(obj).__name__})")
    bad = next((k for k, v in obj.items() if not isinstance(v, torch.Tensor)), None)
    if bad is not None:
        raise ValueError(f"{name} {p}: entry {bad!r} is a {type(obj[bad]).__name__}, not a "
                         f"tensor (name the container with key=)")
    if all(k.startswith("module.") for k in obj):
        obj = {k[len("module."):]: v for k, v in obj.items()}
    return dict(obj)


def renamer(rules: Iterable[tuple[str, str]]) -> Callable[[str], str]:
    """A function applying the regex substitutions ``rules`` in order to a key."""
    compiled = [(re.compile(a), b) for a, b in rules]

    def rename(k: str) -> str:
        for pattern, repl in compiled:
            k = pattern.sub(repl, k)
        return k
    return rename


def load_official(module: nn.Module, state: dict[str, torch.Tensor],
                  official_name: Callable[[str], str], *, unused: str = r"(?!)",
                  what: str = "checkpoint") -> nn.Module:
    """Copy an official state dict into ``module`` (in place), checking every key first.

    Args:
        module: ours, built with the checkpoint's sizes.
        state: the official tensors (see :func:`read_state_dict`).
        official_name: our state-dict key -> the official key holding its value.
        unused: a regex matching official keys whose weights the official forward never
            reads; they are dropped and not required.
        what: how messages name the file.

    Raises:
        ValueError: naming the first key that does not fit: an official key we have no
            place for (in the file's order), a shape that differs (singleton dimensions
            aside: the same numbers in the same order), or a key we need that is missing.
    """
    ours = module.state_dict()
    expected = {official_name(k): k for k in ours}
    drop = re.compile(unused)
    weights = {}
    for k, v in state.items():
        if k not in expected:
            if drop.fullmatch(k):
                continue
            raise ValueError(f"{what}: unexpected key {k!r} (shape {tuple(v.shape)}): not "
                             f"part of this architecture")
        target = ours[expected[k]]
        if [s for s in v.shape if s != 1] != [s for s in target.shape if s != 1]:
            raise ValueError(f"{what}: key {k!r} has shape {tuple(v.shape)}, expected "
                             f"{tuple(target.shape)}")
        weights[expected[k]] = v.reshape(target.shape).to(target.dtype)
    missing = next((k for k in expected if expected[k] not in weights), None)
    if missing is not None:
        raise ValueError(f"{what}: missing key {missing!r} (shape "
                         f"{tuple(ours[expected[missing]].shape)})")
    module.load_state_dict(weights)
    return module


def need(state: dict[str, torch.Tensor], key: str, what: str) -> torch.Tensor:
    """``state[key]``, or a ValueError naming the missing key (used to read sizes)."""
    if key not in state:
        raise ValueError(f"{what}: missing key {key!r}")
    return state[key]


def count(state: dict[str, torch.Tensor], prefix: str) -> int:
    """How many numbered children ``prefix.{i}.`` the keys of ``state`` have (0, 1, ...)."""
    pat = re.compile(re.escape(prefix) + r"\.(\d+)\.")
    found = {int(m.group(1)) for k in state if (m := pat.match(k))}
    n = 0
    while n in found:
        n += 1
    return n
