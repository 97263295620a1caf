"""extract_mesh's weld (issue 68, walk 11): no near-coincident vertices, so trimesh keeps the
mesh watertight; the surface itself unchanged."""

import numpy as np
import pytest
import torch
from scipy.spatial import cKDTree

from iclr25.claims import torch_threads
from iclr25.matern import KernelSurface

trimesh = pytest.importorskip("trimesh")
pytestmark = pytest.mark.usefixtures("one_thread")

SIDE = 0.01      # a 1-cm cube in metres: trimesh merges vertices within 1e-8 (absolute)
RES = 45         # grid nodes every 1.1 / 44 = 0.025 normalised units: on the cube's faces


@pytest.fixture(scope="module")
def cube():
    """A Matérn surface fitted to a cube whose faces, and the points on them, lie on grid
    planes (and nodes) of a RES³ grid, so f is ~0 there and marching cubes puts several
    vertices at nearly one place (walk 11's rounded cube at 128³: 8 zero-area faces)."""
    t = torch.arange(-4, 5, dtype=torch.float64) / 10          # face lattice, edges left out
    a, b = (x.flatten() for x in torch.meshgrid(t, t, indexing="ij"))
    P, N = [], []
    for axis in range(3):
        others = [i for i in range(3) if i != axis]
        for side in (-1.0, 1.0):
            p = torch.zeros(len(a), 3, dtype=torch.float64)
            p[:, axis], p[:, others[0]], p[:, others[1]] = side / 2, a, b
            n = torch.zeros_like(p)
            n[:, axis] = side
            P.append(p)
            N.append(n)
    with torch_threads(1):
        return KernelSurface(nu=1.5, length_scale=0.5).fit(SIDE * torch.cat(P), torch.cat(N))


def _mesh(surf, res, **kw):
    with torch_threads(1):
        return tuple(x.numpy() for x in surf.extract_mesh(res, **kw))


@pytest.fixture(scope="module")
def cube_mesh(cube):
    """The cube's (V, F) at RES³, as extract_mesh returns it by default."""
    return _mesh(cube, RES)


@pytest.fixture(scope="module")
def cube_raw(cube):
    """Marching cubes' own (V, F) of the cube at RES³."""
    return _mesh(cube, RES, weld=False)


def _step(surf, res):
    """The grid step in the input's units."""
    return 1.1 / (res - 1) / surf.scale_


def _closest_pair(v):
    return float(cKDTree(v).query(v, k=2)[0][:, 1].min())


def test_the_raw_mesh_has_near_coincident_vertices_that_trimesh_merges(cube_raw):
    # the cause, pinned: marching cubes' own mesh is closed but holds vertex pairs far
    # closer than trimesh's merge tolerance, and merging them leaves degenerate faces
    v, f = cube_raw
    assert trimesh.Trimesh(v, f, process=False).is_watertight
    assert _closest_pair(v) < 1e-8
    assert not trimesh.Trimesh(v, f).is_watertight


def test_cube_on_grid_planes_is_watertight_under_trimesh_defaults(cube, cube_mesh):
    v, f = cube_mesh
    mesh = trimesh.Trimesh(v, f)                             # trimesh's default processing
    assert mesh.is_watertight and mesh.is_winding_consistent
    assert mesh.euler_number == 2
    assert len(mesh.vertices) == len(v) and len(mesh.faces) == len(f)
    assert _closest_pair(v) > 1e-4 * _step(cube, RES)       # nothing left to collapse
    assert (mesh.area_faces > 0).all()
    assert mesh.volume > 0                                   # still oriented outwards


def test_the_weld_leaves_the_surface_as_it_was(cube_raw, cube_mesh):
    raw, welded = (trimesh.Trimesh(v, f, process=False) for v, f in (cube_raw, cube_mesh))
    assert len(welded.vertices) < len(raw.vertices)          # it did merge here
    np.testing.assert_allclose(welded.area, raw.area, rtol=1e-6)
    np.testing.assert_allclose(welded.volume, raw.volume, rtol=1e-6)


@pytest.fixture(scope="module")
def sphere_surface():
    g = torch.Generator().manual_seed(0)
    d = torch.randn(200, 3, generator=g, dtype=torch.float64)
    d = d / d.norm(dim=1, keepdim=True)
    with torch_threads(1):
        return KernelSurface(nu=0.5, length_scale=0.5).fit(0.3 * d, d)


def test_a_sphere_keeps_its_vertices_up_to_merging(sphere_surface):
    surf, res = sphere_surface, 40
    raw_v, raw_f = _mesh(surf, res, weld=False)
    v, f = _mesh(surf, res)
    # every kept vertex is one of marching cubes' own, in their order ...
    idx = cKDTree(raw_v).query(v)[1]
    assert np.array_equal(raw_v[idx], v) and (np.diff(idx) > 0).all()
    # ... and every dropped one lies within the weld's tolerance of a kept one
    assert float(cKDTree(v).query(raw_v)[0].max()) <= 1e-4 * _step(surf, res)
    np.testing.assert_allclose(trimesh.Trimesh(v, f).area,
                               trimesh.Trimesh(raw_v, raw_f, process=False).area, rtol=1e-6)
    assert trimesh.Trimesh(v, f).is_watertight


def test_weld_must_be_a_bool(cube):
    with pytest.raises(TypeError, match="weld must be a bool, got str"):
        cube.extract_mesh(12, weld="yes")
