import pytest
import torch


@pytest.fixture
def four_tree():
    """A hand-made tree R -> A, R -> B, A -> G whose answer is known exactly.

    R is an 8x8 checkerboard of +-1. Each "fine-tuning" zeroes one more row: A zeroes row 0,
    B row 1, G rows 0 and 2. A zeroed row changes 8 entries by 1, so in units of
    u = sqrt(8/64) the RMS distances are 1 on the true edges, sqrt(2) for R-G and A-B and
    sqrt(3) for B-G: the spanning tree is unique. Rows stay sign-balanced, so the excess
    kurtosis is exactly 1/p - 3 with p the non-zero fraction: R -2, A = B = -13/7, G = -5/3,
    increasing along every edge.
    """
    n = 8
    R = (-1.0) ** (torch.arange(n)[:, None] + torch.arange(n)[None, :]).float()

    def zero(W, rows):
        W = W.clone()
        W[rows] = 0
        return W

    mk = lambda W: {"layer.weight": W, "layer.bias": torch.zeros(n),  # noqa: E731
                    "head.weight": torch.ones(3, n)}
    models = {"R": mk(R), "A": mk(zero(R, [0])), "B": mk(zero(R, [1])), "G": mk(zero(R, [0, 2]))}
    parents = {"R": None, "A": "R", "B": "R", "G": "A"}
    return models, parents
