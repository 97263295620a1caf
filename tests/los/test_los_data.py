import pytest
import torch

from iclr25.los import long_tailed_counts, make_long_tailed


def test_cifar100_lt_profile():
    c = long_tailed_counts(500, 100, 100)
    # the CIFAR-100-LT IR=100 training set has 10,847 images, 500 -> 5 per class
    assert int(c.sum()) == 10847 and c[0] == 500 and c[-1] == 5
    assert bool((c[1:] <= c[:-1]).all())
    ref = [int(500 * (1 / 10) ** (k / 99)) for k in range(100)]
    assert long_tailed_counts(500, 100, 10).tolist() == ref
    assert long_tailed_counts(7, 4, 1).tolist() == [7, 7, 7, 7]


def test_profile_errors():
    with pytest.raises(ValueError, match="tail classes empty"):
        long_tailed_counts(50, 10, 100)
    with pytest.raises(ValueError, match="imbalance_ratio"):
        long_tailed_counts(50, 10, 0.5)
    with pytest.raises(ValueError, match="n_classes"):
        long_tailed_counts(50, 1, 10)
    with pytest.raises(ValueError, match="n_max"):
        long_tailed_counts(0, 10, 10)


def test_make_long_tailed_subsamples_rows():
    g = torch.Generator().manual_seed(0)
    y = torch.arange(5).repeat_interleave(40)[torch.randperm(200, generator=g)]
    X = torch.stack([torch.arange(200.0), y.float()], 1)
    X0, y0 = X.clone(), y.clone()
    Xl, yl, counts = make_long_tailed(X, y, 10, seed=1)
    assert counts.tolist() == long_tailed_counts(40, 5, 10).tolist()
    assert torch.bincount(yl).tolist() == counts.tolist()
    # each kept row is an original row with its own label
    assert torch.equal(X[Xl[:, 0].long()], Xl) and torch.equal(Xl[:, 1].long(), yl)
    assert len(set(Xl[:, 0].tolist())) == len(yl)
    assert torch.equal(X, X0) and torch.equal(y, y0)
    again = make_long_tailed(X, y, 10, seed=1)[0]
    other = make_long_tailed(X, y, 10, seed=2)[0]
    assert torch.equal(again, Xl) and not torch.equal(other, Xl)


def test_make_long_tailed_errors():
    X = torch.randn(6, 2)
    with pytest.raises(ValueError, match=r"no sample of class\(es\) \[1\]"):
        make_long_tailed(X, torch.tensor([0, 0, 2, 2, 2, 0]), 1)
    with pytest.raises(ValueError, match="fewer samples"):
        make_long_tailed(X, torch.tensor([0, 0, 1, 1, 1, 0]), 1, n_max=4)
    with pytest.raises(ValueError, match="mismatched"):
        make_long_tailed(X, torch.tensor([0, 1]), 1)


def test_make_long_tailed_generator_seed_and_narrow_labels():
    y = torch.arange(4).repeat_interleave(10)
    X = torch.arange(40.0)[:, None]
    a = make_long_tailed(X, y, 5, seed=torch.Generator().manual_seed(3))[0]
    assert torch.equal(a, make_long_tailed(X, y, 5, seed=3)[0])
    b = make_long_tailed(X.numpy(), y.to(torch.int16).numpy(), 5, seed=3)
    assert torch.equal(b[0], a) and b[1].dtype == torch.int64
    with pytest.raises(ValueError, match="imbalance_ratio"):
        make_long_tailed(X, y, float("inf"))
    with pytest.raises(TypeError, match="y must hold integer"):
        make_long_tailed(X, y.float(), 5)
