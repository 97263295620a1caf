"""ToSS's pseudo-labels against a dense transcription of the paper's Algorithm 1 (fixture
``toss_pseudo``; ToSS's repository cannot be had here, see MANIFEST.toml)."""

import torch

from iclr25.toss import pseudo_covariance

JITTER = 1e-4   # Algorithm 1 adds none: ours is removed again before comparing


def _ours(g, **kwargs) -> torch.Tensor:
    X, Y = torch.tensor(g["X"]), torch.tensor(g["Y"])
    return pseudo_covariance(X, Y, n_neighbors=int(g["k"]), jitter=JITTER,
                             **kwargs) - JITTER * torch.eye(Y.shape[1], dtype=Y.dtype)


def test_defaults_are_algorithm_1(golden):
    g = golden("toss_pseudo")
    torch.testing.assert_close(_ours(g), torch.tensor(g["cov"]), rtol=0, atol=1e-12)


def test_leave_out_differs_from_algorithm_1(golden):
    # x is its own nearest neighbour (distance 0, the largest weight): leaving it out is not
    # the paper's algorithm, and the difference is of the labels' own size
    g = golden("toss_pseudo")
    out = _ours(g, include_self=False)
    torch.testing.assert_close(out, torch.tensor(g["cov_leave_out"]), rtol=0, atol=1e-12)
    paper = torch.tensor(g["cov"])
    assert float((out - paper).abs().max()) > 0.1 * float(paper.abs().max())
