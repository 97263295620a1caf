"""The package layout stays as DESIGN.md has it: modules named for what they hold."""

from __future__ import annotations

import importlib
import pkgutil

import iclr25


def test_no_module_is_shadowed_by_an_exported_name():
    # `import iclr25.lsdt.train as m` gave the function `train` while both were called so
    for info in pkgutil.iter_modules(iclr25.__path__):
        if not info.ispkg:
            continue
        pkg = importlib.import_module(f"iclr25.{info.name}")
        modules = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
        assert not modules & set(pkg.__all__), (info.name, modules & set(pkg.__all__))
