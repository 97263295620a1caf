import json

import matplotlib
import pytest
import torch

from iclr25.claims import Paper
from iclr25.report import environment, read_results, summary_figure, write_report
from iclr25.runner import ExperimentRecord
from iclr25.verdicts import ClaimResult

PAPER = Paper(number=3, short="mm", title="A Paper | With Pipe", authors="A. Author",
              arxiv="2401.00001", code="owner/repo")


def _result(cid, status, measured, experiment="mm.exp", threshold=0.8, direction=">=",
            error=None):
    return ClaimResult(claim_id=cid, method="mm", experiment=experiment, sentence="X beats Y.",
                       metric="accuracy gain", unit="points", paper_figure="0.91 (Table 2)",
                       threshold=threshold, direction=direction, measured=measured,
                       holds=status == "holds", status=status, error=error)


def _record(eid="mm.exp", seconds=9.87, error=None, figures=()):
    return ExperimentRecord(id=eid, method="mm", scale="quick", seed=0, device="cpu",
                            seconds=seconds, setting={"steps": 500, "wds": [0.0, 0.01]},
                            scalars=[("gain", 0.123456789, "points"), ("per_seed", [1, 2], "")],
                            tables=[{"title": "by wd", "columns": ["wd", "score"],
                                     "rows": [[0.0, 0.3333333333], [0.01, 0.6666666666]]}],
                            figures=list(figures), error=error)


@pytest.fixture
def written(tmp_path):
    fig = tmp_path / "figures" / "mm.exp.curve.png"
    fig.parent.mkdir()
    fig.write_bytes(b"\x89PNG")
    records = [_record(figures=[str(fig)]),
               _record("mm.broken", 0.5, error="Traceback...\nRuntimeError: boom")]
    results = [_result("mm.a", "holds", 0.9), _result("mm.b", "fails", 0.5),
               _result("mm.c", "error", None, experiment="mm.broken",
                       error="experiment mm.broken failed")]
    path = write_report(records, results, tmp_path, environment(0, "quick"), {"mm": PAPER})
    return tmp_path, path.read_text(), records, results


def test_top_table_marks_quick_verdicts_as_smoke_and_shared_time_once(written):
    _, text, _, _ = written
    assert "| claim | measured | vs | threshold | verdict | why | seconds |" in text
    rows = [ln for ln in text.splitlines() if ln.startswith("| `mm.")]
    assert rows[0] == ("| `mm.a` | 0.9 points | - | ≥ 0.8 points | smoke: holds | meets it by "
                       "0.1 | 9.9 |")
    assert rows[1] == ("| `mm.b` | 0.5 points | - | ≥ 0.8 points | smoke: **fails** | short by "
                       "0.3 | shared |")
    assert rows[2] == ("| `mm.c` | - | - | ≥ 0.8 points | smoke: **error** | the experiment "
                       "raised | 0.5 |")
    assert ("3 claims at scale `quick`, seed 0, device cpu, training budget ×1, 1 draw(s) per "
            "experiment: 1 holds, 1 fails, 0 unsettled, 0 inconclusive, 0 uninformative, "
            "1 error") in text
    assert "Quick scale is a smoke test" in text


def test_full_report_shows_baseline_control_and_deviations(tmp_path):
    compared = _result("mm.a", "holds", 0.1, threshold=0.05)
    compared.baseline, compared.ours, compared.baseline_value = "plain", 0.97, 0.87
    unsure = _result("mm.b", "inconclusive", 0.3)
    unsure.baseline, unsure.control_doc, unsure.control_ok = "IG+M", "IG+M imitates.", False
    unsure.control_read = {"igm_factor": 1.4}
    unsure.reason = "control failed: IG+M imitates."
    rec = _record()
    rec.deviations = ["30 of 300 steps: CPU budget"]
    text = write_report([rec], [compared, unsure], tmp_path,
                        environment(0, "full", jobs=2, threads=1, wall_seconds=12.0,
                                    experiment_seconds=20.0)).read_text()
    rows = [ln for ln in text.splitlines() if ln.startswith("| `mm.")]
    assert rows[0] == ("| `mm.a` | 0.1 points | ours 0.97 vs plain 0.87 | ≥ 0.05 points | "
                       "holds | meets it by 0.05 | 9.9 |")
    assert rows[1] == ("| `mm.b` | 0.3 points | vs IG+M | ≥ 0.8 points | *inconclusive* | "
                       "control failed (igm_factor = 1.4) | shared |")
    assert "1 holds, 0 fail, 0 unsettled, 1 inconclusive, 0 uninformative, 0 errors" in text
    assert "smoke" not in text
    # the reading of a failed control is printed once, in the why (issue 74)
    assert "Control (**failed**): IG+M imitates.\n" in text
    assert "Why: The control failed (IG+M imitates); it read igm_factor = 1.4." in text
    assert text.count("igm_factor = 1.4") == 2  # the why line and the table's why column
    assert "- 30 of 300 steps: CPU budget" in text
    assert "Wall time 12 s with 2 job(s) of 1 thread(s)" in text


def test_method_section_reads_as_tables(written):
    _, text, _, _ = written
    assert "## 3. A Paper | With Pipe (`iclr25.mm`)" in text
    assert "[arXiv 2401.00001](https://arxiv.org/abs/2401.00001)" in text
    assert "### Experiment `mm.exp` (9.9 s, cpu)" in text
    assert "| steps | 500 |" in text and "| wds | [0, 0.01] |" in text
    assert "| gain | 0.1235 | points |" in text  # rounded to 4 significant figures
    assert "| 0 | 0.3333 |" in text and "0.3333333333" not in text
    assert text.count("![mm.exp.curve](figures/mm.exp.curve.png)") == 1
    assert "RuntimeError: boom" in text
    assert "{" not in text.split("## Environment")[0]  # no raw JSON in the body
    assert "| torch |" in text and "| numpy |" in text


def test_each_claim_line_carries_its_ladder_trend():
    """A hold has no why, so its trend gets its own line; a non-hold's joins its why; a
    claim the ladder did not run gets neither."""
    from iclr25.report import method_lines

    results = [_result("mm.a", "holds", 0.9), _result("mm.b", "fails", 0.5),
               _result("mm.c", "holds", 0.95)]
    trends = {"mm.a": "stops holding at K=2", "mm.b": "approaching (crossing near K≈8)"}
    text = "\n".join(method_lines("mm", [], results, False, trends))
    a, b, c = text.split("\n- **")[1:]
    assert a.startswith("`mm.a`") and a.endswith("\n  Ladder: stops holding at K=2.")
    assert b.startswith("`mm.b`") and "; ladder: approaching (crossing near K≈8)." in b
    assert "adder" not in c
    assert "adder" not in "\n".join(method_lines("mm", [], results, False))


def test_results_json_keeps_full_precision_and_reads_back(written):
    out, _, records, results = written
    data = json.loads((out / "results.json").read_text())
    assert data["experiments"][0]["scalars"][0][1] == 0.123456789
    assert data["experiments"][0]["figures"] == ["figures/mm.exp.curve.png"]
    env, recs, res, papers = read_results(out / "results.json")
    assert res == results and env["seed"] == 0 and papers["mm"]["title"] == PAPER.title
    assert [r.id for r in recs] == ["mm.exp", "mm.broken"]


def test_read_results_refuses_other_json(tmp_path):
    bad = tmp_path / "r.json"
    bad.write_text('{"results": []}')
    with pytest.raises(ValueError, match="not an iclr25 results.json"):
        read_results(bad)
    bad.write_text("not json")
    with pytest.raises(ValueError, match="not JSON"):
        read_results(bad)


def test_summary_shows_value_against_threshold_in_unit(tmp_path):
    results = [_result("mm.a", "holds", 0.9), _result("mm.d", "holds", -0.3, threshold=0.0,
                                                      direction="<=")]
    assert summary_figure(results, tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    assert summary_figure([_result("mm.c", "error", None)], tmp_path / "n.png") is None


def test_environment_lists_core_and_extra_versions():
    env = environment(1, "full", "cpu")
    assert {"torch", "numpy", "scipy", "matplotlib"} <= set(env["packages"])
    assert env["scale"] == "full" and env["device"] == "cpu"
    # the CPU kernels' instruction set, which moves values between machines (README)
    assert env["cpu_capability"] == torch.backends.cpu.get_cpu_capability()


def test_report_leaves_matplotlib_backend_alone(tmp_path):
    before = matplotlib.get_backend()
    matplotlib.use("svg")  # a backend other than Agg, so switching it would show
    try:
        write_report([_record()], [_result("mm.a", "holds", 0.9)], tmp_path,
                     environment(0, "quick"))
        assert (tmp_path / "summary.png").read_bytes()[:4] == b"\x89PNG"
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
