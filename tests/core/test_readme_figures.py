"""README's benchmark figures are read from benchmarks/results.json (the run that wrote
RESULTS.md): a ratio quoted in a method's README row must be one of that method's measured
ratios, to the digits quoted. Nothing is timed here."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = "[RESULTS](benchmarks/RESULTS.md)"
#: a ratio "2.8×", "1.07-1.12x", "3.0–3.2×" (not a product "512 × 1024"), unless it follows
#: words that make it a target or a bound ("target 10×", "the 3x wanted", "within 1.3×")
FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*[-–]\s*(\d+(?:\.\d+)?))?\s*[×x]"
                    r"(?![\w])(?!\s*\d)")
EXEMPT = re.compile(r"(target|ceiling is|floor of|within|has|bound|not the)\W*$", re.I)


def quoted_ratios(row: str) -> list[str]:
    """The ratios a README row quotes as benchmark results (targets and bounds left out)."""
    out = []
    for m in FIGURE.finditer(row):
        if not EXEMPT.search(row[max(0, m.start() - 24):m.start()]):
            out += [g for g in m.groups() if g]
    return out


def holds(figure: str, ratios: list[float]) -> bool:
    """``figure`` (as printed, e.g. "2.8") is a measured ratio or its inverse, rounded to the
    digits printed."""
    digits = len(figure.split(".")[1]) if "." in figure else 0
    return any(f"{v:.{digits}f}" == figure for r in ratios if r for v in (r, 1 / r))


def test_quoted_ratios_parse_ranges_and_skip_targets():
    row = ("ours 2.8× POT, 1.07-1.12x a step, 3.0–3.2× an L1 step (target 2.2×: missed) "
           "in 512 × 1024 blocks, not the 3x wanted")
    assert quoted_ratios(row) == ["2.8", "1.07", "1.12", "3.0", "3.2"]
    assert holds("1.8", [0.5555]) and holds("2.80", [2.8]) and not holds("2.8", [2.7])


def test_readme_figures_are_in_results():
    rows = json.loads((ROOT / "benchmarks" / "results.json").read_text())["rows"]
    missing = []
    for line in (ROOT / "README.md").read_text().splitlines():
        method = re.search(r"`iclr25\.(\w+)`", line)
        if LINK not in line or method is None:
            continue
        ratios = [r["ratio"] for r in rows if r["method"].startswith(method[1])]
        missing += [f"{method[1]}: {f}×" for f in quoted_ratios(line) if not holds(f, ratios)]
    assert not missing, ("README quotes figures that benchmarks/results.json does not hold "
                         f"(re-read them from RESULTS.md): {missing}")
