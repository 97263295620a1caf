"""How a number, a sign or a table is written for reading: the report, the ladder, the command
line and the documentation all write through here, so a figure reads the same everywhere.

``results.json`` and ``ladder.json`` keep full precision; only what people read is rounded.

>>> num(0.123456), num(44.0), num(3), num(None), num(True), num(float("nan"))
('0.1235', '44', '3', '-', 'yes', 'nan')
>>> with_unit(0.5, "dB"), sign("<=")
('0.5 dB', '≤')
>>> md_table(["a", "b"], [[1, "x|y"]])
['| a | b |', '|---|---|', '| 1 | x\\\\|y |']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["cell", "md_table", "num", "sign", "with_unit"]

_SIGN = {">=": "≥", "<=": "≤"}


def sign(direction: str) -> str:
    """``"≥"`` or ``"≤"`` for a claim's ``direction`` (``">="`` or ``"<="``)."""
    return _SIGN[direction]


def num(v: Any, digits: int = 4) -> str:
    """``v`` for reading: a float to ``digits`` significant figures (NaN and inf as such; a
    whole float without its ``.0``), an int as it is, None as ``-``, a bool as yes/no, a list
    of up to 8 values, anything else as its text."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.{digits}g}" if math.isfinite(v) else str(v)
    if isinstance(v, (list, tuple)):
        shown = ", ".join(num(x, digits) for x in v[:8])
        return f"[{shown}{', ...' if len(v) > 8 else ''}]"
    return str(v)


def with_unit(v: Any, unit: str, digits: int = 4) -> str:
    """:func:`num` followed by ``unit`` (none after a missing value)."""
    return f"{num(v, digits)} {unit}".rstrip() if unit and v is not None else num(v, digits)


def cell(v: Any) -> str:
    """:func:`num` made safe for one line of Markdown (a table cell, a list item)."""
    return num(v).replace("|", "\\|").replace("\n", " ")


def md_table(columns: Sequence[Any], rows: Sequence[Sequence[Any]]) -> list[str]:
    """The lines of a Markdown table; every header and cell written by :func:`cell`."""
    out = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return out
