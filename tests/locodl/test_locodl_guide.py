"""The LoCoDL guide's API block runs as written on a user's X, y and its raw runs converge."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import torch

GUIDE = Path(__file__).parents[2] / "docs" / "guide" / "locodl.md"


def test_the_guides_api_block_runs_and_its_raw_runs_stop_at_the_optimum():
    # issue 68 walk, round 5: the block used `client_ids` and `x_star` without defining them,
    # and without `tol` its raw runs went on to max_iter (100,000 iterations, 45 s each)
    (block,) = re.findall(r"## The API in five lines\n\n```python\n(.*?)```",
                          GUIDE.read_text(), re.S)
    g = np.random.default_rng(0)
    X = g.normal(size=(120, 4))
    y = (X[:, 0] + 0.5 * g.normal(size=120) > 0).astype(int)
    torch.set_num_threads(1)
    scope = {"X": X, "y": y}
    exec(block, scope)
    runs = scope["runs"]
    assert set(runs) == {"LoCoDL", "GD"}
    for name, run in runs.items():
        assert run.converged, name
        assert run.iterations < 100_000, name
        assert float(torch.linalg.vector_norm(run.x - scope["x_star"])) <= 1e-10, name
