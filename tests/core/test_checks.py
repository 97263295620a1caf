from typing import Literal

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from iclr25._checks import (
    SPREAD_HINT,
    as_tensor,
    check_choice,
    check_in_range,
    check_int,
    check_labels,
    check_range,
    check_same_length,
    check_tensor,
    check_writable_dir,
    column_spread,
    like_input,
    resolve_seed,
)


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


# --- the API contract's helpers ----------------------------------------------------------------

def test_as_tensor_accepts_numpy_float64_and_casts_once():
    import numpy as np

    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    t = as_tensor(x, "X", ndim=2, dtype=torch.float32)
    assert t.dtype == torch.float32 and t.shape == (3, 2)
    assert x.dtype == np.float64  # the input is untouched
    f = torch.ones(2, dtype=torch.float16)
    assert as_tensor(f, "X", dtype=torch.float32).dtype == torch.float32
    same = torch.ones(2)
    assert as_tensor(same, "X") is same


def test_as_tensor_refuses_complex_nan_and_floats_as_ints():
    with pytest.raises(TypeError, match="X must be real"):
        as_tensor(torch.ones(2, dtype=torch.complex64), "X")
    with pytest.raises(ValueError, match="X contains 1 NaN or infinite"):
        as_tensor([1.0, float("inf")], "X")
    with pytest.raises(TypeError, match="idx must be an integer"):
        as_tensor([0.5], "idx", dtype=torch.int64)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32, torch.int64])
def test_check_labels_any_int_dtype_becomes_int64(dtype):
    y = torch.tensor([0, 2, 1], dtype=dtype)
    out = check_labels(y, "y", 3)
    assert out.dtype == torch.int64 and out.tolist() == [0, 2, 1] and y.dtype == dtype


def test_check_labels_refuses_columns_floats_and_out_of_range():
    with pytest.raises(ValueError, match="y must be 1-D"):
        check_labels(torch.zeros(3, 1, dtype=torch.long), "y")
    with pytest.raises(TypeError, match="y must hold integer class labels"):
        check_labels([0.0, 1.0], "y")
    with pytest.raises(ValueError, match="y must be < n_classes=2"):
        check_labels([0, 2], "y", 2)
    with pytest.raises(ValueError, match="y must be >= 0"):
        check_labels([-1, 0], "y")
    with pytest.raises(ValueError, match="y must have 3 labels"):
        check_labels([0, 1], "y", n=3)


def test_check_int_range_choice():
    assert check_int(3, "k", 1) == 3
    with pytest.raises(TypeError, match="k must be an int"):
        check_int(2.0, "k")
    with pytest.raises(TypeError, match="k must be an int"):
        check_int(True, "k")
    with pytest.raises(ValueError, match=r"k must lie in \[1, inf\]"):
        check_int(0, "k", 1)
    for bad in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match="lr"):
            check_range(bad, "lr", 0)
    with pytest.raises(ValueError, match="lr must be finite"):
        check_range(float("inf"), "lr")
    Mode = Literal["a", "b"]
    assert check_choice("a", "mode", Mode) == "a"
    with pytest.raises(ValueError, match="mode must be one of 'a', 'b'; got 'c'"):
        check_choice("c", "mode", Mode)


def test_resolve_seed():
    g = torch.Generator().manual_seed(3)
    assert resolve_seed(g) is g
    a = torch.rand(3, generator=resolve_seed(5))
    assert torch.equal(a, torch.rand(3, generator=resolve_seed(5)))
    state = torch.random.get_rng_state()
    resolve_seed(None)
    assert torch.equal(state, torch.random.get_rng_state())
    with pytest.raises(ValueError, match="seed"):
        resolve_seed(-1)
    with pytest.raises(TypeError, match="seed"):
        resolve_seed(1.5)


def test_check_writable_dir(tmp_path):
    assert check_writable_dir(tmp_path / "a" / "b", "--out").is_dir()
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="--out must be a directory"):
        check_writable_dir(f, "--out")


def test_require_names_the_extra():
    from iclr25._optional import require

    assert require("math", "ot").sqrt(4) == 2
    with pytest.raises(ImportError, match=r"pip install 'iclr25\[chem\]'"):
        require("no_such_module_xyz", "chem")
    with pytest.raises(ValueError, match="extra"):
        require("math", "nope")


def test_check_tensor_takes_a_read_only_array_silently():
    # issue 68's walk: pandas' copy-on-write to_numpy() is read-only; torch warned
    # "The given NumPy array is not writable" with a source line, and the tensor shared it
    import warnings

    import numpy as np

    from iclr25._checks import check_tensor

    a = np.arange(6.0).reshape(2, 3)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = check_tensor(a, "X", ndim=2)
    t += 1  # the tensor is the library's own: the caller's array stays as it was
    assert a[0, 0] == 0.0 and t[0, 0] == 1.0


def test_column_spread_is_one_reading_of_every_kind():
    """The one spread behind every "standardise" hint (LoCoDL, COX): the same for a tensor,
    dense or sparse (COO and CSR), an array and scipy.sparse; zero columns left out."""
    X = np.array([[1.0, 200.0, 0.0], [-1.0, -200.0, 0.0]])   # rms 1 and 200
    t = torch.from_numpy(X)
    for x in (X, sp.csr_matrix(X), t, t.to_sparse(), t.to_sparse_csr(), t.float()):
        assert column_spread(x) == pytest.approx(200.0), type(x)
    std = np.random.default_rng(0).normal(size=(500, 4))
    assert column_spread((std - std.mean(0)) / std.std(0)) == pytest.approx(1.0)
    assert column_spread(std * [1.0, 1.0, 1.0, 10 * SPREAD_HINT]) > SPREAD_HINT
    assert column_spread(np.zeros((3, 2))) == 1.0


def test_like_input_follows_the_inputs_kind():
    out = torch.arange(3)
    assert like_input(out, torch.zeros(1)) is out
    for X in (np.zeros(1), [0.0], None):
        got = like_input((out, out + 1), X)
        assert all(isinstance(a, np.ndarray) for a in got) and got[1].tolist() == [1, 2, 3]
