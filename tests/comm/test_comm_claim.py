"""comm's verdicts: the controls (every probed attribute readable, the baseline learned) and
the trivial arm (the random-init encoder) decide what a run can say."""

import dataclasses

import pytest

from iclr25.comm.claim import TrifeaturesEvidence, redundancy, synergy, uniqueness
from iclr25.verdicts import judge

# CoMM keeps R, U and S; Cross learned R (0.7 vs its random-init 0.35); labels read all
GOOD = dict(comm_S=0.70, cross_S=0.50, cross_self_S=0.52, random_S=0.50,
            comm_U=0.60, cross_U=0.15, cross_self_U=0.50, random_U=0.12,
            comm_R=0.95, cross_R=0.70, cross_self_R=0.80, random_R=0.33, random_cross_R=0.35,
            supervised_shape=0.97, supervised_texture=0.70, supervised_color=0.99)


def _ev(**change):
    f = {**GOOD, **change}
    return TrifeaturesEvidence(synergy_gain=f["comm_S"] - f["cross_S"],
                               uniqueness_gain=f["comm_U"] - f["cross_U"], **f)


@pytest.mark.parametrize("change, want", [
    ({}, ("holds", "holds", "holds")),
    # Cross did not learn: nothing separates the arms, whatever CoMM scores
    (dict(cross_R=0.40), ("inconclusive",) * 3),
    # texture unreadable even with labels: U and S cannot be read, R still can
    (dict(supervised_texture=0.30), ("inconclusive", "inconclusive", "holds")),
    (dict(supervised_color=0.50), ("inconclusive", "holds", "holds")),
    (dict(supervised_shape=0.50), ("holds", "holds", "inconclusive")),
    (dict(supervised_texture=float("nan")), ("inconclusive", "inconclusive", "holds")),
    # the random-init encoder meets the threshold too: the figure says nothing of CoMM
    (dict(random_U=0.45, random_S=0.62, random_R=0.92),
     ("uninformative", "uninformative", "uninformative")),
    (dict(comm_S=0.52, comm_U=0.30, comm_R=0.80), ("fails", "fails", "fails")),
])
def test_verdicts(change, want):
    got = tuple(judge(c, _ev(**change)).status for c in (synergy, uniqueness, redundancy))
    assert got == want


def test_controls_read_only_the_baseline_and_the_testbed():
    for c in (synergy, uniqueness, redundancy):
        r = judge(c, _ev())
        assert not any(k.startswith(("comm_", "random_S", "random_U", "cross_self"))
                       for k in r.control_read), r.control_read
        assert {"cross_R", "random_cross_R"} <= set(r.control_read)
    assert "supervised_color" in judge(synergy, _ev()).control_read
    r = judge(uniqueness, _ev())
    assert r.competitors == {"Cross+Self": 0.50, "random-init encoder": 0.12}
    assert r.trivial_value == pytest.approx(0.12 - 0.15)


def test_evidence_fields_are_all_set():
    names = {f.name for f in dataclasses.fields(TrifeaturesEvidence)} - {"per_seed"}
    assert names == set(GOOD) | {"synergy_gain", "uniqueness_gain"}
