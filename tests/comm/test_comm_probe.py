"""The synergy probe weights its classes (issue 72): at ~10% positives an unweighted probe
predicts the majority class and reads 0.5 whatever the features hold."""

import numpy as np
import torch

from iclr25.comm import linear_probe
from iclr25.datasets.views import bimodal_trifeatures


def test_a_weak_minority_signal_is_read_at_its_balanced_optimum():
    # one feature shifted by 1.5 sd on 10% positives: thresholding at the midpoint gives
    # balanced accuracy Phi(0.75) = 0.77; an unweighted fit thresholds near 2.2 sd (0.61)
    g = np.random.default_rng(0)
    y = (g.random(4000) < 0.1).astype(np.int64)
    F = np.c_[1.5 * y + g.normal(size=4000), g.normal(size=(4000, 3))]
    assert 0.72 <= linear_probe(F[:2000], y[:2000], F[2000:], y[2000:]) <= 0.82
    noise = g.normal(size=(4000, 4))
    assert abs(linear_probe(noise[:2000], y[:2000], noise[2000:], y[2000:]) - 0.5) < 0.06


def test_synergy_is_read_from_features_that_carry_it_and_not_from_additive_ones():
    # the texture1-colour2 pair one-hot (what a fused embedding can hold) carries the
    # synergy label; one-hots of texture1 and colour2 side by side (additive over
    # modalities, as Cross's concatenated unimodal features) cannot express it linearly
    tr = bimodal_trifeatures(3000, size=16, seed=0)
    te = bimodal_trifeatures(1000, size=16, seed=1, split="test")

    def pair(d):
        return torch.nn.functional.one_hot(10 * d.texture1 + d.color2, 100).double()

    def side(d):
        eye = torch.eye(10, dtype=torch.float64)
        return torch.cat([eye[d.texture1], eye[d.color2]], 1)

    y_tr, y_te = tr.labels("synergy"), te.labels("synergy")
    assert 0.05 < float(y_tr.float().mean()) < 0.15  # the imbalance the weighting is for
    assert linear_probe(pair(tr), y_tr, pair(te), y_te) >= 0.95
    assert linear_probe(side(tr), y_tr, side(te), y_te) <= 0.7
