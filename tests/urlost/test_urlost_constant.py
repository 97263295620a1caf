"""Constant columns (blank border pixels) are dropped with a warning that names them."""

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.urlost.organize import SelfOrganizingClusters

g = torch.Generator().manual_seed(0)
BASE = torch.randn(200, 3, generator=g)
# 12 informative columns in 3 blocks of 4 (each a noisy copy of one source) ...
X12 = BASE.repeat_interleave(4, dim=1) + 0.3 * torch.randn(200, 12, generator=g)
# ... and 3 constant columns slipped in at 0, 5 and 14
CONST = [0, 5, 14]
X = torch.zeros(200, 15)
live = [j for j in range(15) if j not in CONST]
X[:, live] = X12
X[:, 5] = 7.0


def test_constant_columns_are_dropped_with_a_warning_naming_them():
    with pytest.warns(UserWarning, match=r"dropped 3 constant column\(s\).*: 0, 5, 14$"):
        soc = SelfOrganizingClusters(3, n_neighbors=3).fit(X)
    ref = SelfOrganizingClusters(3, n_neighbors=3).fit(X12)
    assert soc.dropped_columns_.tolist() == CONST
    assert (soc.labels_[CONST] == -1).all()
    assert isinstance(soc.labels_, np.ndarray)   # a fitted attribute: numpy
    assert np.array_equal(soc.labels_[live], ref.labels_)  # the same clusters as without them
    used = soc.groups_[soc.groups_ >= 0]
    assert sorted(used.tolist()) == live  # every live column in exactly one token
    tok = soc.transform(X)
    assert tok.shape[:2] == (200, 3) and soc.n_features_in_ == 15
    assert torch.equal(soc.groups_, torch.as_tensor(live)[ref.groups_.clamp(0)]
                       .where(~ref.pad_mask_, -1))


def test_too_few_non_constant_columns_is_a_clear_error():
    with pytest.raises(ValueError, match="n_clusters \\(2\\) must be <= .* the 1 non-constant "
                                         "columns of X \\(1 of 2 are constant\\)"):
        SelfOrganizingClusters(2, n_neighbors=1).fit(torch.tensor([[0.0, 1.0], [0.0, 2.0]]))


def test_cli_cluster_warns_in_one_line_and_labels_dropped_columns(tmp_path):
    np.save(tmp_path / "x.npy", X.numpy())
    r = CliRunner().invoke(app, ["urlost", "cluster", str(tmp_path / "x.npy"), "--clusters",
                                 "3", "--neighbors", "3", "--out", str(tmp_path / "l.npy")])
    assert r.exit_code == 0, r.output
    warn = [ln for ln in r.output.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and warn[0].endswith(": 0, 5, 14")
    assert "(3 constant, dropped)" in r.output
    assert np.load(tmp_path / "l.npy")[CONST].tolist() == [-1, -1, -1]
