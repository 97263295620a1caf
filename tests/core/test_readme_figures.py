"""README's (and the user guides') benchmark figures are read from the run that wrote
benchmarks/RESULTS.md and benchmarks/results.json: each figure is a mark (``<!--fig ...-->``)
that ``run_all.py`` re-renders from the rows after a run, RESULTS.md is that run's table, and a
ratio quoted outside a mark must still be one of the method's measured ratios. Nothing is timed
here."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
LINK = "[RESULTS](benchmarks/RESULTS.md)"
#: a ratio "2.8×", "1.07-1.12x", "3.0–3.2×" (not a product "512 × 1024"), unless it follows
#: words that make it a target or a bound ("target 10×", "the 3x wanted", "within 1.3×")
FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*[-–]\s*(\d+(?:\.\d+)?))?\s*[×x]"
                    r"(?![\w])(?!\s*\d)")
EXEMPT = re.compile(r"(target|ceiling is|floor of|within|has|bound|not the)\W*$", re.I)


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        import _quote
        import run_all
    finally:
        sys.path.remove(str(BENCH))
    return _quote, run_all


@pytest.fixture(scope="module")
def results():
    return json.loads((BENCH / "results.json").read_text())


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


ROWS = [{"method": "m", "case": "step B=64", "peer_name": "plain", "ratio": 0.8, "ours": 12.5,
         "peer": 10.0, "load": 1.84, "date": "2026-12-07"},
        {"method": "m", "case": "step B=128", "peer_name": "plain", "ratio": 0.5, "ours": 20.0,
         "peer": 10.0, "load": 2.31, "date": "2026-12-06"},
        {"method": "m", "case": "step B=128", "peer_name": "lib", "ratio": 25.04, "ours": 20.0,
         "peer": 500.8, "load": 2.31, "date": "2026-12-06"}]


def test_a_mark_renders_its_rows(bench):
    q, _ = bench
    assert q.render('ratio m "step B=64"', ROWS) == "0.8"
    assert q.render('inverse m "step B=*" peer="plain"', ROWS) == "1.25–2"
    assert q.render('ratio m "step B=128" peer="lib"', ROWS) == "25"
    assert q.render('peer m "step B=128" peer="lib"', ROWS) == "501"
    assert q.render('load m "*"', ROWS) == "1.8–2.3"
    assert q.render('date m "*"', ROWS) == "2026-12-06–2026-12-07"
    text = 'a <!--fig ratio m "step B=64"-->9<!--/fig--> b'
    assert q.fill(text, ROWS) == 'a <!--fig ratio m "step B=64"-->0.8<!--/fig--> b'
    assert q.stale(text, ROWS) == ['ratio m "step B=64": quoted \'9\', results hold \'0.8\'']
    assert q.stale(q.fill(text, ROWS), ROWS) == []


def test_a_bad_mark_is_refused(bench):
    q, _ = bench
    with pytest.raises(LookupError, match="no row of 'm'"):
        q.render('ratio m "step B=1"', ROWS)
    with pytest.raises(ValueError, match="FIELD METHOD"):
        q.render('speed m "step B=64"', ROWS)
    with pytest.raises(ValueError, match="FIELD METHOD"):
        q.render('ratio m "step B=64" colour="red"', ROWS)


def test_quoted_ratios_parse_ranges_and_skip_targets():
    row = ("ours 2.8× POT, 1.07-1.12x a step, 3.0–3.2× an L1 step (target 2.2×: missed) "
           "in 512 × 1024 blocks, not the 3x wanted")
    assert quoted_ratios(row) == ["2.8", "1.07", "1.12", "3.0", "3.2"]
    assert holds("1.8", [0.5555]) and holds("2.80", [2.8]) and not holds("2.8", [2.7])


def test_readme_and_guide_marks_are_the_results(bench, results):
    q, _ = bench
    docs = q.documents(ROOT)
    assert ROOT / "README.md" in docs and len(docs) > 10
    stale = [f"{d.relative_to(ROOT)}: {s}" for d in docs
             for s in q.stale(d.read_text(), results["rows"])]
    assert not stale, ("README or a guide quotes figures that benchmarks/results.json does not "
                       "hold (run `python benchmarks/run_all.py --quick`, which re-renders "
                       f"them): {stale}")
    assert q.MARK.search((ROOT / "README.md").read_text())


def test_results_md_is_the_table_of_results_json(bench, results, tmp_path):
    _, run_all = bench
    out = tmp_path / "RESULTS.md"
    run_all.write_markdown(out, results["runs"], results["rows"], results.get("run"))
    assert out.read_text() == (BENCH / "RESULTS.md").read_text(), (
        "benchmarks/RESULTS.md is not the table of benchmarks/results.json: regenerate both "
        "with one `python benchmarks/run_all.py --quick`")


def test_readme_unmarked_ratios_are_in_results(bench, results):
    q, _ = bench
    missing = []
    for line in (ROOT / "README.md").read_text().splitlines():
        method = re.search(r"`iclr25\.(\w+)`", line)
        if LINK not in line or method is None:
            continue
        ratios = [r["ratio"] for r in results["rows"] if r["method"].startswith(method[1])]
        free = q.MARK.sub("", line)
        missing += [f"{method[1]}: {f}×" for f in quoted_ratios(free) if not holds(f, ratios)]
    assert not missing, ("README quotes figures that benchmarks/results.json does not hold "
                         f"(mark them: <!--fig ratio METHOD \"CASE\"-->): {missing}")
