"""What every command line of the package shares: one way to refuse bad usage, one way to
take a choice among the names of a ``Literal``, and one way to check the files a verb reads
and writes before any work (their contents are read by :mod:`iclr25._io`, whose errors name
the file)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar, get_args

import typer

T = TypeVar("T")

#: numpy and scikit-learn seeds are 32-bit: a larger seed is bad usage (exit 2), not an
#: experiment that errors later
SEED_MAX = 2**32 - 1


def fail(message: object) -> NoReturn:
    """Print ``error: message`` on stderr and exit 2 (bad usage), with no traceback."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2) from None


def check_seed(value: int | None) -> int | None:
    """Every ``--seed`` option's callback: exit 2 unless the seed lies in [0, 2**32)."""
    if value is not None and not 0 <= value <= SEED_MAX:
        fail(f"--seed must be >= 0 and < 2**32, got {value}")
    return value


def choice(names: Any, option: str) -> Callable[[str], str]:
    """An option's ``parser=`` taking one of the names of the ``Literal`` ``names``.

    Annotate the parameter with the same ``Literal``: typer's help then lists the names.
    Any other value exits 2 with one line naming ``option`` and the names (typer's own check
    of a ``Literal`` prints a framed usage message instead)::

        fallback: Fallback = typer.Option("none", "--fallback",
                                          parser=choice(Fallback, "--fallback"))
    """
    allowed = get_args(names)

    def parse(value: str) -> str:
        if value not in allowed:
            fail(f"{option} must be one of {', '.join(allowed)}; got {value!r}")
        return value

    return parse


def _suffix_ok(p: Path, option: str, suffixes: tuple[str, ...] | None) -> None:
    if suffixes and p.suffix.lower() not in suffixes:
        fail(f"{option} must end in {' or '.join(suffixes)}, got {p.name}")


def output_path(path: Path | None, option: str = "--out", *,
                suffixes: tuple[str, ...] | None = None) -> Path | None:
    """Check a file the verb will write, before any work; its folder is created if missing.

    Every verb behaves alike: a missing folder is made (as ``mkdir -p``); a wrong suffix, a
    path that is a folder, or a folder that cannot be made or written exits 2 naming
    ``option``. ``None`` (the option not given) passes through.
    """
    if path is None:
        return None
    p = Path(path)
    if p.is_dir():
        fail(f"{option} {p} is a directory, expected a file name")
    _suffix_ok(p, option, suffixes)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"{option}: cannot create folder {p.parent} ({exc.strerror})")
    if not os.access(p.parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        fail(f"{option}: {p} is not writable")
    return p


def input_file(path: Path, option: str = "FILE", *,
               suffixes: tuple[str, ...] | None = None) -> Path:
    """Check a file the verb will read, before any work: it exists, is a readable, non-empty
    file with an accepted suffix; else exit 2 naming ``option`` and the file."""
    p = Path(path)
    if not p.exists():
        fail(f"{option} {p} does not exist")
    if p.is_dir():
        fail(f"{option} {p} is a directory, expected a file")
    _suffix_ok(p, option, suffixes)
    if not os.access(p, os.R_OK):
        fail(f"{option} {p} is not readable (permission denied)")
    if p.stat().st_size == 0:
        fail(f"{option} {p} is empty")
    return p


def image_jobs(source: Path, dest: Path, reference: Path | None = None) -> list[tuple]:
    """What an image verb (restore, enhance) does: ``(name, image, reference or None, path
    to write)`` for each image of IN, all read and checked before any work.

    IN (``source``) is an image file or a folder of images; OUT (``dest``) an image path for
    one image, a folder for a folder (a missing folder made in both cases); --reference
    an image for one image, else a folder with an image of the same name and size for each.
    Anything else exits 2 naming the argument.
    """
    from iclr25.datasets.images import IMAGE_SUFFIXES, load_folder

    try:
        images = load_folder(source)
    except ValueError as exc:
        fail(f"IN: {exc}")
    refs = None
    if reference is not None:
        try:
            refs = load_folder(reference)
        except ValueError as exc:
            fail(f"--reference: {exc}")
        if reference.is_file():
            refs = {next(iter(images)): next(iter(refs.values()))}
        missing = [n for n in images if n not in refs or refs[n].shape != images[n].shape]
        if missing:
            fail(f"--reference has no image of the same size for {missing[0]}")
    if source.is_file():  # a missing folder is made, as every verb does (output_path)
        targets = {next(iter(images)): output_path(dest, "OUT", suffixes=IMAGE_SUFFIXES)}
    else:
        if dest.exists() and not dest.is_dir():
            fail(f"OUT must be a folder when IN is a folder, got file {dest}")
        try:
            dest.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"OUT: cannot create folder {dest} ({exc.strerror})")
        targets = {n: dest / n for n in images}
    return [(n, images[n], None if refs is None else refs[n], p) for n, p in targets.items()]


def warning_lines(name: str, fn: Callable[[], T]) -> T:
    """``fn()``, each warning it gives printed on stderr as ``warning: NAME: message``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    for w in caught:
        typer.echo(f"warning: {name}: {w.message}", err=True)
    return out


# -- the training engine's options, the same on every training verb ---------------------------

def devices_option() -> Any:
    return typer.Option(1, "--devices", help="Processes (CPU, gloo) or GPUs (NCCL) of "
                                             "data-parallel training.")


def strategy_option() -> Any:
    return typer.Option("auto", "--strategy", help="auto (ddp when --devices > 1), single "
                                                   "or ddp.")


def precision_option() -> Any:
    return typer.Option("32", "--precision", help="32, bf16-mixed, or 16-mixed (CUDA).")


def checkpoint_every_option() -> Any:
    return typer.Option(None, "--checkpoint-every", help="Write the whole training state "
                        "every K optimiser steps (to --out with the suffix .ckpt).")


def resume_option() -> Any:
    return typer.Option(None, "--resume", help="Continue from a checkpoint of this same "
                                               "training (data, batch size, model).")


def engine_run(devices: int, strategy: str, precision: str, checkpoint_every: int | None,
               resume: Path | None, out: Path, device: str = "cpu") -> dict[str, Any]:
    """The checked keyword arguments of a training verb's run (exit 2 with one line if not):
    the checkpoint goes beside ``--out`` as ``<out>.ckpt``."""
    from iclr25._engine import Engine

    run = {"devices": devices, "strategy": strategy, "precision": precision,
           "checkpoint": out.with_suffix(".ckpt") if checkpoint_every else None,
           "checkpoint_every": checkpoint_every, "resume": resume}
    option = {"devices": "--devices", "strategy": "--strategy", "precision": "--precision",
              "checkpoint_every": "--checkpoint-every", "resume": "--resume"}
    try:
        Engine(**run, device_kind=device)
    except (ValueError, TypeError) as exc:
        message = str(exc)
        for name, flag in option.items():   # name the option as the user typed it
            if message.startswith(name):
                message = flag + message[len(name):]
        fail(message)
    return run
