"""Training budgets, trivial arms, competitors and the measured why (issue 50)."""

import json
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from iclr25 import claims, verdicts
from iclr25.claims import Comparison, Context, Evidence, Paper, Scale, Setting, claim, experiment
from iclr25.cli import app
from iclr25.ladder import parse_budgets, read_ladder, run_ladder, trend, write_ladder
from iclr25.runner import run

runner = CliRunner()


@pytest.fixture(autouse=True)
def private_registry(monkeypatch):
    monkeypatch.setattr(claims, "_CLAIMS", {})
    monkeypatch.setattr(claims, "_EXPERIMENTS", {})


@dataclass(frozen=True)
class Steps(Setting):
    budget_fields = ("steps", "stages")
    steps: int
    stages: tuple[int, ...] = (1, 3)
    lr: float = 0.1


@dataclass
class Ev(Evidence):
    ours: float = 0.0
    base: float = 0.0
    untrained: float = 0.0
    random_arm: float = 0.0
    spread_arm: float = 0.0


def toy(seen=None):
    """'Training' for ``steps`` steps: ours learns 0.01 per step, the baseline 0.005."""
    @experiment(quick=Steps(steps=10), full=Steps(steps=40))
    def learn(setting: Steps, ctx: Context) -> Ev:
        if seen is not None:
            seen.append((setting.steps, setting.stages, ctx.seed))
        return Ev(ours=0.01 * setting.steps, base=0.005 * setting.steps, untrained=0.0,
                  random_arm=0.5, spread_arm=0.01 * ctx.seed)
    return learn


def gain(exp, cid="zz.gain", threshold=0.3, **kw):
    return claim(cid, experiment=exp, sentence="S", metric="gain", unit="points",
                 paper_figure="-", threshold=threshold, baseline="plain", **kw)(
        lambda ev: Comparison(ev.ours, ev.base, ev.ours - ev.base))


def test_budget_scales_every_budget_field_and_is_recorded(tmp_path):
    seen = []
    c = gain(toy(seen))
    (rec,), (r,) = run([c], Scale.full, 0, tmp_path, budget=2.5)
    assert seen == [(100, (3, 8), 0)]  # 40 x 2.5; (1, 3) x 2.5 rounded half up, lr untouched
    assert rec.budget == 2.5 and r.budget == 2.5
    assert rec.setting["steps"] == 100 and rec.setting["lr"] == 0.1
    assert rec.deviations[-1] == ("training budget x2.5 (--budget): steps 40 -> 100, "
                                  "stages (1, 3) -> (3, 8)")
    assert json.loads(json.dumps(rec.to_dict()))["budget"] == 2.5


def test_budget_one_is_the_setting_itself_and_counts_stay_positive():
    s = Steps(steps=3)
    assert s.scaled(1) is s
    assert s.scaled(0.01).steps == 1 and s.scaled(0.01).stages == (1, 1)
    assert Steps(steps=1).scaled(0.5).steps == 1


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "2", True])
def test_bad_budget_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="budget must be a positive number"):
        Steps(steps=3).scaled(bad)


def test_a_setting_without_budget_fields_cannot_register():
    @dataclass(frozen=True)
    class Silent(Setting):
        n: int

    with pytest.raises(TypeError, match="must declare budget_fields"):
        experiment(quick=Silent(1), full=Silent(2))(lambda s, c: None)

    @dataclass(frozen=True)
    class Wrong(Setting):
        budget_fields = ("epochs",)
        n: int

    with pytest.raises(TypeError, match="must name fields"):
        experiment(quick=Wrong(1), full=Wrong(2))(lambda s, c: None)


def test_trivial_arm_meeting_the_threshold_is_uninformative(tmp_path):
    exp = toy()
    informative = gain(exp, "zz.a", trivial=lambda ev: ev.base - ev.base,
                       trivial_doc="the baseline against itself")
    vacuous = gain(exp, "zz.b", trivial=lambda ev: ev.random_arm, trivial_doc="a random arm")
    _, (a, b) = run([informative, vacuous], Scale.full, 0, tmp_path, budget=2)
    assert (a.status, a.measured, a.trivial_value) == ("holds", pytest.approx(0.4), 0.0)
    assert (b.status, b.holds, b.trivial_value) == ("uninformative", False, 0.5)
    assert b.why.startswith("The trivial arm (a random arm) reads 0.5, which also meets ≥ 0.3")


def test_a_baseline_that_did_not_learn_is_inconclusive_with_its_reading(tmp_path):
    c = gain(toy(), control=lambda ev: ev.base - ev.untrained >= 0.5,
             control_doc="the baseline beats its untrained self by 0.5 points")
    _, (r,) = run([c], Scale.full, 0, tmp_path)  # base 0.2: it did not learn enough
    assert r.status == "inconclusive" and r.control_ok is False
    assert r.control_read == {"base": 0.2, "untrained": 0.0}
    assert r.why == ("The control failed (the baseline beats its untrained self by 0.5 "
                     "points); it read base = 0.2, untrained = 0.")


def test_a_failing_claim_names_the_strongest_competitor(tmp_path):
    c = gain(toy(), competitors=lambda ev: {"random": ev.random_arm, "weak": 0.0})
    _, (r,) = run([c], Scale.full, 0, tmp_path)  # ours 0.4 - base 0.2 = 0.2 < 0.3
    assert r.status == "fails" and r.competitors == {"random": 0.5, "weak": 0.0}
    assert r.why == ("0.2 misses ≥ 0.3 by 0.1 (ours 0.4 vs plain 0.2); the strongest "
                     "competitor, random, reads 0.5.")
    assert verdicts.why(r, "approaching").endswith("; ladder: approaching.")


def test_holds_has_no_why_and_competitors_below_ours_are_not_named(tmp_path):
    c = gain(toy(), threshold=0.1, competitors=lambda ev: {"weak": 0.0})
    _, (r,) = run([c], Scale.full, 0, tmp_path)
    assert r.status == "holds" and r.why is None
    assert verdicts.strongest_competitor(r) is None


def test_trivial_needs_its_sentence():
    with pytest.raises(ValueError, match="trivial and trivial_doc go together"):
        gain(toy(), trivial=lambda ev: 0.0)


# --- the trend rule --------------------------------------------------------------------------

B = (0.5, 1, 2, 4)


@pytest.mark.parametrize(("values", "direction", "spread", "expected"), [
    ((0.1, 0.2, 0.35, 0.5), ">=", 0.01, "crosses at K=2"),
    ((0.4, 0.2, 0.35, 0.5), ">=", 0.01, "crosses at K=2"),       # met at 0.5, lost, met again
    ((0.31, 0.35, 0.4, 0.5), ">=", 0.01, "holds throughout"),
    ((0.1, 0.15, 0.2, 0.25), ">=", 0.01, "approaching"),
    ((0.25, 0.2, 0.15, 0.1), ">=", 0.01, "receding"),
    ((0.1, 0.1, 0.1, 0.1), ">=", 0.0, "flat"),
    ((0.1, 0.12, 0.11, 0.13), ">=", 0.05, "flat"),             # within the seed spread
    ((0.1, 0.12, 0.11, 0.13), ">=", 0.001, "approaching"),     # the same, beyond it
    ((2.0, 1.5, 1.2, 0.9), "<=", 0.01, "crosses at K=4"),
    ((2.0, 1.8, 1.6, 1.4), "<=", 0.01, "approaching"),
    ((1.4, 1.6, 1.8, 2.0), "<=", 0.01, "receding"),
    ((0.1, None, float("nan"), 0.2), ">=", 0.01, "approaching"),
    ((None, None, 0.1, float("nan")), ">=", 0.01, "no trend (1 usable rung)"),
])
def test_trend_rule_on_known_sequences(values, direction, spread, expected):
    threshold = 0.3 if direction == ">=" else 1.0
    assert trend(B, values, threshold, direction, spread) == expected


@pytest.mark.parametrize("text", ["", "1,,2", "0,1", "-1", "a,1", "1,1", "inf", "nan"])
def test_bad_budgets_are_refused_naming_the_option(text):
    with pytest.raises(ValueError, match="--budgets"):
        parse_budgets(text)


def test_budgets_are_sorted():
    assert parse_budgets("4, 0.5,1") == (0.5, 1.0, 4.0)


# --- the ladder ------------------------------------------------------------------------------

def test_ladder_runs_each_budget_and_measures_the_seed_spread(tmp_path):
    seen = []
    exp = toy(seen)
    c = gain(exp, control=lambda ev: ev.base > ev.untrained, control_doc="the baseline learned",
             competitors=lambda ev: {"random": ev.random_arm})
    s = claim("zz.spread", experiment=exp, sentence="S", metric="m", unit="", paper_figure="-",
              threshold=1.0)(lambda ev: ev.spread_arm)
    lad = run_ladder([c, s], (0.5, 1, 2), Scale.quick, 3, tmp_path, spread_seeds=2)
    # one run per budget at seed 3, and a second seed at the smallest budget
    assert sorted(seen) == [(5, (1, 2), 3), (5, (1, 2), 4), (10, (1, 3), 3), (20, (2, 6), 3)]
    g = lad["claims"]["zz.gain"]
    assert g["values"] == pytest.approx([0.025, 0.05, 0.1])
    assert g["arms"]["ours"] == pytest.approx([0.05, 0.1, 0.2])
    assert g["arms"]["random"] == [0.5, 0.5, 0.5]
    assert g["spread"] == 0.0 and g["trend"] == "approaching"  # the control holds throughout
    sp = lad["claims"]["zz.spread"]
    assert sp["spread"] == pytest.approx(0.01) and sp["trend"] == "flat"
    path = write_ladder(lad, tmp_path, {"wall_seconds": 1.0})
    text = path.read_text()
    assert "| `zz.gain` | approaching | 0.025 | 0.05 | 0.1 | 0 | ≥ 0.3 |" in text
    for cid in ("zz.gain", "zz.spread"):
        assert (tmp_path / "figures" / f"ladder.{cid}.png").read_bytes()[:4] == b"\x89PNG"
    assert read_ladder(tmp_path / "ladder.json") == {"zz.gain": "approaching",
                                                     "zz.spread": "flat"}


def test_the_trend_says_where_a_verdict_could_not_stand(tmp_path):
    exp = toy()
    c = gain(exp, control=lambda ev: ev.base >= 0.1, control_doc="the baseline learned",
             trivial=lambda ev: ev.random_arm, trivial_doc="a random arm")
    lad = run_ladder([c], (0.5, 1, 4), Scale.full, 0, tmp_path, spread_seeds=1)
    # base 0.1 at K=0.5 (control passes), ours-base 0.1/0.2/0.8; random 0.5 meets 0.3 at K=4
    assert lad["claims"]["zz.gain"]["trend"] == "crosses at K=4; uninformative at K=4"
    lad = run_ladder([gain(exp, "zz.b", control=lambda ev: ev.base >= 0.2,
                           control_doc="the baseline learned")], (0.5, 1, 4), Scale.full, 0,
                     tmp_path, spread_seeds=1)
    assert lad["claims"]["zz.b"]["trend"] == "crosses at K=4; inconclusive at K=0.5"


def test_read_ladder_refuses_other_json(tmp_path):
    p = tmp_path / "results.json"
    p.write_text(json.dumps({"claims": []}))
    with pytest.raises(ValueError, match="not a ladder.json"):
        read_ladder(p)


# --- the command line -------------------------------------------------------------------------

@pytest.fixture
def cli_registry(monkeypatch):
    reg = {}
    monkeypatch.setattr(claims, "discover", lambda: reg)
    monkeypatch.setattr(claims, "papers", lambda: {"zz": Paper(1, "zz", "Toy paper", "A")})
    c = gain(toy())
    reg[c.id] = c
    return reg


def _one_error_line(out, *words):
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), out.output
    assert all(w in lines[0] for w in words), lines[0]


@pytest.mark.parametrize("bad", ["0", "-2", "abc", "nan", "inf"])
def test_reproduce_refuses_a_bad_budget(cli_registry, tmp_path, bad):
    _one_error_line(runner.invoke(app, ["reproduce", "--budget", bad, "--out", str(tmp_path)]),
                    "--budget")
    assert not (tmp_path / "results.json").exists()


def test_reproduce_records_the_budget(cli_registry, tmp_path):
    out = runner.invoke(app, ["reproduce", "--scale", "full", "--budget", "2", "--out",
                              str(tmp_path)])
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["environment"]["budget"] == 2.0 and data["experiments"][0]["budget"] == 2.0
    assert data["claims"][0]["measured"] == pytest.approx(0.4)  # 80 steps x 0.005
    text = (tmp_path / "REPORT.md").read_text()
    assert "training budget ×2: 1 holds" in text and "| budget (× the budget fields) | 2 |" in text


@pytest.mark.parametrize("bad", ["", "0,1", "1,1", "x", "1,-2"])
def test_ladder_refuses_bad_budgets(cli_registry, tmp_path, bad):
    _one_error_line(runner.invoke(app, ["ladder", "--budgets", bad, "--out", str(tmp_path)]),
                    "--budgets")


def test_ladder_refuses_an_unknown_name(cli_registry, tmp_path):
    _one_error_line(runner.invoke(app, ["ladder", "nope", "--out", str(tmp_path)]), "nope")


def test_ladder_then_report_with_its_trends(cli_registry, tmp_path):
    out = runner.invoke(app, ["reproduce", "--scale", "full", "--out", str(tmp_path / "r")])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["ladder", "--scale", "full", "--budgets", "0.5,1,2",
                              "--spread-seeds", "1", "--out", str(tmp_path / "l")])
    assert out.exit_code == 0, out.output
    assert "zz.gain: crosses at K=2" in out.output
    assert (tmp_path / "l" / "LADDER.md").exists()
    out = runner.invoke(app, ["report", str(tmp_path / "r" / "results.json"), "--ladder",
                              str(tmp_path / "l" / "ladder.json")])
    assert out.exit_code == 0, out.output
    text = (tmp_path / "r" / "REPORT.md").read_text()
    assert ("Why: 0.2 misses ≥ 0.3 by 0.1 (ours 0.4 vs plain 0.2); ladder: crosses at K=2."
            in text)


def test_report_refuses_a_ladder_that_is_not_one(cli_registry, tmp_path):
    runner.invoke(app, ["reproduce", "--out", str(tmp_path)])
    _one_error_line(runner.invoke(app, ["report", str(tmp_path / "results.json"), "--ladder",
                                        str(tmp_path / "results.json")]), "--ladder")
