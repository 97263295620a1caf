import pytest
import torch

from iclr25.datasets import digits, gaussian_mixture, teacher_classification


def test_digits_split_is_seeded_and_stratified():
    a, b, c = digits(seed=0), digits(seed=0), digits(seed=1)
    assert a.X_train.shape == (1347, 64) and a.X_test.shape == (450, 64)
    assert a.X_train.dtype == torch.float32 and a.y_train.dtype == torch.long
    assert torch.equal(a.X_train, b.X_train) and not torch.equal(a.X_train, c.X_train)
    # stratified: each digit's test count is a quarter of its total, up to rounding
    total = torch.bincount(torch.cat([a.y_train, a.y_test]))
    assert (torch.bincount(a.y_test) - 0.25 * total).abs().max() <= 1
    assert a.X_train.mean(0).abs().max() < 1e-4  # standardised on the train split


def test_digits_bad_test_size():
    with pytest.raises(ValueError, match="test_size"):
        digits(test_size=1.0)


def test_gaussian_mixture_counts_and_shared_centres():
    X, y, C = gaussian_mixture([5, 0, 3], dim=4, seed=0)
    assert X.shape == (8, 4)
    assert torch.equal(torch.bincount(y, minlength=3), torch.tensor([5, 0, 3]))
    X2, _, C2 = gaussian_mixture([2, 2, 2], dim=4, seed=1, centers=C)
    assert torch.equal(C2, C)
    with pytest.raises(ValueError, match="non-negative"):
        gaussian_mixture([1, -1], dim=2)
    with pytest.raises(ValueError, match="centers"):
        gaussian_mixture([1, 1], dim=2, centers=torch.zeros(3, 2))
    with pytest.raises(ValueError, match="centers contains 1 NaN"):
        gaussian_mixture([1, 1], dim=2, centers=torch.tensor([[0.0, 1.0], [float("nan"), 0.0]]))


def test_teacher_labels_follow_teacher_and_noise():
    X, y = teacher_classification(2000, dim=8, n_classes=5, seed=0)
    assert X.shape == (2000, 8) and y.min() >= 0 and y.max() < 5
    _, y_noisy = teacher_classification(2000, dim=8, n_classes=5, seed=0, label_noise=0.5)
    changed = (y != y_noisy).float().mean()
    assert 0.3 < changed < 0.5  # half resampled, 1/5 of those land on the same class
    with pytest.raises(ValueError, match="label_noise"):
        teacher_classification(10, label_noise=2.0)
