"""Verdicts no single draw decides (issue 74): the draw rule, --draws, per-draw values, the
why column and the draw that errors."""

import json
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from iclr25 import claims, report
from iclr25.claims import Context, Evidence, Paper, Scale, Setting, claim, experiment
from iclr25.cli import app
from iclr25.runner import DRAW_STRIDE, run
from iclr25.verdicts import ClaimResult, brief, combine, settle

runner = CliRunner()


@pytest.fixture(autouse=True)
def private_registry(monkeypatch):
    monkeypatch.setattr(claims, "_CLAIMS", {})
    monkeypatch.setattr(claims, "_EXPERIMENTS", {})


def _draw(v, trivial=None, control=None, status=None, threshold=0.8):
    """One draw's judged result with figure ``v``."""
    ok = v >= threshold and not (trivial is not None and trivial >= threshold)
    return ClaimResult(
        claim_id="zz.c", method="zz", experiment="zz.e", sentence="S.", metric="m", unit="u",
        paper_figure="-", threshold=threshold, direction=">=", measured=v, holds=ok,
        status=status or ("holds" if ok else "fails"), trivial_value=trivial,
        trivial_doc=None if trivial is None else "a random arm", control_ok=control,
        control_doc=None if control is None else "the baseline learned",
        control_read={} if control is None else {"base": 0.5})


# --- the rule, on known sequences ---------------------------------------------------------------

def test_a_clear_hold_and_a_clear_fail():
    r = combine([_draw(v) for v in (0.90, 0.92, 0.88)])
    assert r.status == "holds" and r.holds and r.why is None
    assert r.measured == pytest.approx(0.9) and r.se == pytest.approx(0.02 / 3**0.5)
    assert r.draws == [0.90, 0.92, 0.88]
    r = combine([_draw(v) for v in (0.50, 0.52, 0.48)])
    assert r.status == "fails" and r.why.startswith("0.5 misses ≥ 0.8 by 0.3")


def test_within_one_standard_error_is_unsettled_with_the_draws_that_would_settle_it():
    # mean 0.8167, sample sd 0.1041, SE 0.0601 > |0.8167 - 0.8|
    r = combine([_draw(v) for v in (0.70, 0.90, 0.85)])
    assert r.status == "unsettled" and not r.holds
    # SE < gap needs n > sd² / gap² = 0.01083 / 0.000278 = 39.0: 39 draws
    assert r.draws_needed == 39
    assert r.why == ("The figure reads 0.8167 ± 0.06 (mean ± SE of 3 draws: 0.7, 0.9, 0.85), "
                     "within one standard error of ≥ 0.8; about 39 draws would separate them "
                     "at this spread.")
    assert brief(r) == "within one SE of the threshold (3 draws)"
    # a mean exactly on the threshold: no number of draws separates it
    r = combine([_draw(v) for v in (0.7, 0.9)])
    assert r.status == "unsettled" and r.draws_needed is None and "no number of draws" in r.why


@pytest.mark.parametrize(("mean", "se", "direction", "expected"), [
    (0.85, 0.04, ">=", "holds"), (0.85, 0.06, ">=", "unsettled"), (0.75, 0.04, ">=", "fails"),
    (0.75, 0.04, "<=", "holds"), (0.85, 0.04, "<=", "fails"), (0.8, 0.0, ">=", "holds"),
])
def test_settle_moves_the_mean_one_standard_error(mean, se, direction, expected):
    assert settle(mean, se, 0.8, direction) == expected


def test_a_trivial_arm_is_judged_by_the_same_rule():
    # the method holds clearly; the trivial arm meets the threshold clearly: uninformative
    r = combine([_draw(v, trivial=t) for v, t in ((0.9, 0.85), (0.92, 0.86), (0.88, 0.84))])
    assert r.status == "uninformative" and r.trivial_value == pytest.approx(0.85)
    assert r.trivial_draws == [0.85, 0.86, 0.84]
    # the trivial arm within one SE of the threshold: the hold is unsettled
    r = combine([_draw(v, trivial=t) for v, t in ((0.9, 0.7), (0.92, 0.9), (0.88, 0.85))])
    assert r.status == "unsettled" and r.why.startswith("The trivial arm (a random arm) reads")
    # the trivial arm clearly misses: the hold stands
    r = combine([_draw(v, trivial=t) for v, t in ((0.9, 0.1), (0.92, 0.2), (0.88, 0.15))])
    assert r.status == "holds"


def test_a_control_false_on_one_draw_is_inconclusive_naming_it():
    r = combine([_draw(0.9, control=True), _draw(0.9, control=False),
                 _draw(0.9, control=True)])
    assert r.status == "inconclusive" and r.control_ok is False
    assert r.reason.startswith("control failed on draw 1 of 3")
    assert r.control_read == {"base": [0.5, 0.5, 0.5]}
    assert r.why.startswith("The control failed on draw 1 of 3 (the baseline learned)")


def test_equal_draws_are_their_value_with_no_error():
    # a summed mean of three 0.7s rounds below 0.7: equal draws must not land unsettled
    r = combine([_draw(0.7, threshold=0.7) for _ in range(3)])
    assert (r.status, r.measured, r.se) == ("holds", 0.7, 0.0)


def test_one_draw_is_its_own_verdict():
    one = _draw(0.79)
    r = combine([one])
    assert (r.status, r.why, r.draws, r.se) == ("fails", one.why, [0.79], 0.0)


def test_a_trivial_arm_or_competitor_that_beats_ours_is_named():
    d = _draw(0.5, trivial=0.6)
    d.competitors = {"k-means": 0.7}
    r = combine([d, d])
    assert r.status == "fails"
    assert "the strongest competitor, k-means, reads 0.7" in r.why
    assert "the trivial arm (a random arm) reads 0.6, better than ours" in r.why
    assert brief(r) == "short by 0.3; k-means beats ours (0.7); trivial arm better (0.6)"


# --- the runner: draws, per-draw settings, errors ----------------------------------------------

@dataclass(frozen=True)
class Rep(Setting):
    budget_fields = ()
    seeds: tuple[int, ...] = (0, 1, 2)


@dataclass
class Ev(Evidence):
    v: float = 0.0


def _toy(seen, fail_from=None, cid="zz.c", name="zz_rep"):
    def fn(setting: Rep, ctx: Context) -> Ev:
        seen.append((ctx.seed, setting.seeds))
        if fail_from is not None and ctx.seed >= fail_from:
            raise RuntimeError("boom")
        return Ev(v=1.0 + ctx.seed / DRAW_STRIDE)

    fn.__name__ = name
    exp = experiment(quick=Rep(seeds=(0,)), full=Rep(), random=("the toy's seed",),
                     per_draw=("seeds",))(fn)
    return claim(cid, experiment=exp, sentence="S", metric="m", unit="u", paper_figure="-",
                 threshold=0.5)(lambda ev: ev.v)


def test_draws_repeat_the_experiment_at_strided_seeds_replacing_its_own_repeats(tmp_path):
    seen = []
    c = _toy(seen)
    recs, (r,) = run([c], Scale.full, 7, tmp_path)  # full scale: 3 draws by default
    assert seen == [(7, (0,)), (7 + DRAW_STRIDE, (0,)), (7 + 2 * DRAW_STRIDE, (0,))]
    assert [x.draw for x in recs] == [0, 1, 2] and recs[1].seed == 7 + DRAW_STRIDE
    assert recs[0].setting["seeds"] == [0]
    assert recs[0].deviations[-1].startswith("3 draws (--draws): the runner repeats")
    e = 7 / DRAW_STRIDE
    assert r.draws == pytest.approx([1 + e, 2 + e, 3 + e])
    assert r.measured == pytest.approx(2 + e) and r.status == "holds"
    # one draw keeps the experiment's own repeats
    seen.clear()
    run([c], Scale.full, 7, tmp_path, draws=1)
    assert seen == [(7, (0, 1, 2))]


def test_a_draw_that_errors_errors_only_its_experiments_claims_naming_the_draw(tmp_path):
    seen = []
    bad = _toy(seen, fail_from=DRAW_STRIDE, cid="zz.bad", name="zz_bad")
    good = _toy(seen, cid="zz.good", name="zz_good")
    _, (b, g) = run([bad, good], Scale.quick, 0, tmp_path, draws=2)
    assert b.status == "error" and b.error.startswith("draw 1 of 2")
    assert "RuntimeError: boom" in b.error
    assert b.why == "Draw 1 of 2 raised before giving a figure."
    assert g.status == "holds"


@pytest.fixture
def cli_registry(monkeypatch):
    reg = {}
    monkeypatch.setattr(claims, "discover", lambda: reg)
    monkeypatch.setattr(claims, "papers", lambda: {"zz": Paper(1, "zz", "Toy paper", "A")})
    c = _toy([])
    reg[c.id] = c
    return reg


@pytest.mark.parametrize("bad", ["0", "-1", "1.5", "abc", "", "11"])
def test_reproduce_refuses_bad_draws_in_one_line_before_any_work(cli_registry, tmp_path, bad):
    out = runner.invoke(app, ["reproduce", "--draws", bad, "--out", str(tmp_path)])
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "--draws" in lines[0]
    assert not (tmp_path / "results.json").exists()


def test_reproduce_records_the_draws_and_the_report_shows_them(cli_registry, tmp_path):
    out = runner.invoke(app, ["reproduce", "--draws", "2", "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["environment"]["draws"] == 2
    assert [e["draw"] for e in data["experiments"]] == [0, 1]
    (c,) = data["claims"]
    assert c["draws"] == pytest.approx([1.0, 2.0]) and c["se"] == pytest.approx(0.5)
    text = (tmp_path / "REPORT.md").read_text()
    assert "2 draw(s) per experiment" in text
    assert "  Per draw: 1, 2 (mean 1.5 ± 0.5 SE)." in text
    assert "| quantity | draw 0 (seed 0) | draw 1 (seed 400000) | unit |" in text


def test_the_report_table_has_a_why_column(tmp_path):
    env = {"scale": "full", "seed": 0, "device": "cpu", "packages": {}}
    fails = combine([_draw(0.5), _draw(0.6)])
    text = report.render(env, [], [fails], {}, tmp_path,
                         trends={"zz.c": "stops holding at K=2"})
    assert "| claim | measured | vs | threshold | verdict | why | seconds |" in text
    assert "| short by 0.25; ladder: stops holding at K=2 |" in text

