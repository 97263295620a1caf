"""SCHull graph: known answers, the paper's guarantees, invariances, batching, errors."""

import numpy as np
import pytest
import torch
from scipy.spatial import ConvexHull

from iclr25.schull import (
    is_connected,
    is_rigid,
    knn_graph,
    num_undirected_edges,
    radius_graph,
    rigidity_rank,
    schull_graph,
)
from iclr25.schull.testbed import official_port

OCTA = torch.tensor([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]])
CUBE = torch.tensor([[a, b, c] for a in (0.0, 1) for b in (0.0, 1) for c in (0.0, 1)])


def _pairs(ei):
    e = ei.numpy()
    return {(int(a), int(b)) for a, b in e.T if a < b}


def _generic(n, seed=0):
    return torch.randn(n, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_octahedron_has_its_12_edges():
    g = schull_graph(OCTA)
    assert g.edge_index.dtype == torch.int64 and g.edge_index.shape == (2, 24)
    opposite = {(0, 1), (2, 3), (4, 5)}
    assert _pairs(g.edge_index) == {(a, b) for a in range(6) for b in range(a + 1, 6)} - opposite
    assert torch.allclose(g.radial, torch.ones(6))
    # edge_attr = [chord, u_j - u_i]: adjacent octahedron vertices are sqrt(2) apart
    assert torch.allclose(g.edge_attr[:, 0], torch.full((24,), 2**0.5))
    i, j = g.edge_index
    assert torch.allclose(g.edge_attr[:, 1:], OCTA[j] - OCTA[i])


def test_cube_has_18_edges_including_its_12():
    e = _pairs(schull_graph(CUBE).edge_index)
    assert len(e) == 18 == 3 * 8 - 6
    cube_edges = {(a, b) for a in range(8) for b in range(a + 1, 8)
                  if float((CUBE[a] - CUBE[b]).abs().sum()) == 1.0}
    assert cube_edges <= e


@pytest.mark.parametrize("n", [4, 9, 40, 200])
def test_generic_points_are_scipys_hull_rigid_and_3n_minus_6(n):
    pos = _generic(n, n)
    g = schull_graph(pos)
    u = pos - pos.mean(0)
    u = (u / u.norm(dim=1, keepdim=True)).numpy()
    ref = set()
    for s in ConvexHull(u).simplices:
        ref |= {tuple(sorted((int(s[a]), int(s[b])))) for a, b in ((0, 1), (1, 2), (0, 2))}
    assert _pairs(g.edge_index) == ref
    assert num_undirected_edges(g.edge_index, n) == 3 * n - 6
    assert is_connected(g.edge_index, n)
    assert rigidity_rank(pos, g.edge_index) == 3 * n - 6


def test_edge_index_lists_both_directions_sorted():
    ei = schull_graph(_generic(30)).edge_index
    assert set(map(tuple, ei.T.tolist())) == set(map(tuple, ei.flip(0).T.tolist()))
    key = ei[0] * 30 + ei[1]
    assert bool((key[1:] > key[:-1]).all())


def _rot(seed):
    q, _ = torch.linalg.qr(_generic(3, seed))
    return q


def test_rotation_translation_scaling_invariance():
    pos = _generic(50, 1)
    g = schull_graph(pos)
    moved = schull_graph(3.7 * pos @ _rot(5).T + torch.tensor([1.0, -2.0, 5.0], dtype=pos.dtype))
    assert torch.equal(g.edge_index, moved.edge_index)
    assert torch.allclose(g.edge_attr[:, 0], moved.edge_attr[:, 0])
    assert torch.allclose(3.7 * g.radial, moved.radial)


def test_permutation_equivariance():
    pos = _generic(40, 2)
    perm = torch.randperm(40, generator=torch.Generator().manual_seed(0))
    g = schull_graph(pos)
    gp = schull_graph(pos[perm])
    mapped = {tuple(sorted((int(perm[a]), int(perm[b])))) for a, b in _pairs(gp.edge_index)}
    assert mapped == _pairs(g.edge_index)
    assert torch.allclose(gp.radial, g.radial[perm])


@pytest.mark.parametrize("smiles", ["C", "O=C=O", "C#C", "c1ccccc1", "FS(F)(F)(F)(F)F"])
def test_degenerate_molecules_connected_and_sparse(smiles):
    from iclr25.datasets.molecules import conformers

    for pos in conformers(smiles, 2).pos:
        n = len(pos)
        ei = schull_graph(pos).edge_index
        assert is_connected(ei, n)
        assert num_undirected_edges(ei, n) <= 3 * n - 6


def test_centroid_atom_and_collinear_known_answers():
    # methane-like: centre atom links to 3 nearest, hull of the 4 H is a tetrahedron: 9 = 3N-6
    tet = torch.tensor([[0.0, 0, 0], [1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]])
    assert num_undirected_edges(schull_graph(tet).edge_index, 5) == 9
    # the official port drops the centre atom: disconnected
    assert not is_connected(official_port(tet), 5)
    # collinear H-C-C-H: two rays chained by radius, one hull edge between outermost atoms
    line = torch.tensor([[-1.6, 0.0, 0], [-0.6, 0, 0], [0.6, 0, 0], [1.6, 0, 0]])
    assert _pairs(schull_graph(line).edge_index) == {(0, 1), (2, 3), (0, 3)}


def test_atoms_on_one_ray_are_chained_not_all_to_all():
    # two atoms on each of 6 octahedron rays: official links every pair of adjacent-ray atoms
    pos = torch.cat([OCTA, 2 * OCTA])
    e = num_undirected_edges(schull_graph(pos).edge_index, 12)
    assert e == 12 + 6 <= 3 * 12 - 6
    assert num_undirected_edges(official_port(pos), 12) == 48 > 3 * 12 - 6


def test_small_structures():
    assert schull_graph(torch.tensor([[0.0, 0, 0]])).edge_index.shape == (2, 0)
    assert _pairs(schull_graph(torch.tensor([[0.0, 0, 0], [1, 0, 0]])).edge_index) == {(0, 1)}
    tri = torch.tensor([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    assert len(_pairs(schull_graph(tri).edge_index)) == 3


def test_planar_points_connected_sparse():
    pos = _generic(12, 3)
    pos[:, 2] = 0
    ei = schull_graph(pos).edge_index
    assert is_connected(ei, 12) and num_undirected_edges(ei, 12) <= 3 * 12 - 6


def test_batched_equals_per_structure_with_offsets():
    a, b = _generic(10, 4), _generic(7, 5) + 100
    batch = torch.tensor([0] * 10 + [1] * 7)
    g = schull_graph(torch.cat([a, b]), batch)
    ga, gb = schull_graph(a), schull_graph(b)
    assert torch.equal(g.edge_index, torch.cat([ga.edge_index, gb.edge_index + 10], dim=1))
    assert torch.allclose(g.edge_attr, torch.cat([ga.edge_attr, gb.edge_attr]))
    assert torch.allclose(g.radial, torch.cat([ga.radial, gb.radial]))


def test_deterministic_numpy_float32_and_input_untouched():
    pos = _generic(25, 6)
    keep = pos.clone()
    g1 = schull_graph(pos)
    assert torch.equal(pos, keep)
    assert torch.equal(g1.edge_index, schull_graph(pos).edge_index)
    g_np = schull_graph(pos.numpy())
    assert torch.equal(g_np.edge_index, g1.edge_index)
    g32 = schull_graph(pos.float())
    assert g32.edge_attr.dtype == torch.float32 and g1.edge_attr.dtype == torch.float64


def test_edge_attr_is_differentiable():
    pos = _generic(10, 7).requires_grad_()
    g = schull_graph(pos)
    (g.edge_attr.sum() + g.radial.sum()).backward()
    assert pos.grad is not None and torch.isfinite(pos.grad).all()


@pytest.mark.parametrize(("pos", "batch", "kw", "err", "match"), [
    (torch.zeros(4, 2), None, {}, ValueError, "pos"),
    (torch.zeros(0, 3), None, {}, ValueError, "pos"),
    (torch.tensor([[0.0, 0, float("nan")], [1, 0, 0]]), None, {}, ValueError, "pos"),
    (torch.ones(4, 3, dtype=torch.int64), None, {}, TypeError, "pos"),
    (torch.tensor([[0.0, 0, 0], [1, 0, 0], [0.0, 0, 0]]), None, {}, ValueError,
     "duplicate.*rows 0 and 2"),
    (torch.eye(3), torch.tensor([0, 0]), {}, ValueError, "batch"),
    (torch.eye(3), torch.tensor([1, 0, 0]), {}, ValueError, "batch.*sorted"),
    (torch.eye(3), torch.tensor([-1, 0, 0]), {}, ValueError, "batch"),
    (torch.eye(3), torch.tensor([0.0, 0, 0]), {}, TypeError, "batch"),
    (torch.eye(3), None, {"tol": 0.0}, ValueError, "tol"),
    (torch.eye(3), None, {"merge_tol": -1.0}, ValueError, "merge_tol"),
])
def test_errors_name_the_argument(pos, batch, kw, err, match):
    with pytest.raises(err, match=match):
        schull_graph(pos, batch, **kw)


def test_same_point_in_two_structures_is_not_a_duplicate():
    pos = torch.cat([OCTA, OCTA])
    g = schull_graph(pos, torch.tensor([0] * 6 + [1] * 6))
    assert num_undirected_edges(g.edge_index, 12) == 24


# --- peers: radius / kNN in torch against brute force -------------------------------------

def test_radius_graph_matches_brute_force():
    pos = _generic(60, 8)
    batch = torch.tensor([0] * 25 + [1] * 35)
    ei = radius_graph(pos, 1.2, batch, max_num_neighbors=1000)
    d = torch.cdist(pos, pos)
    ref = (d <= 1.2) & (batch[:, None] == batch[None]) & ~torch.eye(60, dtype=torch.bool)
    got = torch.zeros(60, 60, dtype=torch.bool)
    got[ei[1], ei[0]] = True
    assert torch.equal(got, ref) and ei.shape[1] == int(ref.sum())
    capped = radius_graph(pos, 10.0, batch, max_num_neighbors=3)
    assert int(torch.bincount(capped[1]).max()) == 3
    assert radius_graph(pos, 1.2, loop=True).shape[1] == radius_graph(pos, 1.2).shape[1] + 60


def test_knn_graph_matches_brute_force():
    pos = _generic(30, 9)
    ei = knn_graph(pos, 4)
    d = torch.cdist(pos, pos).fill_diagonal_(float("inf"))
    ref = d.argsort(dim=1)[:, :4]
    for i in range(30):
        assert set(ei[0][ei[1] == i].tolist()) == set(ref[i].tolist())
    small = knn_graph(pos[:3], 5)
    assert small.shape[1] == 6


@pytest.mark.parametrize(("fn", "kw", "match"), [
    (radius_graph, {"r": 0.0}, "r"), (radius_graph, {"r": 1.0, "max_num_neighbors": 0},
                                       "max_num_neighbors"),
    (knn_graph, {"k": 0}, "k"),
])
def test_peer_errors(fn, kw, match):
    with pytest.raises(ValueError, match=match):
        fn(_generic(5), **kw)


def test_rigidity_checks():
    pos = _generic(8, 10)
    full = torch.combinations(torch.arange(8)).T
    assert is_rigid(pos, full)
    assert not is_rigid(pos, full[:, :10])
    ring = torch.stack([torch.arange(8), (torch.arange(8) + 1) % 8])
    assert not is_connected(ring[:, :6], 8) and is_connected(ring, 8)
    np.testing.assert_equal(num_undirected_edges(torch.cat([ring, ring.flip(0)], 1), 8), 8)
