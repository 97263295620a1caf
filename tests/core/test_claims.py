import json
import random
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from iclr25 import claims, runner
from iclr25.claims import (
    Context,
    Evidence,
    Paper,
    Scale,
    Setting,
    Table,
    claim,
    experiment,
    scalar,
)
from iclr25.runner import ExperimentRecord
from iclr25.verdicts import ClaimResult


@pytest.fixture(autouse=True)
def private_registry(monkeypatch):
    """Claims and experiments made by a test live in a registry of their own."""
    monkeypatch.setattr(claims, "_CLAIMS", {})
    monkeypatch.setattr(claims, "_EXPERIMENTS", {})


@dataclass(frozen=True)
class Toy(Setting):
    budget_fields = ("n",)  # the toy "trains" n steps
    n: int
    label: str = "x"


@dataclass
class ToyEvidence(Evidence):
    value: float = scalar("fraction")
    per_seed: list[float] | None = None
    table: Table | None = None


def make(calls=None, value=0.7, fail=False):
    @experiment(quick=Toy(n=2), full=Toy(n=5))
    def toy(setting: Toy, ctx: Context) -> ToyEvidence:
        if calls is not None:
            calls.append((setting.n, ctx.scale.value, ctx.seed, str(ctx.device)))
        if fail:
            raise RuntimeError("kaboom")
        fig = ctx.figure("line")
        fig.subplots().plot([0, 1], [1, 0])
        return ToyEvidence(value=value, per_seed=[float(torch.rand(())), 2],
                           table=Table("t", ("a", "b"), [(1, torch.tensor(0.5))]))

    return toy


def declare(exp, cid, threshold=0.5, direction=">=", read=None):
    return claim(cid, experiment=exp, sentence="S", metric="m", unit="fraction",
                 paper_figure="0.9 (Table 1)", threshold=threshold,
                 direction=direction)(read or (lambda ev: ev.value))


def test_experiment_runs_once_for_all_its_claims(tmp_path):
    calls = []
    exp = make(calls)
    a, b = declare(exp, "zz.a"), declare(exp, "zz.b", threshold=0.9)
    records, results = runner.run([a, b], Scale.quick, 3, tmp_path)
    assert calls == [(2, "quick", 3, "cpu")]
    assert len(records) == 1 and records[0].id == "test_claims.toy"
    assert records[0].setting == {"n": 2, "label": "x"}
    assert [r.status for r in results] == ["holds", "fails"]
    assert records[0].figures[0].endswith("test_claims.toy.line.png")
    assert (tmp_path / "test_claims.toy.line.png").read_bytes()[:4] == b"\x89PNG"


def test_full_scale_uses_full_setting(tmp_path):
    calls = []
    c = declare(make(calls), "zz.a")
    runner.run([c], "full", 0, tmp_path)
    assert calls[0][:2] == (5, "full")


def test_evidence_is_typed_and_plain(tmp_path):
    c = declare(make(), "zz.a")
    (rec,), _ = runner.run([c], Scale.quick, 0, tmp_path)
    names = {n: (v, u) for n, v, u in rec.scalars}
    assert names["value"] == (0.7, "fraction")
    assert isinstance(names["per_seed"][0][0], float)
    assert rec.tables == [{"title": "t", "columns": ["a", "b"], "rows": [[1, 0.5]]}]
    json.dumps(rec.to_dict())  # every value is JSON-ready


@pytest.mark.parametrize(("value", "direction", "status"),
                         [(0.4, ">=", "fails"), (0.5, ">=", "holds"), (0.4, "<=", "holds"),
                          (0.6, "<=", "fails"), (float("nan"), ">=", "inconclusive"),
                          (float("inf"), ">=", "inconclusive")])
def test_threshold_direction(tmp_path, value, direction, status):
    c = declare(make(value=value), "zz.dir", direction=direction)
    _, (r,) = runner.run([c], Scale.quick, 0, tmp_path)
    assert r.status == status and r.holds is (status == "holds")
    if status == "inconclusive":
        assert "no usable figure" in r.reason


def test_raising_experiment_errors_every_claim_reading_it(tmp_path):
    exp = make(fail=True)
    records, results = runner.run([declare(exp, "zz.a"), declare(exp, "zz.b")], "quick", 0,
                                  tmp_path)
    assert "kaboom" in records[0].error and "Traceback" in records[0].error
    assert [r.status for r in results] == ["error", "error"]
    assert all(r.measured is None and not r.holds for r in results)


def test_raising_read_errors_only_that_claim(tmp_path):
    exp = make()
    good = declare(exp, "zz.good")
    bad = declare(exp, "zz.bad", read=lambda ev: ev.missing)
    _, results = runner.run([good, bad], "quick", 0, tmp_path)
    assert [r.status for r in results] == ["holds", "error"]
    assert "missing" in results[1].error


def test_experiment_must_return_evidence(tmp_path):
    @experiment(quick=Toy(1), full=Toy(1))
    def wrong(setting, ctx):
        return 0.9

    records, (r,) = runner.run([declare(wrong, "zz.w")], "quick", 0, tmp_path)
    assert r.status == "error" and "expected an Evidence" in records[0].error


def test_bad_declarations_rejected():
    exp = make()
    with pytest.raises(ValueError, match="direction"):
        declare(exp, "zz.a", direction=">")
    with pytest.raises(ValueError, match="claim_id"):
        declare(exp, "nodot")
    with pytest.raises(ValueError, match="threshold"):
        declare(exp, "zz.a", threshold=float("nan"))
    with pytest.raises(TypeError, match="experiment"):
        claim("zz.a", experiment=lambda s, c: None, sentence="", metric="", unit="",
              paper_figure="", threshold=1)
    with pytest.raises(TypeError, match="frozen Setting"):
        experiment(quick={"n": 1}, full={"n": 2})

    @dataclass(frozen=True)
    class Other(Setting):
        budget_fields = ()
        n: int

    with pytest.raises(TypeError, match="same Setting type"):
        experiment(quick=Toy(1), full=Other(1))


def test_setting_is_frozen():
    with pytest.raises(AttributeError):
        Toy(1).n = 2  # type: ignore[misc]


def test_duplicate_id_rejected():
    declare(make(), "zz.dup")
    with pytest.raises(ValueError, match="already registered"):
        claim("zz.dup", experiment=make(), sentence="", metric="", unit="", paper_figure="",
              threshold=1)(lambda ev: 1.0)


def test_table_rows_must_match_columns():
    with pytest.raises(ValueError, match="2 cells"):
        Table("t", ("a", "b", "c"), [(1, 2)])
    with pytest.raises(TypeError, match="numbers or strings"):
        Table("t", ("a",), [({"x": 1},)])


def test_paper_short_must_be_a_package_name():
    with pytest.raises(ValueError, match="short"):
        Paper(number=1, short="not a name", title="T", authors="A")


def test_select_by_id_and_method():
    exp = make()
    reg = {c.id: c for c in (declare(exp, "zz.a"), declare(exp, "zz.b"),
                             declare(exp, "yy.c"))}
    assert [c.id for c in claims.select(["zz"], reg)] == ["zz.a", "zz.b"]
    assert [c.id for c in claims.select(["yy.c"], reg)] == ["yy.c"]
    assert claims.select([], reg) == list(reg.values())
    with pytest.raises(KeyError) as info:
        claims.select(["zz", "nope", "z"], reg)
    assert info.value.args[0] == ["nope", "z"]


def test_records_round_trip_through_json(tmp_path):
    c = declare(make(), "zz.rt")
    (rec,), (res,) = runner.run([c], Scale.full, 7, tmp_path)
    assert ExperimentRecord.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    assert ClaimResult.from_dict(json.loads(json.dumps(res.to_dict()))) == res
    with pytest.raises(ValueError, match="missing fields"):
        ClaimResult.from_dict({"claim_id": "a.b"})


def test_seeded_and_global_rng_left_alone(tmp_path):
    c = declare(make(), "zz.rand", read=lambda ev: ev.per_seed[0])
    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    before = random.random(), np.random.rand(), float(torch.rand(()))
    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    a = runner.run([c], "quick", 5, tmp_path)[1][0].measured
    b = runner.run([c], "quick", 5, tmp_path)[1][0].measured
    d = runner.run([c], "quick", 6, tmp_path)[1][0].measured
    assert a == b != d
    assert (random.random(), np.random.rand(), float(torch.rand(()))) == before


def test_context_figure_is_bare_and_named(tmp_path):
    import matplotlib
    from matplotlib.figure import Figure

    backend = matplotlib.get_backend()
    ctx = Context(Scale.quick, 0)
    assert isinstance(ctx.figure("ok_name-1"), Figure)
    with pytest.raises(ValueError, match="figure name"):
        ctx.figure("../escape")
    assert matplotlib.get_backend() == backend


def test_torch_threads_restores_count():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError):
        with claims.torch_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError
    assert torch.get_num_threads() == before


def test_comparison_names_its_baseline_and_both_values(tmp_path):
    exp = make(value=0.9)
    c = claim("zz.cmp", experiment=exp, sentence="S", metric="gain", unit="points",
              paper_figure="-", threshold=0.1, baseline="plain")(
        lambda ev: claims.Comparison(ours=ev.value, baseline=0.7, value=ev.value - 0.7))
    _, (r,) = runner.run([c], Scale.quick, 0, tmp_path)
    assert (r.status, r.baseline, r.ours, r.baseline_value) == ("holds", "plain", 0.9, 0.7)
    assert r.measured == pytest.approx(0.2)


def test_comparison_without_declared_baseline_is_an_error(tmp_path):
    c = declare(make(), "zz.nob", read=lambda ev: claims.Comparison(1.0, 0.5, 0.5))
    _, (r,) = runner.run([c], Scale.quick, 0, tmp_path)
    assert r.status == "error" and "declares no baseline" in r.error


@pytest.mark.parametrize(("value", "control_ok", "status"),
                         [(0.9, True, "holds"), (0.1, True, "fails"),
                          (0.9, False, "inconclusive"), (0.1, False, "inconclusive")])
def test_false_control_is_inconclusive_whatever_the_value(tmp_path, value, control_ok, status):
    exp = make(value=value)
    c = claim("zz.ctl", experiment=exp, sentence="S", metric="m", unit="u", paper_figure="-",
              threshold=0.5, baseline="b", control=lambda ev: (ev.table.title == "t")
              and control_ok and ev.per_seed[1] == 2,
              control_doc="The baseline learned.")(lambda ev: ev.value)
    _, (r,) = runner.run([c], Scale.quick, 0, tmp_path)
    assert r.status == status and r.holds is (status == "holds")
    assert r.control_ok is control_ok and r.control_doc == "The baseline learned."
    assert r.control_read["table"] == "table 't'"  # what the control read, for the report
    if status == "inconclusive":
        assert r.reason == "control failed: The baseline learned."


def test_control_needs_its_sentence_and_a_named_baseline():
    exp = make()
    with pytest.raises(ValueError, match="control_doc"):
        claim("zz.a", experiment=exp, sentence="", metric="", unit="", paper_figure="",
              threshold=1, control=lambda ev: True)
    with pytest.raises(ValueError, match="baseline"):
        claim("zz.a", experiment=exp, sentence="", metric="", unit="", paper_figure="",
              threshold=1, baseline="  ")


def test_deviations_are_recorded_apart_from_the_setting(tmp_path):
    @experiment(quick=Toy(1, deviations=("1 of 10 steps: CPU budget",)), full=Toy(2))
    def dev(setting, ctx):
        return ToyEvidence(value=1.0)

    (rec,), _ = runner.run([declare(dev, "zz.dev")], "quick", 0, tmp_path)
    assert rec.deviations == ["1 of 10 steps: CPU budget"]
    assert rec.setting == {"n": 1, "label": "x"}
    with pytest.raises(TypeError, match="deviations"):
        Toy(1, deviations="one string")


_WORKER_MODULE = '''
import os, signal
from dataclasses import dataclass
import torch
from iclr25.claims import Context, Evidence, Setting, claim, experiment, scalar


@dataclass(frozen=True)
class W(Setting):
    budget_fields = ()
    n: int


@dataclass
class WE(Evidence):
    value: float = scalar("u")


@experiment(quick=W(1), full=W(2))
def draws(setting, ctx):
    return WE(value=float(torch.rand((), generator=torch.Generator().manual_seed(ctx.seed))))


@experiment(quick=W(1), full=W(2))
def dies(setting, ctx):
    os.kill(os.getpid(), signal.SIGKILL)


@experiment(quick=W(1), full=W(2))
def pool(setting, ctx):  # an experiment with its own process pool, as gsd's and lsdt's
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as ex:
        return WE(value=float(sum(ex.map(abs, [-1, -2]))))


for name, exp in (("draws", draws), ("dies", dies), ("pool", pool)):
    claim(f"jobworker.{name}", experiment=exp, sentence="S", metric="m", unit="u",
          paper_figure="-", threshold=0.0)(lambda ev: ev.value)
'''


def test_jobs_give_the_same_values_and_survive_a_dead_worker(tmp_path, monkeypatch):
    (tmp_path / "jobworker.py").write_text(_WORKER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    mod = importlib.import_module("jobworker")
    try:
        reg = [claims._CLAIMS[f"jobworker.{n}"] for n in ("draws", "dies", "pool")]
        records, results = runner.run(reg, Scale.quick, 3, tmp_path, jobs=2, threads=1)
        assert results[0].status == "holds" and records[0].threads == 1
        assert results[1].status == "error" and "SIGKILL" in results[1].error
        assert results[2].status == "holds" and results[2].measured == 3.0, results[2].error
        _, (alone,) = runner.run(reg[:1], Scale.quick, 3, tmp_path, jobs=1, threads=1)
        assert alone.measured == results[0].measured
        with pytest.raises(ValueError, match="jobs"):
            runner.run(reg, Scale.quick, 3, tmp_path, jobs=0)
    finally:
        del mod
        import sys
        sys.modules.pop("jobworker", None)


def test_map_jobs_returns_in_the_jobs_order():
    ctx = Context(Scale.full, 0)
    jobs = [(3, 2), (-1, 3), (2, 1), (-5, 2)]
    with claims.torch_threads(2):
        assert ctx.map_jobs(pow, jobs) == [9, -1, 2, 25]
    assert ctx.map_jobs(pow, []) == []


_ORDER_MODULE = '''
import os
import sys
from dataclasses import dataclass
import torch
from iclr25.claims import Evidence, Setting, claim, experiment, scalar


@dataclass(frozen=True)
class O(Setting):
    budget_fields = ()
    n: int


@dataclass
class OE(Evidence):
    value: float = scalar("u")
    pid: int = scalar("")
    preloaded: float = scalar("")


# declared costs reverse the registry order
for i, name in enumerate("abcd"):
    def fn(setting, ctx, i=i):
        g = torch.Generator().manual_seed(ctx.seed + i)
        return OE(value=float(torch.rand((), generator=g)), pid=os.getpid(),
                  preloaded=float("iclr25.kmeans.claim" in sys.modules))
    fn.__name__ = name
    exp = experiment(quick=O(1), full=O(2), cost=(float(i + 1), 10.0 * (i + 1)))(fn)
    claim(f"joborder.{name}", experiment=exp, sentence="S", metric="m", unit="u",
          paper_figure="-", threshold=0.0)(lambda ev: ev.value)
'''


def test_workers_live_for_the_run_and_take_the_longest_first(tmp_path, monkeypatch):
    (tmp_path / "joborder.py").write_text(_ORDER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    import sys

    importlib.import_module("joborder")
    try:
        reg = [claims._CLAIMS[f"joborder.{n}"] for n in "abcd"]
        started = []
        records, results = runner.run(reg, Scale.quick, 5, tmp_path, jobs=2, threads=1,
                                      on_experiment=lambda e: started.append(e.id))
        assert started == [f"joborder.{n}" for n in "dcba"]  # longest declared first
        assert [r.claim_id for r in results] == [c.id for c in reg]  # reported in order
        scalars = [{n: v for n, v, _ in r.scalars} for r in records]
        assert len({s["pid"] for s in scalars}) <= 2
        # forked from a server that imported every claim module once, not spawned bare
        assert all(s["preloaded"] == 1.0 for s in scalars)
        _, alone = runner.run(reg, Scale.quick, 5, tmp_path, jobs=1, threads=1)
        assert [r.measured for r in alone] == [r.measured for r in results]
        # a previous run's times win over the declared costs
        started.clear()
        runner.run(reg, Scale.quick, 5, tmp_path, jobs=2, threads=1,
                   on_experiment=lambda e: started.append(e.id),
                   seconds={"joborder.b": 99.0, "joborder.a": 50.0})
        assert started[:2] == ["joborder.b", "joborder.a"]
    finally:
        sys.modules.pop("joborder", None)


def test_cost_must_be_two_seconds():
    with pytest.raises(ValueError, match="cost must be"):
        experiment(quick=Toy(1), full=Toy(2), cost=(1.0,))
