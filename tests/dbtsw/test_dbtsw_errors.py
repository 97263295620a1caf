"""Db-TSW: every bad input raises ValueError/TypeError naming the argument, before any work."""

import numpy as np
import pytest
import torch

from iclr25.dbtsw import DbTSWLoss, db_tsw, sample_trees

X = torch.randn(10, 3)
Y = torch.randn(8, 3)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(X_s=torch.randn(10)), ValueError, "X_s"),
    (dict(X_t=torch.randn(2, 2, 2, 2)), ValueError, "X_t"),
    (dict(X_t=torch.randn(8, 4)), ValueError, "dimension d"),
    (dict(X_s=torch.randn(0, 3)), ValueError, "X_s"),
    (dict(X_t=torch.randn(8, 0)), ValueError, "X_t"),
    (dict(X_s=torch.tensor([[np.nan, 0.0, 0.0]])), ValueError, "X_s"),
    (dict(X_t=torch.tensor([[np.inf, 0.0, 0.0]])), ValueError, "X_t"),
    (dict(X_s=torch.ones(10, 3, dtype=torch.int64)), TypeError, "X_s"),
    (dict(X_t=torch.ones(8, 3, dtype=torch.bool)), TypeError, "X_t"),
    (dict(X_s=torch.randn(2, 10, 3)), ValueError, "X_s and X_t must both be"),
    (dict(X_s=torch.randn(2, 10, 3), X_t=torch.randn(3, 8, 3)), ValueError, "batch size"),
    (dict(a=torch.full((9,), 1 / 9)), ValueError, "a must have shape"),
    (dict(b=torch.full((8,), 0.2)), ValueError, "b must sum to 1"),
    (dict(a=torch.tensor([-0.1] + [1.1 / 9] * 9)), ValueError, "a must be nonnegative"),
    (dict(b=torch.tensor([np.nan] * 8)), ValueError, "b contains"),
    (dict(n_trees=0), ValueError, "n_trees"),
    (dict(n_lines=0), ValueError, "n_lines"),
    (dict(n_trees=2.5), TypeError, "n_trees"),
    (dict(delta=-1.0), ValueError, "delta"),
    (dict(delta=float("nan")), ValueError, "delta"),
    (dict(p=0.5), ValueError, "p must"),
    (dict(root_std=-0.1), ValueError, "root_std"),
    (dict(directions="uniform"), ValueError, "directions"),
    (dict(directions="orthogonal", n_lines=4), ValueError, "n_lines must be <= d"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(trees=torch.randn(3, 4, 3)), TypeError, "trees must be a pair"),
    (dict(trees=(torch.randn(3, 4, 2), torch.randn(3, 3))), ValueError, "theta"),
    (dict(trees=(torch.nn.functional.normalize(torch.randn(3, 4, 3), dim=-1),
                 torch.randn(2, 3))), ValueError, "roots"),
    (dict(trees=(torch.randn(3, 4, 3) * 2, torch.randn(3, 3))), ValueError, "unit vectors"),
])
def test_bad_input_names_the_argument(kwargs, exc, match):
    args = dict(X_s=X, X_t=Y)
    args.update(kwargs)
    X_s, X_t = args.pop("X_s"), args.pop("X_t")
    with pytest.raises(exc, match=match):
        db_tsw(X_s, X_t, **args)


def test_weights_may_be_given_per_batch_or_shared():
    Xs, Xt = torch.randn(2, 10, 3), torch.randn(2, 8, 3)
    a = torch.full((10,), 0.1)
    assert db_tsw(Xs, Xt, a, seed=0).shape == (2,)
    with pytest.raises(ValueError, match="a must have shape"):
        db_tsw(Xs, Xt, torch.full((3, 10), 0.1), seed=0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs two devices")
def test_mismatched_devices():
    with pytest.raises(ValueError, match="X_t is on"):
        db_tsw(X, Y.cuda())
    with pytest.raises(ValueError, match="a is on"):
        db_tsw(X, Y, torch.full((10,), 0.1).cuda())


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(n_trees=0), ValueError, "n_trees"),
    (dict(n_lines=0), ValueError, "n_lines"),
    (dict(dim=0), ValueError, "dim"),
    (dict(std=-1.0), ValueError, "std"),
    (dict(directions="x"), ValueError, "directions"),
    (dict(directions="orthogonal", n_lines=5), ValueError, "n_lines must be <= dim"),
    (dict(mean=torch.zeros(4)), ValueError, "mean"),
    (dict(mean=float("inf")), ValueError, "mean"),
    (dict(dtype=torch.int64), TypeError, "dtype"),
])
def test_sample_trees_errors(kwargs, exc, match):
    args = dict(n_trees=3, n_lines=4, dim=3, mean=0.0)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        sample_trees(args.pop("n_trees"), args.pop("n_lines"), args.pop("dim"), **args)


def test_loss_module_checks_at_construction():
    with pytest.raises(ValueError, match="delta"):
        DbTSWLoss(delta=-1)
    with pytest.raises(ValueError, match="seed"):
        DbTSWLoss(seed=-3)
