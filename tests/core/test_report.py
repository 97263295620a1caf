import json

from iclr25.claims import Result
from iclr25.report import environment, margin, read_results, write_report


def _result(cid, status, measured, error=None, figures=()):
    return Result(claim_id=cid, paper="Paper | A", sentence="X beats Y.", metric="acc",
                  paper_figure="0.91 (Table 2)", threshold=0.8, direction=">=",
                  measured=measured, holds=status == "holds", status=status, seconds=1.25,
                  seed=0, scale="quick", figures=list(figures), details={"per_seed": [1, 2]},
                  error=error)


def test_report_contents(tmp_path):
    fig = tmp_path / "figures" / "m.a.curve.png"
    fig.parent.mkdir()
    fig.write_bytes(b"\x89PNG")
    results = [_result("m.a", "holds", 0.9, figures=[str(fig)]),
               _result("m.b", "fails", 0.5),
               _result("m.c", "error", None, error="Traceback...\nRuntimeError: boom")]
    env = environment(seed=0, scale="quick")
    path = write_report(results, tmp_path, env)
    text = path.read_text()
    assert "3 claims at scale `quick`, seed 0: 1 hold, 1 do not hold, 1 errored." in text
    rows = [ln for ln in text.splitlines() if ln.startswith("| `m.")]
    assert len(rows) == 3
    assert "| 0.9 | >= 0.8 | yes | 1.2 |" in rows[0]  # 1.25 formats as 1.2 (banker's)
    assert "**no**" in rows[1] and "**error**" in rows[2]
    assert "Paper \\| A" in rows[0]  # a pipe in a cell is escaped
    assert "![m.a.curve](figures/m.a.curve.png)" in text
    assert "RuntimeError: boom" in text
    assert '"torch"' in text and "## Environment" in text
    assert (tmp_path / "summary.png").exists()
    assert read_results(tmp_path / "results.json") == results
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["environment"]["seed"] == 0 and data["environment"]["device"] in {"cpu", "cuda"}


def test_report_with_only_errors_has_no_summary(tmp_path):
    write_report([_result("m.c", "error", None, error="x")], tmp_path, environment(1, "full"))
    assert not (tmp_path / "summary.png").exists()
    assert "1 errored" in (tmp_path / "REPORT.md").read_text()


def test_margin_sign_follows_direction():
    r = _result("m.a", "holds", 0.9)
    assert abs(margin(r) - 0.125) < 1e-12  # (0.9 - 0.8) / 0.8
    r.direction, r.threshold, r.measured = ">=", -0.5, -0.2  # e.g. accuracy drop >= -0.5 pt
    assert margin(r) > 0
    r.direction, r.threshold, r.measured = "<=", 0.0, 0.3
    assert abs(margin(r) + 0.3) < 1e-12


def test_report_leaves_matplotlib_backend_alone(tmp_path):
    import matplotlib

    before = matplotlib.get_backend()
    matplotlib.use("svg")  # a backend other than Agg, so switching it would show
    try:
        write_report([_result("m.a", "holds", 0.9)], tmp_path, environment(0, "quick"))
        assert (tmp_path / "summary.png").read_bytes()[:4] == b"\x89PNG"
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
