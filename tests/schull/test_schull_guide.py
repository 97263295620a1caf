"""The SCHull guide's API block runs as written on a file of one's own molecules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).parents[2] / "docs" / "guide" / "schull.md"


def test_the_guides_api_block_runs_as_written(tmp_path, monkeypatch):
    # issue 68 walk: the block used `pos` and `n` that it never defined (read_sdf gives
    # (Z, pos) pairs), so it stopped at its second line
    Chem = pytest.importorskip("rdkit.Chem")
    from rdkit.Chem import AllChem

    pytest.importorskip("torch_geometric")
    with Chem.SDWriter(str(tmp_path / "ligands.sdf")) as w:
        for smiles in ("CC(=O)Oc1ccccc1C(=O)O", "CCO"):
            mol = Chem.AddHs(Chem.MolFromSmiles(smiles))
            AllChem.EmbedMolecule(mol, randomSeed=1)
            w.write(mol)
    (block,) = re.findall(r"## The API in five lines\n\n```python\n(.*?)```",
                          GUIDE.read_text(), re.S)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(block, scope)
    assert len(scope["molecules"]) == 2 and scope["pos"].shape == (21, 3)   # aspirin, with H
    g = scope["g"]
    assert g.edge_index.shape[0] == 2 and g.edge_index.shape[1] > 0
    # the block's last expression, evaluated again: aspirin's graph is connected and rigid
    schull = scope["schull"]
    assert schull.is_connected(g.edge_index, len(scope["pos"]))
    assert schull.is_rigid(scope["pos"], g.edge_index)
