"""Issue 53: lambda is chosen on the held-out trees by a rule that is not a tie-break, and the
claims' trivial arms (the reversed direction; the plain RMS distance for LoRA)."""
from types import SimpleNamespace

from iclr25 import claims
from iclr25.mother.claim import LAM_GRID, choose_lam
from iclr25.verdicts import judge


def _scores(**by_lam):
    s = {lam: (0.5, 0.9) for lam in LAM_GRID}
    s.update({float(k.replace("_", ".").lstrip("l")): v for k, v in by_lam.items()})
    return s


def test_where_lambda_does_not_matter_the_papers_value_is_used():
    assert choose_lam({lam: (1.0, 1.0) for lam in LAM_GRID}) == 0.3


def test_the_best_lambda_wins():
    assert choose_lam(_scores(l0_05=(0.9, 1.0))) == 0.05
    # directed first, undirected breaks a directed tie
    assert choose_lam(_scores(l0_05=(0.9, 0.9), l0_1=(0.9, 1.0))) == 0.1


def test_among_ties_the_closest_to_the_paper_in_log_scale():
    assert choose_lam(_scores(l0_02=(0.9, 1.0), l0_2=(0.9, 1.0))) == 0.2
    assert choose_lam(_scores(l0_02=(0.9, 1.0), l0_05=(0.9, 1.0))) == 0.05


def test_lambda_zero_is_never_chosen():
    assert choose_lam(_scores(l0_0=(1.0, 1.0))) != 0.0


def _judge(cid, **fields):
    c = claims.discover()[cid]
    return judge(c, SimpleNamespace(**fields))


def test_directed_accuracy_is_uninformative_when_the_reversed_direction_scores_as_well():
    ev = dict(directed=0.9, random_root_directed=0.664)
    assert _judge("mother.directed_accuracy", **ev, reversed_directed=0.5).status == "holds"
    r = _judge("mother.directed_accuracy", **ev, reversed_directed=0.9)
    assert r.status == "uninformative" and r.trivial_value == 0.9


def test_lora_rank_is_uninformative_when_the_plain_distance_recovers_the_tree_too():
    assert _judge("mother.lora_rank_undirected", undirected=1.0,
                  undirected_rms=0.8).status == "holds"
    assert _judge("mother.lora_rank_undirected", undirected=1.0,
                  undirected_rms=1.0).status == "uninformative"
