"""ConsistentKMeans: known answers, the paper's invariants, the sklearn contract."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from iclr25.kmeans import ConsistentKMeans, clustering_cost
from iclr25.kmeans.testbed import LazyReplacementKMeans, digits_stream


@pytest.fixture(scope="module")
def digits():
    return digits_stream("sorted", 0, 300)[0]


def blobs(n=400, seed=0):
    centers = np.array([[0, 0], [30, 0], [0, 30], [30, 30]], dtype=float)
    return make_blobs(n, centers=centers, cluster_std=1.0, random_state=seed)


def test_first_distinct_points_open_and_duplicates_do_not():
    a, b, c = [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]
    km = ConsistentKMeans(3, seed=0).fit(np.array([a, a, b, a, c, b, c]))
    assert km.n_center_changes_ == 3
    assert km.change_log_ == [(1, 0, "open"), (3, 1, "open"), (5, 2, "open")]
    assert km.n_reclusterings_ == 0 and km.cost_ == 0.0
    np.testing.assert_array_equal(km.cluster_centers_, [a, b, c])


def test_fewer_distinct_points_than_k_keeps_fewer_centres():
    km = ConsistentKMeans(5, seed=0).fit(np.array([[1.0, 2.0]] * 4))
    assert km.cluster_centers_.shape == (1, 2)
    np.testing.assert_array_equal(km.labels_, [0, 0, 0, 0])


def test_separated_blobs_recovered_with_near_optimal_cost():
    X, y = blobs()
    km = ConsistentKMeans(4, seed=0).fit(X)
    assert adjusted_rand_score(y, km.labels_) == 1.0
    inertia = KMeans(4, n_init=5, random_state=0).fit(X).inertia_
    assert km.cost_ <= 1.32 * inertia
    assert km.score(X) == pytest.approx(-km.cost_, rel=1e-9)


def test_cost_equals_direct_recomputation(digits):
    km = ConsistentKMeans(10, seed=0)
    for s in range(0, 300, 70):
        km.partial_fit(digits[s:s + 70])
        seen = digits[:min(s + 70, 300)]
        direct = ((seen[:, None] - km.cluster_centers_[None]) ** 2).sum(-1).min(1).sum()
        assert km.cost_ == pytest.approx(direct, rel=1e-9)
        assert km.n_samples_seen_ == len(seen)


def test_consistency_at_least_k_and_non_decreasing(digits):
    km = ConsistentKMeans(10, seed=0)
    seen = []
    for s in range(0, 300, 50):
        km.partial_fit(digits[s:s + 50])
        seen.append(km.n_center_changes_)
    assert seen[-1] >= 10 and seen == sorted(seen)
    assert km.n_reclusterings_ >= 1
    assert km.n_center_changes_ == len(km.change_log_)


def test_fit_equals_row_by_row_and_chunked(digits):
    X = digits[:150]
    full = ConsistentKMeans(10, seed=3).fit(X)
    rows = ConsistentKMeans(10, seed=3)
    for x in X:
        rows.partial_fit(x[None])
    chunks = ConsistentKMeans(10, seed=3)
    for s in range(0, 150, 37):
        chunks.partial_fit(X[s:s + 37])
    for other in (rows, chunks):
        assert other.change_log_ == full.change_log_
        np.testing.assert_array_equal(other.cluster_centers_, full.cluster_centers_)
        assert other.cost_ == pytest.approx(full.cost_, rel=1e-9)


def test_scaling_by_four_scales_centres_and_keeps_the_log(digits):
    a = ConsistentKMeans(10, seed=0).fit(digits)
    b = ConsistentKMeans(10, seed=0).fit(4 * digits)
    assert a.change_log_ == b.change_log_
    np.testing.assert_allclose(b.cluster_centers_, 4 * a.cluster_centers_, rtol=1e-9)


def test_weighted_cost(digits):
    w = np.random.default_rng(0).integers(1, 4, len(digits)).astype(float)
    km = ConsistentKMeans(10, seed=0).fit(digits, sample_weight=w)
    assert km.cost_ == pytest.approx(clustering_cost(digits, km.cluster_centers_, w), rel=1e-9)
    unweighted = clustering_cost(digits, km.cluster_centers_)
    assert km.cost_ > unweighted


def test_zero_weight_rows_open_nothing():
    X = np.array([[0.0], [5.0], [9.0]])
    km = ConsistentKMeans(2, seed=0).fit(X, sample_weight=[1.0, 0.0, 1.0])
    np.testing.assert_array_equal(km.cluster_centers_, [[0.0], [9.0]])


def test_discrete_centres_are_seen_points(digits):
    km = ConsistentKMeans(10, discrete=True, seed=0).fit(digits)
    idx = km.cluster_center_indices_
    np.testing.assert_array_equal(km.cluster_centers_, digits[idx])


def test_z1_runs_and_costs_in_l1_power(digits):
    km = ConsistentKMeans(10, z=1, seed=0).fit(digits)
    assert km.cost_ == pytest.approx(clustering_cost(digits, km.cluster_centers_, z=1),
                                     rel=1e-9)
    assert km.n_reclusterings_ >= 1


def test_kmeanspp_and_callable_offline(digits):
    pp = ConsistentKMeans(10, offline="kmeans++", seed=0).fit(digits)
    assert pp.n_reclusterings_ >= 1

    def first_rows(X, w, k, rng):
        assert isinstance(rng, torch.Generator) and X.dtype == torch.float64
        return X[:k]

    cb = ConsistentKMeans(10, offline=first_rows, seed=0).fit(digits)
    assert cb.n_reclusterings_ >= 1


def test_ours_changes_less_than_lazy_replacement(digits):
    ours = ConsistentKMeans(10, seed=0).fit(digits)
    lazy = LazyReplacementKMeans(10, seed=0).fit(digits)
    assert ours.n_center_changes_ < lazy.n_center_changes_


def test_slots_are_stable_between_their_own_changes(digits):
    km = ConsistentKMeans(10, seed=0)
    km.partial_fit(digits[:100])
    before, t0 = km.cluster_centers_.copy(), km.n_samples_seen_
    km.partial_fit(digits[100:])
    changed = {slot for t, slot, _ in km.change_log_ if t > t0}
    for j in range(10):
        if j not in changed:
            np.testing.assert_array_equal(km.cluster_centers_[j], before[j])


def test_seeded_determinism_and_pickle_resume(digits):
    a = ConsistentKMeans(10, seed=7).fit(digits)
    b = ConsistentKMeans(10, seed=7).partial_fit(digits[:120])
    b = pickle.loads(pickle.dumps(b)).partial_fit(digits[120:])
    assert a.change_log_ == b.change_log_
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_tensors_in_tensors_out_and_input_untouched(digits):
    X = torch.tensor(digits[:100], dtype=torch.float32)
    Xc = X.clone()
    km = ConsistentKMeans(10, seed=0).fit(X)
    assert torch.equal(X, Xc)
    assert isinstance(km.cluster_centers_, torch.Tensor)
    assert km.cluster_centers_.dtype == torch.float32
    assert km.predict(X).dtype == torch.int64
    assert torch.equal(km.predict(X), km.labels_)
    assert km.transform(X).shape == (100, 10)
    Xn = digits[:100].copy()
    kn = ConsistentKMeans(10, seed=0).fit(Xn)
    np.testing.assert_array_equal(Xn, digits[:100])
    assert isinstance(kn.labels_, np.ndarray) and kn.labels_.dtype == np.int64
    kl = ConsistentKMeans(10, seed=0).fit(Xn.tolist())
    np.testing.assert_array_equal(kl.cluster_centers_, kn.cluster_centers_)


def test_clone_and_get_params():
    km = ConsistentKMeans(5, eps=0.3, z=1, offline="kmeans++", n_init=2, discrete=True, seed=4)
    c = clone(km)
    assert c.get_params() == km.get_params()
    assert not hasattr(c, "cluster_centers_")
    fitted = ConsistentKMeans(2, seed=0).fit(np.eye(3))
    assert not hasattr(clone(fitted), "n_center_changes_")


@parametrize_with_checks(
    [ConsistentKMeans(seed=0)],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data":
            "a stream: a repeated row is a separate arrival, so weights and repeats differ",
    },
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_runs_on_the_inputs_device(device, digits, dtype):
    """Float64 arithmetic and CPU draws: the same seed gives the same change log and, to
    rounding, the same cost on every device, whatever the input dtype."""
    X = torch.tensor(digits[:120], device=device, dtype=dtype)
    km = ConsistentKMeans(10, seed=0).fit(X)
    assert km.cluster_centers_.device.type == device.type
    assert km.cluster_centers_.dtype == dtype
    assert km.labels_.device.type == device.type
    ref = ConsistentKMeans(10, seed=0).fit(digits[:120])
    assert km.change_log_ == ref.change_log_
    assert km.cost_ == pytest.approx(ref.cost_, rel=1e-9)


def test_a_generator_seed_of_any_device_is_accepted(device, digits):
    X = torch.tensor(digits[:60], device=device)
    g = torch.Generator(device=device).manual_seed(0)
    km = ConsistentKMeans(5, offline="kmeans++", seed=g).fit(X)
    assert km.n_reclusterings_ > 0 and km.cluster_centers_.device.type == device.type
