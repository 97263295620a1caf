"""What every command line of the package shares: one way to refuse bad usage, and one way to
check the files a verb reads and writes before any work (their contents are read by
:mod:`iclr25._io`, whose errors name the file)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import typer

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
