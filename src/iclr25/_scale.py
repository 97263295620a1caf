"""The scale of a reproduction run, apart from ``claims`` so the CLI can parse it without torch."""

from __future__ import annotations

import enum


class Scale(str, enum.Enum):
    """How large a reproduction run is: ``quick`` (seconds, tests/CI) or ``full`` (minutes)."""

    quick = "quick"
    full = "full"
