"""The README's benchmark figures, read from the rows of one ``run_all.py`` run.

A figure in README.md or a user guide (``docs/guide/*.md``) is a marked span whose text
``run_all.py`` rewrites after every run::

    <!--fig ratio oft "solve n=300 capacitated" peer="OR-Tools*"-->14<!--/fig-->

The comment names a field (``ratio``, ``inverse`` (1 / ratio), ``ours``, ``peer``, ``load``,
``date``), a method and a case (``fnmatch`` pattern), optionally ``peer="pattern"``; the span's
text is that field over the matching rows: one figure, or ``low–high`` when the rows differ.
Text outside the marks is the writer's; ``tests/core/test_readme_figures.py`` checks that every
mark renders to its text from ``benchmarks/results.json`` and that RESULTS.md is that run's table.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from pathlib import Path

MARK = re.compile(r"<!--fig (?P<spec>[^>]*?)-->(?P<text>.*?)<!--/fig-->")
FIELDS = ("ratio", "inverse", "ours", "peer", "load", "date")


def documents(root: Path) -> list[Path]:
    """The files whose figure marks a run re-renders: README.md and the user guides."""
    return [root / "README.md", *sorted((root / "docs" / "guide").glob("*.md"))]


def number(x: float) -> str:
    """A figure as the README prints it: 3 significant digits below 10, whole numbers above."""
    return f"{x:,.0f}" if abs(x) >= 10 else f"{x:.3g}"


def _spec(spec: str) -> tuple[str, str, str, str]:
    parts = shlex.split(spec)
    opts = dict(p.split("=", 1) for p in parts[3:])
    if len(parts) < 3 or parts[0] not in FIELDS or set(opts) - {"peer"}:
        raise ValueError(f"figure mark {spec!r}: want FIELD METHOD \"CASE\" [peer=\"PEER\"] "
                         f"with FIELD one of {', '.join(FIELDS)}")
    return parts[0], parts[1], parts[2], opts.get("peer", "*")


def render(spec: str, rows: list[dict]) -> str:
    """The text of the mark ``spec`` over ``rows`` (results.json's rows)."""
    field, method, case, peer = _spec(spec)
    hit = [r for r in rows if r["method"] == method and fnmatch.fnmatchcase(r["case"], case)
           and fnmatch.fnmatchcase(str(r["peer_name"]), peer)]
    key = "ratio" if field == "inverse" else field
    vals = [r[key] for r in hit if r.get(key) is not None]
    if not vals:
        raise LookupError(f"figure mark {spec!r}: no row of {method!r} has a {key} for "
                          f"case {case!r}, peer {peer!r}")
    if field == "date":
        return "–".join(sorted({min(vals), max(vals)}))
    if field == "inverse":
        vals = [1 / v for v in vals]
    fmt = (lambda v: f"{v:.1f}") if field == "load" else number
    lo, hi = fmt(min(vals)), fmt(max(vals))
    return lo if lo == hi else f"{lo}–{hi}"


def fill(text: str, rows: list[dict]) -> str:
    """``text`` with every figure mark's span re-rendered from ``rows``."""
    return MARK.sub(lambda m: f"<!--fig {m['spec']}-->{render(m['spec'], rows)}<!--/fig-->",
                    text)


def stale(text: str, rows: list[dict]) -> list[str]:
    """The marks whose text is not what ``rows`` render (``spec: quoted != rendered``)."""
    out = []
    for m in MARK.finditer(text):
        try:
            want = render(m["spec"], rows)
        except LookupError as exc:
            out.append(str(exc))
            continue
        if m["text"] != want:
            out.append(f"{m['spec']}: quoted {m['text']!r}, results hold {want!r}")
    return out
