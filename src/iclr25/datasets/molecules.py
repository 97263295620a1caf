"""Molecules offline: RDKit conformers with MMFF94 energies and forces; .xyz/.sdf readers.

RDKit is imported lazily (``require("rdkit", "chem")``), so importing this module, and the
methods that use it, works without the ``chem`` extra until a molecule is actually made.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr25._checks import check_int
from iclr25._contract import FloatArray, Ints1D, checked
from iclr25._io import check_readable

__all__ = ["ELEMENTS", "Conformers", "conformers", "read_sdf", "read_xyz", "write_xyz"]

# symbols by atomic number (index 0 unused), enough for organic and inorganic molecules
ELEMENTS = (
    "X H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge "
    "As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe"
).split()
_NUMBER = {s.lower(): z for z, s in enumerate(ELEMENTS) if z}


@checked
@dataclass(frozen=True)
class Conformers:
    """Conformers of one molecule.

    Attributes:
        smiles: the input SMILES. z: (N,) int64 atomic numbers (hydrogens included).
        pos: (C, N, 3) float64 positions in Å.
        energy: (C,) MMFF94 energy in kcal/mol (NaN where RDKit has no MMFF94 parameters).
        forces: (C, N, 3) -dE/dpos in kcal/mol/Å (NaN likewise).
    """

    smiles: str
    z: torch.Tensor
    pos: torch.Tensor
    energy: torch.Tensor
    forces: torch.Tensor


def _rdkit():
    from iclr25._optional import require

    require("rdkit", "chem")
    from rdkit import Chem, RDLogger
    from rdkit.Chem import AllChem

    RDLogger.DisableLog("rdApp.*")
    return Chem, AllChem


@checked
def conformers(smiles: str, n: int, *, seed: int = 0) -> Conformers:
    """``n`` ETKDGv3 conformers of a molecule with hydrogens, MMFF94 energy and forces.

    Embedding uses ``randomSeed = seed + 1`` (RDKit gives identical conformers for seed 0)
    and the geometries are not optimised, so energies spread like an MD trajectory's.

    Args:
        smiles: a SMILES string.
        n: number of conformers, >= 1.
        seed: non-negative int.

    Returns:
        :class:`Conformers`.

    Raises:
        TypeError: ``smiles`` not a str. ValueError: invalid ``smiles``; ``n < 1``; ``seed``
            negative. RuntimeError: RDKit could not embed ``n`` distinct conformers.
        ImportError: RDKit missing (names the ``chem`` extra).
    """
    if not isinstance(smiles, str):
        raise TypeError(f"smiles must be a str, got {type(smiles).__name__}")
    check_int(n, "n", 1)
    check_int(seed, "seed", 0)
    Chem, AllChem = _rdkit()
    mol = Chem.MolFromSmiles(smiles)
    if mol is None or mol.GetNumAtoms() == 0:
        raise ValueError(f"smiles is not a valid SMILES string: {smiles!r}")
    mol = Chem.AddHs(mol)
    params = AllChem.ETKDGv3()
    params.randomSeed = seed + 1
    params.numThreads = 1
    ids = list(AllChem.EmbedMultipleConfs(mol, numConfs=n, params=params))
    if len(ids) < n:
        raise RuntimeError(f"RDKit embedded {len(ids)} of {n} conformers of {smiles!r}")
    pos = np.stack([mol.GetConformer(c).GetPositions() for c in ids])
    if n > 1 and np.allclose(pos, pos[:1]):
        raise RuntimeError(f"RDKit returned {n} identical conformers of {smiles!r}")
    energy = np.full(n, np.nan)
    forces = np.full(pos.shape, np.nan)
    props = AllChem.MMFFGetMoleculeProperties(mol)
    if props is not None:
        for k, c in enumerate(ids):
            ff = AllChem.MMFFGetMoleculeForceField(mol, props, confId=c)
            energy[k] = ff.CalcEnergy()
            forces[k] = -np.asarray(ff.CalcGrad()).reshape(-1, 3)
    z = torch.tensor([a.GetAtomicNum() for a in mol.GetAtoms()], dtype=torch.int64)
    return Conformers(smiles, z, torch.from_numpy(pos), torch.from_numpy(energy),
                      torch.from_numpy(forces))


@checked
def read_xyz(path: str | os.PathLike, *, comments: bool = False) -> list[tuple]:
    """Read a (multi-frame) .xyz file: a list of ``(z (N,) int64, pos (N, 3) float64)``;
    with ``comments``, ``(z, pos, comment)``: each frame's comment line, stripped (often the
    molecule's name; empty when blank).

    Raises:
        ValueError: unreadable file, a bad count line, too few lines, an unknown element or
            a malformed coordinate line (naming the line number).
    """
    p = Path(path)
    if p.exists():
        check_readable(p, "path")  # a folder, or permission denied
    try:
        lines = p.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"path: cannot read {p} ({exc})") from None
    frames = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        try:
            n = int(lines[i].split()[0])
            if n < 1:
                raise ValueError
        except ValueError:
            raise ValueError(f"{p}: line {i + 1}: expected an atom count, got "
                             f"{lines[i]!r}") from None
        if i + 2 + n > len(lines):
            raise ValueError(f"{p}: line {i + 1}: says {n} atoms but the file has only "
                             f"{len(lines) - i - 2} more line(s)")
        z, xyz = [], []
        for k in range(i + 2, i + 2 + n):
            parts = lines[k].split()
            sym = parts[0] if parts else ""
            num = _NUMBER.get(sym.lower()) or (int(sym) if sym.isdigit() else None)
            if num is None or not 0 < num < len(ELEMENTS):
                raise ValueError(f"{p}: line {k + 1}: unknown element {sym!r}")
            try:
                xyz.append([float(v) for v in parts[1:4]])
                if len(parts) < 4:
                    raise ValueError
            except ValueError:
                raise ValueError(f"{p}: line {k + 1}: expected 'element x y z', got "
                                 f"{lines[k]!r}") from None
            z.append(num)
        frame = (torch.tensor(z, dtype=torch.int64), torch.tensor(xyz, dtype=torch.float64))
        frames.append((*frame, lines[i + 1].strip()) if comments else frame)
        i += 2 + n
    if not frames:
        raise ValueError(f"{p}: no structures in the file")
    return frames


@checked
def write_xyz(path: str | os.PathLike, z: Ints1D, pos: FloatArray, comment: str = "") -> Path:
    """Write one or more frames to .xyz: ``pos`` (N, 3) or (C, N, 3), ``z`` (N,)."""
    zz = torch.as_tensor(z).tolist()
    pp = torch.as_tensor(pos, dtype=torch.float64)
    if pp.ndim == 2:
        pp = pp[None]
    if pp.ndim != 3 or pp.shape[-1] != 3 or pp.shape[1] != len(zz):
        raise ValueError(f"pos must be (N, 3) or (C, N, 3) with N = len(z) = {len(zz)} atoms, "
                         f"got shape {tuple(pp.shape)}")
    out = []
    for frame in pp.tolist():
        out.append(str(len(zz)))
        out.append(comment)
        out += [f"{ELEMENTS[a]} {x:.10f} {y:.10f} {w:.10f}"
                for a, (x, y, w) in zip(zz, frame, strict=True)]
    Path(path).write_text("\n".join(out) + "\n")
    return Path(path)


@checked
def read_sdf(path: str | os.PathLike) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Read every molecule of an .sdf file with RDKit (hydrogens kept).

    Returns:
        list of ``(z (N,) int64, pos (N, 3) float64)``.

    Raises:
        ValueError: unreadable file, or a record RDKit cannot parse or without coordinates.
    """
    Chem, _ = _rdkit()
    p = Path(path)
    if not p.exists():
        raise ValueError(f"path: no such file {p}")
    check_readable(p, "path")  # a folder, or permission denied
    try:
        supplier = Chem.SDMolSupplier(str(p), removeHs=False, sanitize=False)
        mols = list(supplier)
    except OSError as exc:
        raise ValueError(f"path: cannot read {p} ({exc})") from None
    if not mols:
        raise ValueError(f"{p}: no molecules in the file")
    out = []
    for k, m in enumerate(mols):
        if m is None or m.GetNumConformers() == 0:
            raise ValueError(f"{p}: record {k + 1} is not a valid molecule with coordinates")
        z = torch.tensor([a.GetAtomicNum() for a in m.GetAtoms()], dtype=torch.int64)
        out.append((z, torch.from_numpy(np.asarray(m.GetConformer().GetPositions()))))
    return out
