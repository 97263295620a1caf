import numpy as np
import pytest
import torch
from sklearn.metrics import balanced_accuracy_score

from iclr25.los import (
    balanced_accuracy,
    group_accuracy,
    logits_magnitude,
    per_class_accuracy,
    regularized_std,
    shot_groups,
)


def _loop_reference(z, y, variant):
    """Per-class positive/negative entry lists, built with plain loops."""
    z, y = z.numpy(), y.numpy()
    K = z.shape[1]
    out = []
    for k in range(K):
        if variant == "class":
            pos, neg = z[y == k, k], z[y != k, k]
        else:
            rows = z[y == k]
            pos = rows[:, k]
            neg = np.delete(rows, k, axis=1).ravel()
        out.append((pos, neg))
    return out


def test_hand_computed_example():
    z = torch.tensor([[3.0, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 4.0]])
    y = torch.tensor([0, 0, 1, 1])
    # class 0: positives z0 = {3, 1} mean 2, negatives z0 = {0, 2} mean 1 -> 1
    # class 1: positives z1 = {2, 4} mean 3, negatives z1 = {1, 0} mean 0.5 -> 2.5
    torch.testing.assert_close(logits_magnitude(z, y),
                               torch.tensor([1.0, 2.5], dtype=torch.float64))
    # sample margins: class 0 rows (3-1, 1-0) -> 1.5; class 1 rows (2-0, 4-2) -> 2
    torch.testing.assert_close(logits_magnitude(z, y, variant="sample"),
                               torch.tensor([1.5, 2.0], dtype=torch.float64))
    # class-0 positive std of {3, 1} = 1, negative std of {0, 2} = 1 -> RSD 1 / 1
    torch.testing.assert_close(regularized_std(z, y, spread="positive")[0],
                               torch.tensor(1.0, dtype=torch.float64))


@pytest.mark.parametrize("variant", ["class", "sample"])
@pytest.mark.parametrize("spread", ["positive", "negative", "pooled"])
def test_matches_loop_reference(variant, spread):
    g = torch.Generator().manual_seed(1)
    z = torch.randn(300, 6, generator=g) * 2
    y = torch.randint(0, 6, (300,), generator=g)
    ref = _loop_reference(z, y, variant)
    loma = np.array([p.mean() - n.mean() for p, n in ref])
    var = {"positive": [p.var() for p, _ in ref], "negative": [n.var() for _, n in ref],
           "pooled": [(p.var() + n.var()) / 2 for p, n in ref]}[spread]
    np.testing.assert_allclose(logits_magnitude(z, y, variant=variant).numpy(), loma, rtol=1e-5)
    np.testing.assert_allclose(regularized_std(z, y, variant=variant, spread=spread).numpy(),
                               np.sqrt(var) / loma, rtol=1e-5)


def test_invariances():
    g = torch.Generator().manual_seed(2)
    z = torch.randn(200, 5, generator=g, dtype=torch.float64)
    y = torch.randint(0, 5, (200,), generator=g)
    for variant in ("class", "sample"):
        # LoMa is linear in the logits, RSD scale free
        torch.testing.assert_close(logits_magnitude(3 * z, y, variant=variant),
                                   3 * logits_magnitude(z, y, variant=variant))
        torch.testing.assert_close(regularized_std(3 * z, y, variant=variant),
                                   regularized_std(z, y, variant=variant))
    bias = torch.randn(5, generator=g, dtype=torch.float64)
    torch.testing.assert_close(logits_magnitude(z + bias, y), logits_magnitude(z, y))
    shift = torch.randn(200, 1, generator=g, dtype=torch.float64)
    torch.testing.assert_close(logits_magnitude(z + shift, y, variant="sample"),
                               logits_magnitude(z, y, variant="sample"))


def test_metric_errors():
    z = torch.randn(4, 3)
    with pytest.raises(ValueError, match=r"no sample of class\(es\) \[2\]"):
        logits_magnitude(z, torch.tensor([0, 1, 1, 0]))
    with pytest.raises(ValueError, match=r"y must be < n_classes=3"):
        regularized_std(z, torch.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError, match="variant"):
        logits_magnitude(z, torch.tensor([0, 1, 2, 0]), variant="row")
    with pytest.raises(ValueError, match="spread"):
        regularized_std(z, torch.tensor([0, 1, 2, 0]), spread="all")
    with pytest.raises(ValueError, match="at least 2 classes"):
        logits_magnitude(torch.randn(4, 1), torch.zeros(4, dtype=torch.long))


def test_accuracies_match_sklearn():
    g = torch.Generator().manual_seed(3)
    y = torch.randint(0, 8, (500,), generator=g)
    p = torch.where(torch.rand(500, generator=g) < 0.6, y, torch.randint(0, 8, (500,), generator=g))
    assert balanced_accuracy(p, y, 8) == pytest.approx(balanced_accuracy_score(y, p))
    counts = torch.tensor([500, 200, 101, 100, 20, 19, 5, 1])
    groups = shot_groups(counts)
    assert groups["many"].tolist() == [True, True, True] + [False] * 5
    assert groups["medium"].tolist() == [False] * 3 + [True, True] + [False] * 3
    assert groups["few"].tolist() == [False] * 5 + [True] * 3
    acc = per_class_accuracy(p, y, 8)
    ga = group_accuracy(p, y, counts)
    assert ga["few"] == pytest.approx(float(acc[5:].mean()))
    assert ga["all"] == pytest.approx(balanced_accuracy_score(y, p))
    with pytest.raises(ValueError, match="no sample"):
        per_class_accuracy(torch.tensor([0, 1]), torch.tensor([0, 1]), 3)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32])
def test_narrow_integer_labels(dtype):
    # logits_magnitude used to crash in scatter on uint8/int16 labels
    g = torch.Generator().manual_seed(4)
    z, y = torch.randn(40, 4, generator=g), torch.arange(40) % 4
    torch.testing.assert_close(logits_magnitude(z, y.to(dtype)), logits_magnitude(z, y))
    torch.testing.assert_close(regularized_std(z, y.to(dtype), variant="sample"),
                               regularized_std(z, y, variant="sample"))
    assert balanced_accuracy(y.to(dtype), y.to(dtype), 4) == 1.0


def test_label_column_and_complex_logits_refused():
    z, y = torch.randn(4, 2), torch.tensor([0, 1, 0, 1])
    with pytest.raises(ValueError, match="y must be 1-D"):
        logits_magnitude(z, y[:, None])
    with pytest.raises(TypeError, match="logits must be real"):
        logits_magnitude(z.to(torch.complex64), y)
    with pytest.raises(ValueError, match="y_pred must have 4 labels"):
        balanced_accuracy(y[:3], y, 2)
