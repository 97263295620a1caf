"""Checks every method package must pass (the layout and API contract of docs/architecture.rst)."""

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import iclr25
from iclr25 import claims

SRC = Path(iclr25.__file__).parent
METHODS = claims.method_packages()
README = (SRC.parents[1] / "README.md").read_text()


def test_paper_numbers_unique_and_match_readme():
    papers = claims.papers()
    numbers = [p.number for p in papers.values()]
    assert len(set(numbers)) == len(numbers)
    for name, p in papers.items():
        assert p.short == name
        row = re.search(rf"^\| {p.number} \|.*`iclr25\.{name}` \| (\w+)", README, re.M)
        assert row and row.group(1) == "available", f"README row {p.number} for {name}"


@pytest.mark.parametrize("name", METHODS)
def test_public_api_documented(name):
    mod = importlib.import_module(f"iclr25.{name}")
    assert mod.__doc__, f"iclr25.{name} has no module docstring"
    for attr in mod.__all__:
        obj = getattr(mod, attr)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"iclr25.{name}.{attr} has no docstring"


@pytest.mark.parametrize("name", METHODS)
def test_no_method_imports_another(name):
    others = set(METHODS) - {name}
    for path in (SRC / name).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            for m in mods:
                parts = m.split(".")
                assert not (parts[0] == "iclr25" and len(parts) > 1 and parts[1] in others), \
                    f"{path.relative_to(SRC)} imports {m}"


def test_no_backend_switch_in_source():
    switch = re.compile(r"matplotlib\.use\(|import matplotlib\.pyplot|from matplotlib import pyp")
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                 if switch.search(p.read_text())]
    assert offenders == []


def test_importing_methods_and_claims_leaves_backend_unchanged():
    code = ("import matplotlib; matplotlib.use('svg'); from iclr25 import claims; "
            "claims.discover(); import iclr25.cli; print(matplotlib.get_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "svg"
