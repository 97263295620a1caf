"""Every registered claim runs at quick scale, on each available device, and yields a verdict.

Parametrised over the registry, so a new method's claims are covered without a test of its
own. Each experiment runs once per (device, seed) however many claims read it. Whether a
claim holds is reported by ``iclr25 reproduce``, not asserted here: an honest claim may fail,
and a run may be inconclusive (a false control, or a NaN/inf reading, with its reason).
Seeds 0 and 1 must give different evidence: an experiment that ignored ``ctx.seed`` would
repeat itself; and every experiment must read ``ctx.device`` (one that never did would build
its tensors on the CPU whatever device it was given).
"""
from unittest import mock

import pytest

from iclr25 import claims, runner
from iclr25.claims import Scale, torch_threads
from iclr25.verdicts import judge

REGISTRY = claims.discover()
EXPERIMENTS = {c.experiment.id: c.experiment for c in REGISTRY.values()}
_RUNS: dict = {}
_READ_DEVICE: set[str] = set()  # experiments whose run read ctx.device
_running: list[str] = []


class _WatchedContext(claims.Context):
    """A Context that notes that the running experiment read its ``device``."""

    def __getattribute__(self, name):
        if name == "device":
            _READ_DEVICE.add(_running[-1])
        return super().__getattribute__(name)


@pytest.fixture(scope="session")
def figure_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("claim-figures")


def _run(exp, figure_dir, device, seed=0):
    key = exp.id, str(device), seed
    if key not in _RUNS:
        _running.append(exp.id)
        with torch_threads(1), mock.patch.object(runner, "Context", _WatchedContext):
            _RUNS[key] = runner.run_experiment(exp, Scale.quick, seed, device,
                                               figure_dir / f"{device}-{seed}")
    return _RUNS[key]


def test_methods_have_claims():
    for method in claims.papers():
        assert any(c.method == method for c in REGISTRY.values()), f"{method} has no claim"


@pytest.mark.parametrize("cid", list(REGISTRY))
def test_claim_runs_at_quick_scale(cid, figure_dir, device):
    c = REGISTRY[cid]
    record, evidence = _run(c.experiment, figure_dir, device)
    assert record.error is None, record.error
    assert record.device == str(device)
    result = judge(c, evidence, record)
    assert result.status in ("holds", "fails", "inconclusive", "uninformative"), result.error
    assert isinstance(result.measured, float)
    if result.status in ("inconclusive", "uninformative"):
        assert result.reason
    if result.status != "holds":
        assert result.why  # every verdict but holds says why, from measured figures
    assert c.paper_figure and c.unit and c.sentence
    if result.ours is not None:
        assert c.baseline  # a Comparison names the arm it compares against
    for path in record.figures:
        with open(path, "rb") as f:
            assert f.read(4) == b"\x89PNG"


@pytest.mark.parametrize("cid", list(REGISTRY))
def test_a_trained_comparison_asks_whether_the_baseline_learned(cid):
    c = REGISTRY[cid]
    if c.baseline is not None and type(c.experiment.full).budget_fields:
        assert c.control is not None, (f"{cid} trains its arms against {c.baseline} but has "
                                       f"no control that the baseline learned")


@pytest.mark.parametrize("eid", list(EXPERIMENTS))
def test_seed_changes_the_evidence(eid, figure_dir):
    first, _ = _run(EXPERIMENTS[eid], figure_dir, "cpu", 0)
    second, _ = _run(EXPERIMENTS[eid], figure_dir, "cpu", 1)
    assert second.error is None, second.error
    assert (first.scalars, first.tables) != (second.scalars, second.tables), \
        f"{eid}: seeds 0 and 1 gave identical evidence; the experiment ignores ctx.seed"


@pytest.mark.parametrize("eid", list(EXPERIMENTS))
def test_experiment_reads_the_device(eid, figure_dir):
    record, _ = _run(EXPERIMENTS[eid], figure_dir, "cpu", 0)
    assert record.error is None, record.error
    assert eid in _READ_DEVICE, f"{eid} never read ctx.device: it ignores the device asked for"
