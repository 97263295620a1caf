"""Every registered claim runs at quick scale and yields a finite figure.

Parametrised over the registry, so a new method's claims are covered without a test of its
own. Each experiment runs once per session however many claims read it. Whether a claim
holds is reported by ``iclr25 reproduce``, not asserted here: an honest claim may fail, and
a claim may read NaN or inf where its docstring says the run was uninformative or did not
converge (both count as not holding).
"""

import pytest

from iclr25 import claims
from iclr25.claims import Scale, torch_threads

REGISTRY = claims.discover()
_RUNS: dict = {}


@pytest.fixture(scope="session")
def figure_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("claim-figures")


def _run(exp, figure_dir):
    if exp.id not in _RUNS:
        with torch_threads(1):
            _RUNS[exp.id] = claims.run_experiment(exp, Scale.quick, 0, "cpu", figure_dir)
    return _RUNS[exp.id]


def test_methods_have_claims():
    for method in claims.papers():
        assert any(c.method == method for c in REGISTRY.values()), f"{method} has no claim"


@pytest.mark.parametrize("cid", list(REGISTRY))
def test_claim_runs_at_quick_scale(cid, figure_dir):
    c = REGISTRY[cid]
    record, evidence = _run(c.experiment, figure_dir)
    assert record.error is None, record.error
    result = claims.judge(c, evidence, record)
    assert result.status in ("holds", "fails"), result.error
    assert isinstance(result.measured, float)
    assert c.paper_figure and c.unit and c.sentence
    for path in record.figures:
        with open(path, "rb") as f:
            assert f.read(4) == b"\x89PNG"
