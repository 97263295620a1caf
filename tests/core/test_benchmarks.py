"""The benchmark runner parses its options and every benchmark exposes its entry point.

Nothing is timed here: benchmarks run through ``python benchmarks/run_all.py``, not the tests.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    sys.path.insert(0, str(BENCH))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


@pytest.fixture(scope="module")
def run_all():
    return _load("run_all")


def test_run_all_parses_its_options(run_all, tmp_path):
    args = run_all.parse_args(["--quick", "--only", "toss", "v3", "--gate", "nice -n 10",
                               "--timeout", "60", "--out", str(tmp_path)])
    assert args.quick and args.only == ["toss", "v3"] and args.gate == "nice -n 10"
    assert args.timeout == 60 and args.out == tmp_path
    defaults = run_all.parse_args([])
    assert not defaults.quick and defaults.only is None and defaults.gate == ""


def test_run_all_rejects_an_unknown_benchmark(run_all, capsys):
    with pytest.raises(SystemExit):
        run_all.parse_args(["--only", "nope"])
    assert "unknown benchmark" in capsys.readouterr().err


def test_run_all_lists_every_method_benchmark(run_all):
    methods = {p.name for p in (BENCH.parent / "src" / "iclr25").iterdir()
               if (p / "claim.py").exists()}
    # one benchmark per method, plus method-prefixed extras (oft_sparse), plus the training
    # engine's (train_scale, train_memory)
    assert methods <= set(run_all.BENCHMARKS) and run_all.ENGINE <= set(run_all.BENCHMARKS)
    assert {b.split("_")[0] for b in set(run_all.BENCHMARKS) - run_all.ENGINE} == methods


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCH.glob("*.py")
                                        if not p.stem.startswith("_")
                                        and p.stem not in ("run_all", "reproduce")))
def test_benchmark_exposes_main_and_records_rows(name):
    tree = ast.parse((BENCH / f"{name}.py").read_text())
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert mains, f"benchmarks/{name}.py has no top-level main()"
    assert [a.arg for a in mains[0].args.args] == ["argv"], "main(argv=None) takes the options"
    # its --quick option, and its rows go through the shared helper under its own name
    src = (BENCH / f"{name}.py").read_text()
    assert '"--quick"' in src
    assert f'M = "{name}"' in src
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module == "_timing" for a in n.names}
    assert imported & {"row", "timed_row"}, f"{name}.py records no row through _timing"


def test_row_ratio_and_target(tmp_path, monkeypatch):
    timing = _load("_timing")
    out = tmp_path / "rows.jsonl"
    monkeypatch.setenv(timing.ROWS_ENV, str(out))
    r = timing.row("m", "case", 2.0, 6.0, peer_name="p", unit="ms", target=2)
    assert r["ratio"] == 3.0 and r["met"] is True and r["target"] == "≥ 2×"
    r = timing.row("m", "rate", 2.0, 4.0, peer_name="p", unit="1/s", better="higher", target=1)
    assert r["ratio"] == 0.5 and r["met"] is False
    import numpy as np  # numpy scalars (figures computed with numpy) are written as JSON
    r = timing.row("m", "np", np.float64(2.0), np.float64(3.0), peer_name="p", unit="s",
                   target=1, met=np.bool_(True))
    assert r["met"] is True and isinstance(r["ratio"], float)
    assert len(out.read_text().splitlines()) == 3
    # figures that do not divide (an agreement in %): no ratio, the target bounds the figure
    r = timing.row("m", "agreement", 87.5, 87.5, peer_name="p", unit="%", better="higher",
                   ratio=False, target="≥ 90%", met=False)
    assert r["ratio"] is None and r["target"] == "≥ 90%" and r["met"] is False
    with pytest.raises(ValueError, match="ratio=False"):
        timing.row("m", "agreement", 87.5, 80.0, peer_name="p", unit="%", ratio=False, target=1)
    with pytest.raises(AssertionError, match="differ"):
        timing.agree([1.0, 2.0], [1.0, 2.1], atol=1e-3)
    assert timing.agree([1.0, 2.0], [1.0, 2.0 + 1e-12], atol=1e-9) < 1e-9


def _spin(n):
    return sum(i * i for i in range(n))


def test_py_times_counts_a_python_function():
    times = _load("_timing").py_times(lambda: _spin(200_000))
    mine = [v for k, v in times.items() if k.startswith("_spin (")]
    assert len(mine) == 1 and mine[0] > 0


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCH.glob("*.py")))
def test_benchmark_leaves_no_temporary_files(name):
    """Every temporary file or folder a benchmark makes is a ``with`` block's, removed when
    the block ends (oft_sparse once left a folder of DIMACS files per run)."""
    tree = ast.parse((BENCH / f"{name}.py").read_text())
    managed = {id(i.context_expr) for n in ast.walk(tree) if isinstance(n, ast.With)
               for i in n.items}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
             and n.func.value.id == "tempfile"]
    for c in calls:
        assert c.func.attr in {"TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile"}, (
            f"{name}.py: tempfile.{c.func.attr} leaves its file behind")
        assert id(c) in managed, f"{name}.py line {c.lineno}: tempfile.{c.func.attr} outside a with"


def test_results_md_states_the_run_and_the_notes(run_all, tmp_path):
    base = {"case": "c", "ours": 2.0, "peer": 1.0, "peer_name": "p", "unit": "s CPU",
            "ratio": 0.5, "target": "≥ 1×", "met": False, "load": 3.25, "date": "2026-12-07",
            "agreement": ""}
    rows = [base | {"method": "toss", "note": "median of 3"},
            base | {"method": "v3", "note": "median of 5; profile (torch.profiler): aten::mm"}]
    run = {"command": "python benchmarks/run_all.py --quick", "started": "2026-12-07T02:15",
           "finished": "2026-12-07T02:27", "seconds": 712.5, "load_before": 0.4,
           "load_after": 1.1, "cpus": 2}
    out = tmp_path / "RESULTS.md"
    run_all.write_markdown(out, {"toss": {"status": "ok", "rows": 1, "seconds": 1.0,
                                          "date": "2026-12-07T02:20"}}, rows, run)
    text = out.read_text()
    assert ("Run: `python benchmarks/run_all.py --quick`, 2026-12-07T02:15 to 2026-12-07T02:27, "
            "712.5 s wall; load average 0.4 before, 1.1 after, 2 CPUs.") in text
    assert "- **v3 | c**: median of 5; profile (torch.profiler): aten::mm" in text
    assert "toss | c**" not in text  # a bare "median of N" is no note
    assert "| toss | c | 2 s CPU | 1 s CPU (p) | 0.5× | ≥ 1× (missed) | 3.25 |" in text


def test_dispatch_note_counts_operators_and_products():
    """Operator calls per step, the matrix products among them, and a measured time spread
    over the calls."""
    import re

    import torch

    timing = _load("_timing")
    a = torch.rand(4, 4)

    def three_rounds():
        for _ in range(3):
            torch.mm(a, a)
            a.exp()

    note = timing.dispatch_note(three_rounds, 3, "round", 6e-6)
    calls = float(re.match(r"([\d.]+) operator calls per round \(1 matrix products\)", note)[1])
    assert calls >= 2  # at least the product and the exp, each round
    assert note.endswith(f"{6e-6 / calls * 1e6:.3g} µs per call (measured 0.006 ms per round)")
    assert "(0 matrix products)" in timing.dispatch_note(lambda: a.exp(), 1, "call")
