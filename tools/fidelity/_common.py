"""Shared plumbing of the fixture scripts: arguments, the official checkout's commit, saving.

Every script imports the official code from ``--official PATH`` (a local checkout, never
copied into the project) and writes ``tests/fidelity/fixtures/<name>.npz``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fidelity" / "fixtures"
MAX_BYTES = 200_000


def parse(doc: str, official: bool = True) -> argparse.Namespace:
    """``--official PATH`` (put first on ``sys.path``) and ``--out DIR``."""
    ap = argparse.ArgumentParser(description=doc)
    if official:
        ap.add_argument("--official", required=True, type=Path,
                        help="local checkout of the official repository")
    ap.add_argument("--out", type=Path, default=FIXTURES, help="fixture folder")
    args = ap.parse_args()
    if official:
        args.official = args.official.resolve()
        if not args.official.is_dir():
            sys.exit(f"--official {args.official} is not a folder")
        sys.path.insert(0, str(args.official))
    return args


def commit(path: Path) -> str:
    """The checkout's HEAD commit (recorded in the fixture and the manifest)."""
    return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def save(out: Path, name: str, source: str, **arrays) -> Path:
    """Write ``<out>/<name>.npz`` (compressed) with ``_source`` = commit or provenance."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.npz"
    arrs = {k: np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v)
            for k, v in arrays.items()}
    np.savez_compressed(path, _source=np.array(source), **arrs)
    size = path.stat().st_size
    if size > MAX_BYTES:
        sys.exit(f"{path} is {size} bytes > {MAX_BYTES}")
    print(f"wrote {path} ({size} bytes): {', '.join(sorted(arrs))}")
    return path


def stub(*names: str, force: bool = False) -> None:
    """Empty stand-ins for modules the official file imports but the fixture's functions never
    call (e.g. torchvision for data loading), when PyPI's build for this torch is missing;
    ``force``: even where the module exists (an official helper that runs a demo at import)."""
    import importlib.util
    import types

    for name in names:
        top = name.split(".")[0]
        if not force and name in sys.modules or not force and (top not in sys.modules
                                   and importlib.util.find_spec(top) is not None):
            continue
        mod = types.ModuleType(name)
        mod.__getattr__ = _stub_attr(name)
        sys.modules[name] = mod
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, mod)


def _stub_attr(modname: str):
    def attr(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        # a do-nothing class: constructible, callable, any method a no-op
        return type(name, (), {"__module__": modname, "__init__": lambda self, *a, **k: None,
                               "__call__": lambda self, *a, **k: None,
                               "__getattr__": lambda self, n: (lambda *a, **k: None)})
    return attr
