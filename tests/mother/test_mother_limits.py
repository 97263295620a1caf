"""Issue 56: MoTHer keeps float64 weights in float64, and draws lineages of any depth."""

from __future__ import annotations

import sys

import torch

from iclr25.mother import ModelForest, build_forest, pairwise_distances


def test_float64_weights_keep_differences_below_float32_resolution():
    g = torch.Generator().manual_seed(0)
    W = torch.randn(8, 8, generator=g, dtype=torch.float64) + 10.0
    step = 1e-9  # far below float32's spacing near 10 (9.5e-7)
    models = {f"m{i}": {"w": W + i * step} for i in range(3)}
    D = pairwise_distances(models)
    assert D.dtype == torch.float64
    exact = torch.tensor([[0.0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=torch.float64) * step
    torch.testing.assert_close(D, exact, rtol=1e-4, atol=0)
    # the chain is recovered from the distances alone (it was a 3-way tie in float32)
    forest = build_forest(D, None, list(models), direction="none")
    assert forest.parents["m0"] in (None, "m1") and forest.parents["m2"] in (None, "m1")


def test_float32_models_still_stack_in_float32_and_mixed_ones_in_float64():
    a = {"w": torch.eye(4)}
    b = {"w": torch.eye(4, dtype=torch.float64) * (1 + 1e-10)}
    D = pairwise_distances({"a": a, "b": b})
    assert float(D[0, 1]) > 0  # the float64 model's difference survives


def test_plotting_a_lineage_1200_deep_does_not_recurse():
    depth = 1200
    parents = {"m0": None, **{f"m{i}": f"m{i - 1}" for i in range(1, depth)}}
    forest = ModelForest.from_parents(parents)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)  # well below the depth: any recursive walk would fail
    try:
        fig = forest.plot()
    finally:
        sys.setrecursionlimit(limit)
    ax = fig.axes[0]
    assert len(ax.collections) >= 1
