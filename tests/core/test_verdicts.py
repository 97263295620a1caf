"""The verdict table is the one list of verdicts: every consumer reads it (issue 67)."""

import ast
import sys
from pathlib import Path

import matplotlib.colors
import matplotlib.figure
import pytest

import iclr25
from iclr25 import cli, ladder, report, verdicts
from iclr25.claims import Context, Evidence, Setting, claim, experiment, scalar
from iclr25.runner import ExperimentRecord
from iclr25.verdicts import STATUSES, VERDICTS, ClaimResult, Verdict, count_line, judge

DOCS_EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"
# a sixth verdict, as a later issue adds one: only the table changes
UNSETTLED = Verdict("unsettled", "*unsettled*", "tab:purple", "unsettled", "unsettled",
                    "the draws disagree about the verdict", False)


def _result(cid, status, measured=0.5):
    return ClaimResult(claim_id=cid, method="mm", experiment="mm.exp", sentence="S.",
                       metric="m", unit="u", paper_figure="-", threshold=0.8, direction=">=",
                       measured=measured, holds=status == "holds", status=status)


def test_the_table_names_each_verdict_once_with_a_label_and_a_colour():
    assert STATUSES == tuple(v.name for v in VERDICTS)
    assert len(set(STATUSES)) == len(STATUSES) == 5
    for v in VERDICTS:
        assert v.name in v.label and matplotlib.colors.is_color_like(v.colour)
        assert v.phrase and v.plural and v.meaning
    assert [v.name for v in VERDICTS if v.on_figure] == ["holds", "fails"]
    assert verdicts.verdict("error").label == "**error**"
    with pytest.raises(KeyError, match="errored"):
        verdicts.verdict("errored")


def test_the_count_line_names_every_verdict_with_its_number():
    assert count_line(["holds", "error", "error", "fails", "fails"]) == (
        "1 holds, 2 fail, 0 inconclusive, 0 uninformative, 2 errors")
    assert count_line([]) == "0 hold, 0 fail, 0 inconclusive, 0 uninformative, 0 errors"
    with pytest.raises(KeyError, match="nope"):
        count_line(["nope"])


def _consumer_sources():
    mods = [report, ladder, cli]
    sys.path.insert(0, str(DOCS_EXT))
    try:
        import iclr25_docs
    finally:
        sys.path.remove(str(DOCS_EXT))
    return [Path(m.__file__) for m in (*mods, iclr25_docs)]


@pytest.mark.parametrize("path", _consumer_sources(), ids=lambda p: p.name)
def test_no_consumer_spells_a_verdict_out(path):
    # a verdict's name written as a string in a consumer is a second list of verdicts
    names = set(STATUSES)
    spelled = [(n.lineno, n.value) for n in ast.walk(ast.parse(path.read_text()))
               if isinstance(n, ast.Constant) and n.value in names]
    assert not spelled, spelled


def test_every_consumer_shows_a_verdict_added_to_the_table(monkeypatch, tmp_path):
    monkeypatch.setattr(verdicts, "VERDICTS", (*VERDICTS, UNSETTLED))
    results = [_result(f"mm.{v.name}", v.name) for v in verdicts.VERDICTS]
    # the report: its count sentence, each claim's label, the chart's colour and legend
    legends = []
    monkeypatch.setattr(matplotlib.figure.Figure, "legend",
                        lambda self, handles, **kw: legends.append([h.get_label()
                                                                    for h in handles]))
    assert report.summary_figure(results, tmp_path / "s.png") is not None
    assert set(STATUSES) | {"unsettled"} <= set(legends[0])
    env = {"scale": "full", "seed": 0, "device": "cpu", "packages": {}}
    text = report.render(env, [], results, {}, tmp_path)
    assert "1 uninformative, 1 error, 1 unsettled." in text
    for v in verdicts.VERDICTS:
        assert f"| {v.label} |" in text
    # the command line's count line is the same function
    assert count_line([r.status for r in results]).endswith("1 unsettled")
    # the ladder notes the rungs whose verdict does not stand on the figure alone
    c = _claim()
    rungs = [ladder.Rung(b, 0, _result(c.id, s, 0.1 * b))
             for b, s in ((1.0, "fails"), (2.0, "unsettled"), (4.0, "error"))]
    got = ladder._ladder_claim(c, rungs, 0)
    assert got.trend.endswith("; error at K=4; unsettled at K=2"), got.trend
    # the documentation's list
    sys.path.insert(0, str(DOCS_EXT))
    try:
        import iclr25_docs
    finally:
        sys.path.remove(str(DOCS_EXT))
    listed = iclr25_docs.verdicts_list()
    assert "one of 6 verdicts" in listed
    assert all(f"- **{v.name}**: {v.meaning}." in listed for v in verdicts.VERDICTS)


def _claim():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class S(Setting):
        budget_fields = ("n",)
        n: int

    @dataclass
    class E(Evidence):
        v: float = scalar("u")

    @experiment(quick=S(1), full=S(2))
    def exp(setting: S, ctx: Context) -> E:
        return E(v=0.0)

    c = claim("verdicttoy.c", experiment=exp, sentence="S", metric="m", unit="u",
              paper_figure="-", threshold=0.8)(lambda ev: ev.v)
    iclr25.claims.unregister("verdicttoy")
    iclr25.claims.unregister("test_verdicts")
    return c


def test_judge_needs_no_record():
    c = _claim()
    r = judge(c, None)
    assert r.status == "error" and r.error == f"experiment {c.experiment.id} failed"
    assert r.budget == 1.0 and r.why == "The experiment raised before giving a figure."
    rec = ExperimentRecord(c.experiment.id, "verdicttoy", "full", 0, "cpu", 1.0, {},
                           error="boom", budget=2.0)
    r = judge(c, None, rec)
    assert r.error.endswith("failed:\nboom") and r.budget == 2.0


def test_readme_names_every_verdict():
    # README cannot read the table: this keeps its sentence from going stale
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    para = readme.split("**Every verdict says why.**", 1)[1].split("\n\n", 1)[0]
    assert f"one of {len(VERDICTS)}:" in " ".join(para.split()).replace("five", "5")
    assert all(f"**{v.name}**" in para for v in VERDICTS)
