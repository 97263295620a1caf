"""SCHull features, the PyG transform, SchNetCHA, molecules and files, the CLI."""

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.transforms import Center, Compose

from iclr25.schull import (
    SchNetCHA,
    SCHull,
    conformers,
    read_sdf,
    read_xyz,
    schull_features,
    schull_graph,
    write_xyz,
)


def _generic(n, seed=0):
    return torch.randn(n, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_features_shape_and_known_octahedron_values():
    octa = torch.tensor([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]],
                        dtype=torch.float64)
    ei = schull_graph(octa).edge_index
    f = schull_features(octa, ei)
    assert f.shape == (24, 7)
    assert torch.allclose(f[:, 0], torch.full((24,), 2**0.5, dtype=torch.float64))
    # on a regular octahedron the reference chord makes 60° with the edge (equilateral faces)
    # or 90° (the square across): every θ is one of the two
    theta = f[:, 1]
    ok = torch.isclose(theta, torch.tensor(np.pi / 3, dtype=torch.float64)) | torch.isclose(
        theta, torch.tensor(np.pi / 2, dtype=torch.float64))
    assert bool(ok.all())
    assert torch.allclose(f[:, 5:], torch.ones(24, 2, dtype=torch.float64))


def test_features_invariant_to_rotation_translation():
    pos = _generic(30, 1)
    q, _ = torch.linalg.qr(_generic(3, 2))
    q = q * torch.sign(torch.det(q))  # a proper rotation: signed torsions keep their sign
    ei = schull_graph(pos).edge_index
    f = schull_features(pos, ei)
    g = schull_features(pos @ q.T + 4.0, ei)
    assert torch.allclose(f, g, atol=1e-9)


def test_features_gradcheck():
    pos = _generic(9, 3).requires_grad_()
    ei = schull_graph(pos).edge_index
    assert torch.autograd.gradcheck(lambda p: schull_features(p, ei), (pos,))


def test_features_errors():
    pos = _generic(6)
    with pytest.raises(ValueError, match="edge_index"):
        schull_features(pos, torch.zeros(3, 4, dtype=torch.int64))
    with pytest.raises(ValueError, match="edge_index"):
        schull_features(pos, torch.tensor([[0], [9]]))
    with pytest.raises(TypeError, match="edge_index"):
        schull_features(pos, torch.zeros(2, 3))


def test_transform_on_data_batch_and_compose():
    a = Data(pos=_generic(10, 4).float())
    b = Data(pos=_generic(7, 5).float())
    ta, tb = SCHull()(a.clone()), SCHull()(b.clone())
    assert ta.schull_edge_attr.shape == (ta.schull_edge_index.shape[1], 7)
    batched = Batch.from_data_list([ta, tb])
    direct = SCHull()(Batch.from_data_list([a, b]))
    assert torch.equal(batched.schull_edge_index, direct.schull_edge_index)
    assert torch.allclose(batched.schull_edge_attr, direct.schull_edge_attr, atol=1e-5)
    both = Compose([Center(), SCHull(features=False)])(a.clone())
    assert both.schull_edge_attr.shape[1] == 4
    assert torch.equal(both.schull_edge_index, ta.schull_edge_index)
    with pytest.raises(ValueError, match="pos"):
        SCHull()(Data(x=torch.ones(3, 2)))
    with pytest.raises(ValueError, match="tol"):
        SCHull(tol=0)


def test_schnetcha_forward_forces_and_plain_schnet():
    c = conformers("CCO", 3)
    n = c.pos.shape[1]
    pos = c.pos.reshape(-1, 3).float().requires_grad_()
    batch = torch.arange(3).repeat_interleave(n)
    ei = schull_graph(pos, batch).edge_index
    z = c.z.repeat(3)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = SchNetCHA(hidden=16, layers=2)
    e = model(z, pos, batch, ei)
    assert e.shape == (3,)
    (f,) = torch.autograd.grad(-e.sum(), pos)
    assert torch.isfinite(f).all() and f.abs().sum() > 0
    plain = SchNetCHA(hidden=16, layers=2, cha_rate=1.0)
    assert not plain.uses_hull and plain(z, pos, batch).shape == (3,)
    with pytest.raises(ValueError, match="schull_edge_index"):
        model(z, pos, batch)
    with pytest.raises(ValueError, match="cha_rate"):
        SchNetCHA(cha_rate=0.0)


def test_conformers_distinct_seeded_and_labelled():
    c = conformers("CCO", 4, seed=0)
    assert c.pos.shape == (4, 9, 3) and c.z.dtype == torch.int64
    assert not torch.allclose(c.pos[0], c.pos[1])
    assert torch.isfinite(c.energy).all() and c.forces.shape == c.pos.shape
    assert torch.equal(conformers("CCO", 4, seed=0).pos, c.pos)
    assert not torch.equal(conformers("CCO", 4, seed=1).pos, c.pos)


def test_conformers_errors():
    with pytest.raises(ValueError, match="smiles"):
        conformers("C1CC(", 2)
    with pytest.raises(ValueError, match="n"):
        conformers("C", 0)
    with pytest.raises(TypeError, match="smiles"):
        conformers(3, 1)


def test_xyz_round_trip_multi_frame(tmp_path):
    c = conformers("CCO", 2)
    write_xyz(tmp_path / "m.xyz", c.z, c.pos, comment="ethanol")
    frames = read_xyz(tmp_path / "m.xyz")
    assert len(frames) == 2
    for (z, pos), ref in zip(frames, c.pos, strict=True):
        assert torch.equal(z, c.z) and torch.allclose(pos, ref, atol=1e-9)


@pytest.mark.parametrize(("text", "match"), [
    ("x\n\nC 0 0 0\n", "line 1"),
    ("3\n\nC 0 0 0\n", "line 1.*only"),
    ("2\n\nC 0 0 0\nQq 1 0 0\n", "line 4.*Qq"),
    ("1\n\nC 0 zero 0\n", "line 3"),
])
def test_xyz_errors_name_the_line(tmp_path, text, match):
    (tmp_path / "bad.xyz").write_text(text)
    with pytest.raises(ValueError, match=match):
        read_xyz(tmp_path / "bad.xyz")


def test_sdf_round_trip_and_errors(tmp_path):
    from rdkit import Chem
    from rdkit.Chem import AllChem

    mol = Chem.AddHs(Chem.MolFromSmiles("CCO"))
    AllChem.EmbedMolecule(mol, randomSeed=1)
    with Chem.SDWriter(str(tmp_path / "m.sdf")) as w:
        w.write(mol)
    [(z, pos)] = read_sdf(tmp_path / "m.sdf")
    assert z.tolist() == [a.GetAtomicNum() for a in mol.GetAtoms()]
    assert np.allclose(pos.numpy(), mol.GetConformer().GetPositions(), atol=1e-4)
    (tmp_path / "bad.sdf").write_text("not a molecule\n")
    with pytest.raises(ValueError):
        read_sdf(tmp_path / "bad.sdf")
    with pytest.raises(ValueError, match="path"):
        read_sdf(tmp_path / "missing.sdf")


def test_cli_graph_says_a_planar_structure_cannot_be_rigid(tmp_path):
    # issue 68 walk 5: ethylene printed `rigid False` beside a rigid methane with no word that
    # no graph of a planar structure is rigid in 3-D (the claim leaves them out)
    from typer.testing import CliRunner

    from iclr25.schull.cli import app
    from iclr25.schull.metrics import is_rigid

    ethylene = np.array([[0, 0, .667], [0, 0, -.667], [0, .923, 1.238], [0, -.923, 1.238],
                         [0, .923, -1.238], [0, -.923, -1.238]])
    methane = np.array([[0, 0, 0], [.629, .629, .629], [-.629, -.629, .629],
                        [-.629, .629, -.629], [.629, -.629, -.629]])
    complete = np.array([(i, j) for i in range(6) for j in range(6) if i != j]).T
    assert not is_rigid(ethylene, complete)           # even the complete graph flexes
    np.save(tmp_path / "flat.npy", ethylene)
    np.save(tmp_path / "tetra.npy", methane)
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "flat.npy")])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[1].count("False (planar)") == 2, r.output      # SCHull and radius
    assert lines[-1].startswith("planar: no graph of a planar structure"), r.output
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "tetra.npy")])
    assert r.exit_code == 0 and "planar" not in r.output, r.output


def test_cli_graph_says_a_nearly_planar_rigid_structure_is_planar(tmp_path):
    # issue 68 walk 6: an RDKit benzene conformer (9e-05 Å off its plane) printed a bare
    # `rigid True` beside the line that no planar structure is rigid in 3-D
    from typer.testing import CliRunner

    from iclr25.schull.cli import app
    from iclr25.schull.graph import schull_graph
    from iclr25.schull.metrics import is_rigid

    ang = np.arange(6) * np.pi / 3
    ring = np.c_[np.cos(ang), np.sin(ang), 1e-4 * (-1) ** np.arange(6)]
    benzene = np.r_[1.39 * ring[:, :2].T, ring[:, 2:].T].T
    benzene = np.r_[benzene, np.c_[2.47 * ring[:, :2], -ring[:, 2:]]]
    assert is_rigid(benzene, schull_graph(benzene).edge_index)   # the rank alone says rigid
    np.save(tmp_path / "benzene.npy", benzene)
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "benzene.npy")])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[1].split("|")[0].rstrip().endswith("True (nearly planar: 0.00035 Å)"), r.output
    assert "within 0.1 Å of a plane (a line) is rigid only through" in lines[-1], r.output


def test_cli_graph_says_a_linear_structure_is_collinear(tmp_path):
    # issue 68 walk 7: RDKit's ethyne (H-C≡C-H, 0.004 Å off its line) printed `True (nearly
    # planar)`: true of a line, but the departure that makes the rank full is from the line;
    # CO2 (3 atoms on a line) printed a bare `False`
    from typer.testing import CliRunner

    from iclr25.schull.cli import app

    ethyne = np.array([[-1.66, 0.0, 0.0], [-0.60, 0.003, 0.0], [0.60, -0.003, 0.001],
                       [1.66, 0.0, 0.0]])
    co2 = np.array([[-1.16, 0.0, 0.0], [0.0, 0.0, 0.0], [1.16, 0.0, 0.0]])
    for name, pos in (("ethyne", ethyne), ("co2", co2)):
        np.save(tmp_path / f"{name}.npy", pos)
        r = CliRunner().invoke(app, ["graph", str(tmp_path / f"{name}.npy")])
        assert r.exit_code == 0, r.output
        ours = r.output.splitlines()[1].split("|")[0].rstrip()
        off = np.linalg.svd(pos - pos.mean(0), compute_uv=False)[1]   # the departure
        assert ours.endswith(f"True (nearly collinear: {off:.2g} Å)" if name == "ethyne"
                             else "False (collinear)"), r.output
        assert "nor of a collinear one of 3 or more" in r.output, r.output


def test_cli_graph_on_xyz_sdf_npy(tmp_path):
    from typer.testing import CliRunner

    from iclr25.schull.cli import app

    c = conformers("CC(=O)O", 2)
    write_xyz(tmp_path / "a.xyz", c.z, c.pos)
    np.save(tmp_path / "a.npy", c.pos[0].numpy())
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "a.xyz"), "--out",
                                 str(tmp_path / "e.npz")])
    assert r.exit_code == 0, r.output
    assert "connected" in r.output and "radius" in r.output
    saved = np.load(tmp_path / "e.npz")
    assert saved["edge_index_0"].shape[0] == 2
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "a.npy"), "--out",
                                 str(tmp_path / "e.csv")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "e.csv").read_text().startswith("structure,source,target")
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "a.txt")])
    assert r.exit_code == 2
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "a.xyz"), "--radius", "-1"])
    assert r.exit_code == 2


def test_cli_graph_names_xyz_molecules_by_their_comment_line(tmp_path):
    # issue 68 walk 5: methane, water... on the comment lines were printed as 0, 1, ...
    from typer.testing import CliRunner

    from iclr25.schull.cli import app

    (tmp_path / "m.xyz").write_text(
        "3\n water \nO 0 0 0.117\nH 0 0.757 -0.469\nH 0 -0.757 -0.469\n"
        "2\n\nH 0 0 0\nH 0 0 0.74\n"
        "3\nwater2\nO 0 0 0.117\nH 0 0.757 -0.469\nH 0 -0.757 -0.469\n")
    frames = read_xyz(tmp_path / "m.xyz", comments=True)
    assert [c for *_, c in frames] == ["water", "", "water2"]
    assert len(read_xyz(tmp_path / "m.xyz")[0]) == 2  # the default stays (z, pos)
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "m.xyz"), "--out",
                                 str(tmp_path / "e.npz")])
    assert r.exit_code == 0, r.output
    names = ["water", "1", "water2"]  # a blank comment line falls back to the index
    assert [line.split()[0] for line in r.output.splitlines()[1:4]] == names
    assert np.load(tmp_path / "e.npz")["names"].tolist() == names


def test_cli_graph_names_sdf_molecules_by_their_name(tmp_path):
    from rdkit import Chem
    from rdkit.Chem import AllChem
    from typer.testing import CliRunner

    from iclr25.schull.cli import app

    with Chem.SDWriter(str(tmp_path / "m.sdf")) as w:
        for smi, name in (("CCO", "ethanol"), ("CC(=O)O", ""), ("CCN", "ethylamine")):
            mol = Chem.AddHs(Chem.MolFromSmiles(smi))
            AllChem.EmbedMolecule(mol, randomSeed=1)
            mol.SetProp("_Name", name)
            w.write(mol)
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "m.sdf")])
    assert r.exit_code == 0, r.output
    firsts = [line.split()[0] for line in r.output.splitlines()[1:]]
    assert firsts == ["ethanol", "1", "ethylamine"]  # an empty _Name falls back to the index
    # issue 68: the written edges name the structures as printed (were numbered only)
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "m.sdf"), "--out",
                                 str(tmp_path / "e.csv")])
    assert r.exit_code == 0, r.output
    import csv
    rows = list(csv.DictReader((tmp_path / "e.csv").open()))
    assert [k for k in dict.fromkeys(row["structure"] for row in rows)] == firsts
    r = CliRunner().invoke(app, ["graph", str(tmp_path / "m.sdf"), "--out",
                                 str(tmp_path / "e.npz")])
    saved = np.load(tmp_path / "e.npz")
    assert saved["names"].tolist() == firsts and saved["edge_index_2"].shape[0] == 2


def test_missing_extras_name_them(monkeypatch):
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    monkeypatch.delitem(sys.modules, "iclr25.schull.transform", raising=False)
    with pytest.raises(ImportError, match=r"iclr25\[graph\]"):
        importlib.import_module("iclr25.schull.transform")
    monkeypatch.setitem(sys.modules, "rdkit", None)
    with pytest.raises(ImportError, match=r"iclr25\[chem\]"):
        conformers("C", 1)
