import pytest
import torch

from iclr25._checks import check_in_range, check_same_length, check_tensor


def test_check_tensor_errors_name_the_argument():
    with pytest.raises(ValueError, match="X must be 2-D"):
        check_tensor(torch.zeros(3), "X", ndim=2)
    with pytest.raises(ValueError, match="X is empty"):
        check_tensor(torch.zeros(0, 2), "X", ndim=2)
    with pytest.raises(ValueError, match="X contains 1 NaN"):
        check_tensor(torch.tensor([1.0, float("nan")]), "X")
    with pytest.raises(TypeError, match="y must be an integer"):
        check_tensor(torch.zeros(2), "y", integer=True)
    with pytest.raises(TypeError, match="X must be a tensor"):
        check_tensor(object(), "X")


def test_check_tensor_does_not_copy_or_modify():
    x = torch.ones(2, 2)
    assert check_tensor(x, "x", ndim=2) is x


def test_same_length_and_range():
    assert check_same_length(a=[1, 2], b=torch.zeros(2)) == 2
    with pytest.raises(ValueError, match="a has 2, b has 3"):
        check_same_length(a=[1, 2], b=[1, 2, 3])
    with pytest.raises(TypeError, match="at least one"):
        check_same_length()
    assert check_in_range(0.5, "p", 0, 1, low_open=True, high_open=True) == 0.5
    with pytest.raises(ValueError, match=r"p must lie in \(0, 1\)"):
        check_in_range(1.0, "p", 0, 1, low_open=True, high_open=True)
    with pytest.raises(ValueError, match="p must lie"):
        check_in_range(float("nan"), "p", 0, 1)
