"""Fixtures shared by every test: one torch thread, and each available device."""

import pytest
import torch

from iclr25.claims import torch_threads


@pytest.fixture
def one_thread():
    """Run the test on one torch thread (tiny networks are faster so), then restore."""
    with torch_threads(1):
        yield


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def device(request):
    """Each device the test should pass on; the CUDA case is skipped without a GPU."""
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return torch.device(request.param)
