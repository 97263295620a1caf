"""Loading the golden fixtures of ``tests/fidelity`` (see MANIFEST.toml and tools/fidelity/)."""

from pathlib import Path

import numpy as np
import pytest
import torch

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def golden():
    """``golden(name)`` -> ``{key: array}`` of ``fixtures/<name>.npz`` (float64 kept)."""
    def load(name: str) -> dict[str, np.ndarray]:
        with np.load(FIXTURES / f"{name}.npz") as z:
            return {k: z[k] for k in z.files}
    return load


@pytest.fixture(autouse=True)
def _one_thread():
    """Fixture tests are tiny: one torch thread, and float32 default restored afterwards."""
    n, dt = torch.get_num_threads(), torch.get_default_dtype()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
    torch.set_default_dtype(dt)
