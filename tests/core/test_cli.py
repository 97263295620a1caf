import json

import pytest
from typer.testing import CliRunner

from iclr25 import claims
from iclr25.claims import Measurement
from iclr25.cli import app

runner = CliRunner()


@pytest.fixture
def only_test_claims(monkeypatch):
    """A registry holding only claims made here, so the CLI never runs real methods."""
    reg = {}
    monkeypatch.setattr(claims, "_REGISTRY", reg)
    monkeypatch.setattr(claims, "method_packages", lambda: [])

    def add(cid, value, threshold=0.5):
        def fn(ctx):
            if value is None:
                raise RuntimeError("claim blew up")
            return Measurement(value)

        claims.claim(cid, paper="P", sentence=f"sentence {cid}", metric="m",
                     paper_figure="-", threshold=threshold)(fn)

    return add


def test_list(only_test_claims):
    only_test_claims("t.good", 1.0)
    out = runner.invoke(app, ["list"])
    assert out.exit_code == 0
    assert "t.good  [m >= 0.5]  sentence t.good" in out.output


def test_no_claims_says_so(only_test_claims, tmp_path):
    out = runner.invoke(app, ["reproduce", "--out", str(tmp_path)])
    assert out.exit_code == 0
    assert "No claims are registered yet" in out.output
    out = runner.invoke(app, ["list"])
    assert "No claims are registered yet" in out.output


def test_reproduce_writes_report_and_continues_after_error(only_test_claims, tmp_path):
    only_test_claims("t.good", 1.0)
    only_test_claims("t.bad", 0.1)
    only_test_claims("t.raises", None)
    out = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--seed", "4"])
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "results.json").read_text())
    status = {r["claim_id"]: r["status"] for r in data["results"]}
    assert status == {"t.good": "holds", "t.bad": "fails", "t.raises": "error"}
    assert all(r["seed"] == 4 for r in data["results"])
    assert "claim blew up" in (tmp_path / "REPORT.md").read_text()


def test_strict_exit_codes(only_test_claims, tmp_path):
    only_test_claims("t.good", 1.0)
    only_test_claims("t.bad", 0.1)
    only_test_claims("t.raises", None)
    assert runner.invoke(app, ["reproduce", "t.good", "--strict", "--out", str(tmp_path)]
                         ).exit_code == 0
    assert runner.invoke(app, ["reproduce", "t.bad", "--strict", "--out", str(tmp_path)]
                         ).exit_code == 1
    assert runner.invoke(app, ["reproduce", "t.raises", "--strict", "--out", str(tmp_path)]
                         ).exit_code == 1


def test_unknown_name_exit_2_lists_known(only_test_claims, tmp_path):
    only_test_claims("t.good", 1.0)
    out = runner.invoke(app, ["reproduce", "t.nope", "--out", str(tmp_path)])
    assert out.exit_code == 2
    assert "Unknown claim name(s): t.nope" in out.output
    assert "Known claims: t.good" in out.output
    assert not (tmp_path / "REPORT.md").exists()


def test_bad_scale_exit_2(only_test_claims, tmp_path):
    only_test_claims("t.good", 1.0)
    out = runner.invoke(app, ["reproduce", "--scale", "huge", "--out", str(tmp_path)])
    assert out.exit_code == 2
    assert "huge" in out.output


def test_full_scale_reaches_claims(only_test_claims, tmp_path):
    seen = []
    claims.claim("t.scale", paper="P", sentence="s", metric="m", paper_figure="-",
                 threshold=0)(lambda ctx: seen.append(ctx.scale.value) or Measurement(1.0))
    out = runner.invoke(app, ["reproduce", "--scale", "full", "--out", str(tmp_path)])
    assert out.exit_code == 0 and seen == ["full"]
