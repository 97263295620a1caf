"""The manifest covers every method, and every fixture is small, made by its script, tested."""

from pathlib import Path

import numpy as np
import pytest

from iclr25.claims import method_packages

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
FIELDS = ("method", "name", "kind", "official", "commit", "file", "function", "inputs",
          "tolerance", "why", "agreement")
# methods without official code, and ToSS, whose own repository cannot be had here
NO_OFFICIAL_CODE = {"crh", "kmeans", "locodl", "toss"}


def _entries():
    with open(HERE / "MANIFEST.toml", "rb") as f:
        return tomllib.load(f)["fixture"]


def test_every_method_has_an_entry():
    methods = {e["method"] for e in _entries()}
    assert set(method_packages()) <= methods, sorted(set(method_packages()) - methods)
    assert len(method_packages()) == 19


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["name"])
def test_entry(entry):
    assert all(str(entry.get(k, "")).strip() for k in FIELDS), entry
    name = entry["name"]
    path = HERE / "fixtures" / f"{name}.npz"
    assert path.stat().st_size <= 200_000
    assert (ROOT / "tools" / "fidelity" / f"{name}.py").is_file()
    test = HERE / f"test_fidelity_{name}.py"
    assert f'golden("{name}")' in test.read_text()
    with np.load(path) as z:
        source = str(z["_source"])
    kind = entry["kind"]
    assert kind in ("official", "official-index", "hand-solved", "paper-algorithm")
    if kind == "official":
        assert source == entry["commit"]
    elif kind == "official-index":
        assert "index" in source and "index" in entry["commit"]
    elif kind == "paper-algorithm":
        assert entry["method"] in NO_OFFICIAL_CODE and "algorithm" in source
    else:
        assert entry["method"] in NO_OFFICIAL_CODE and "hand" in source
