"""The package layout stays as docs/architecture.rst has it: modules named for what they hold."""

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


def _private_functions(tree, private=False):
    """``(name, line, parameters besides self/cls)`` of every private def: a name with a
    leading underscore (not a dunder), a method of a private class, or a nested def."""
    import ast

    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            yield from _private_functions(node, private or node.name.startswith("_"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
            n = len(names) - (names[:1] in (["self"], ["cls"])) + bool(a.vararg) + bool(a.kwarg)
            own = node.name.startswith("_") and not node.name.endswith("__")
            if private or own or not isinstance(tree, (ast.Module, ast.ClassDef)):
                yield node.name, node.lineno, n
            yield from _private_functions(node, True)


def test_no_private_function_takes_more_than_seven_parameters():
    # issue 62: where more travel together they are a named dataclass or tuple (cox's _Data,
    # gsd's _Run, ies's _Loop, ...); public signatures are the documented API
    import ast
    from pathlib import Path

    src = Path(iclr25.__file__).parent
    wide = [f"{p.relative_to(src)}:{line} {name} ({n})" for p in sorted(src.rglob("*.py"))
            for name, line, n in _private_functions(ast.parse(p.read_text())) if n > 7]
    assert not wide, wide
