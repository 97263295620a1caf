"""SCHull against shihhsinwang0214/SCHull's ``get_schull`` (fixture ``schull``, MANIFEST.toml)."""

import numpy as np
import pytest
import torch

from iclr25.schull import schull_graph


def _edges(ei):
    return set(map(tuple, np.asarray(ei).T.tolist()))


@pytest.mark.parametrize("n", [12, 30, 60])
def test_graph_attributes_radial(golden, n):
    g = golden("schull")
    G = schull_graph(torch.tensor(g[f"pos{n}"]))
    ei = G.edge_index.numpy()
    assert _edges(ei) == _edges(g[f"edges{n}"]) and ei.shape == g[f"edges{n}"].shape
    ref = {e: a for e, a in zip(map(tuple, g[f"edges{n}"].T.tolist()), g[f"attr{n}"],
                                strict=True)}
    attr = np.stack([ref[e] for e in map(tuple, ei.T.tolist())])
    np.testing.assert_allclose(G.edge_attr.numpy(), attr, rtol=0, atol=1e-14)
    np.testing.assert_allclose(G.radial.numpy(), g[f"radial{n}"], rtol=1e-14, atol=0)


def test_centroid_atom_is_linked_not_dropped(golden):
    """Deliberate deviation: the official code drops an atom at the centroid (index 6 here);
    ours keeps the official hull edges of the others and links it to its 3 nearest atoms."""
    g = golden("schull")
    ei = schull_graph(torch.tensor(g["pos_centroid"])).edge_index.numpy()
    np.testing.assert_array_equal(ei, g["ours_centroid_edges"])
    ours = _edges(ei)
    assert {e for e in ours if 6 not in e} == _edges(g["official_centroid_edges"])
    assert len({e for e in ours if e[0] == 6}) == 3
    assert not (g["official_centroid_edges"] == 6).any()
