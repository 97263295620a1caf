import json

import pytest

from iclr25 import claims
from iclr25.claims import Context, Measurement, Result, Scale


@pytest.fixture
def temp_claim():
    """Register claims for one test and remove them afterwards."""
    made = []

    def make(cid, value=1.0, threshold=0.5, direction=">=", fn=None):
        def measure(ctx: Context) -> Measurement:
            return Measurement(value=value, details={"scale": ctx.scale.value, "seed": ctx.seed})

        claims.claim(cid, paper="P", sentence="S", metric="m", paper_figure="0.9 (Table 1)",
                     threshold=threshold, direction=direction)(fn or measure)
        made.append(cid)
        return claims.discover()[cid]

    yield make
    for cid in made:
        claims.unregister(cid)


def test_registered_claim_is_discovered_and_runs(temp_claim, tmp_path):
    c = temp_claim("zz_test.a", value=0.7, threshold=0.5)
    r = claims.run(c, Scale.quick, 3, tmp_path)
    assert r.status == "holds" and r.holds and r.measured == 0.7
    assert r.seed == 3 and r.scale == "quick" and r.details == {"scale": "quick", "seed": 3}


@pytest.mark.parametrize(("value", "direction", "holds"),
                         [(0.4, ">=", False), (0.5, ">=", True), (0.4, "<=", True),
                          (0.6, "<=", False), (float("nan"), ">=", False)])
def test_threshold_direction(temp_claim, tmp_path, value, direction, holds):
    c = temp_claim("zz_test.dir", value=value, threshold=0.5, direction=direction)
    r = claims.run(c, Scale.quick, 0, tmp_path)
    assert r.holds is holds
    assert r.status == ("holds" if holds else "fails")


def test_raising_claim_becomes_error_result(temp_claim, tmp_path):
    def boom(ctx):
        raise RuntimeError("kaboom")

    c = temp_claim("zz_test.boom", fn=boom)
    r = claims.run(c, Scale.quick, 0, tmp_path)
    assert r.status == "error" and not r.holds and r.measured is None
    assert "kaboom" in r.error and "Traceback" in r.error


def test_claim_must_return_measurement(temp_claim, tmp_path):
    c = temp_claim("zz_test.wrongtype", fn=lambda ctx: 0.9)
    r = claims.run(c, Scale.quick, 0, tmp_path)
    assert r.status == "error" and "expected Measurement" in r.error


def test_bad_declarations_rejected():
    with pytest.raises(ValueError, match="direction"):
        claims.claim("x.y", paper="", sentence="", metric="", paper_figure="", threshold=1,
                     direction=">")
    with pytest.raises(ValueError, match="method"):
        claims.claim("nodot", paper="", sentence="", metric="", paper_figure="", threshold=1)


def test_duplicate_id_rejected(temp_claim):
    temp_claim("zz_test.dup")
    with pytest.raises(ValueError, match="already registered"):
        claims.claim("zz_test.dup", paper="", sentence="", metric="", paper_figure="",
                     threshold=1)(lambda ctx: None)


def test_select_by_id_and_prefix(temp_claim):
    temp_claim("zz_test.a")
    temp_claim("zz_test.b")
    temp_claim("zz_other.c")
    reg = claims.discover()
    assert [c.id for c in claims.select(["zz_test"], reg)] == ["zz_test.a", "zz_test.b"]
    assert [c.id for c in claims.select(["zz_other.c"], reg)] == ["zz_other.c"]
    with pytest.raises(KeyError) as info:
        claims.select(["zz_test", "nope", "zz_tes"], reg)
    assert info.value.args[0] == ["nope", "zz_tes"]


def test_result_json_round_trip(temp_claim, tmp_path):
    c = temp_claim("zz_test.rt", value=0.25)
    r = claims.run(c, Scale.full, 7, tmp_path)
    back = Result.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r


def test_result_from_incomplete_dict():
    with pytest.raises(ValueError, match="missing fields"):
        Result.from_dict({"claim_id": "a.b"})


def test_context_savefig(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ctx = Context(Scale.quick, 0, tmp_path / "figs", claim_id="zz.fig")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = ctx.savefig(fig, "line")
    assert path.endswith("zz.fig.line.png")
    assert (tmp_path / "figs" / "zz.fig.line.png").read_bytes()[:4] == b"\x89PNG"


def test_seed_makes_runs_repeatable(temp_claim, tmp_path):
    import torch

    c = temp_claim("zz_test.rand", fn=lambda ctx: Measurement(float(torch.rand(()))))
    a = claims.run(c, Scale.quick, 5, tmp_path).measured
    b = claims.run(c, Scale.quick, 5, tmp_path).measured
    d = claims.run(c, Scale.quick, 6, tmp_path).measured
    assert a == b != d


def test_torch_threads_restores_count():
    import torch

    before = torch.get_num_threads()
    with pytest.raises(RuntimeError):
        with claims.torch_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError
    assert torch.get_num_threads() == before
