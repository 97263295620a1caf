"""What every command line of the package shares: one way to refuse bad usage."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: object) -> NoReturn:
    """Print ``error: message`` on stderr and exit 2 (bad usage), with no traceback."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2) from None

