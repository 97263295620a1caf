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


def test_every_experiment_declares_what_a_draw_draws():
    # issue 74: the runner repeats experiments on independent draws; each says what is
    # random in it, and the fields of repeats the draws replace are fields of its Setting
    from iclr25 import claims

    exps = {c.experiment.id: c.experiment for c in claims.discover().values()}
    assert not [e.id for e in exps.values() if not e.random]
    for e in exps.values():
        for f in e.per_draw:
            assert isinstance(getattr(e.full, f), (tuple, int)), (e.id, f)


def _code_lines(node):
    """A def's lines from ``def`` to its end, less its docstring's."""
    import ast

    n = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str):
        n -= first.end_lineno - first.lineno + 1
    return n


def test_code_lines_are_counted_without_the_docstring():
    import ast

    fn = ast.parse('def f(x):\n    """One.\n\n    Two.\n    """\n    y = x\n    return y\n')
    assert _code_lines(fn.body[0]) == 3
    assert _code_lines(ast.parse("def g():\n    return 1\n").body[0]) == 2


def test_no_function_runs_over_sixty_code_lines():
    # issue 67: a longer body is cut into named steps (lowlight's _seed_outputs, ies's
    # _Loop, ...); the docstring does not count (tools/long_functions.py lists both counts)
    import ast
    from pathlib import Path

    src = Path(iclr25.__file__).parent
    long = [f"{p.relative_to(src)}:{node.lineno} {node.name} ({_code_lines(node)})"
            for p in sorted(src.rglob("*.py")) for node in ast.walk(ast.parse(p.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and _code_lines(node) > 60]
    assert not long, long


def _requirement_closure(dist: str, extras: tuple[str, ...]) -> set[str]:
    """Normalised names of ``dist``'s distributions with ``extras``, and theirs, recursively."""
    import importlib.metadata as md
    import re

    from packaging.requirements import Requirement

    seen: set[tuple[str, tuple[str, ...]]] = set()
    todo = [(dist, extras)]
    while todo:
        name, ex = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if (key, ex) in seen:
            continue
        seen.add((key, ex))
        try:
            reqs = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for r in map(Requirement, reqs):
            if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in ex or ("",)):
                todo.append((r.name, tuple(sorted(r.extras))))
    return {k for k, _ in seen}


def test_tests_import_at_module_level_only_what_ci_installs():
    # CI installs .[all,test,cluster] (.ci/run); a module-level import of anything else (twice
    # pandas, present here, absent there) fails CI's collection, not a local run
    import ast
    import importlib.metadata as md
    import re
    import sys
    from pathlib import Path

    installed = _requirement_closure("iclr25", ("all", "test", "cluster"))
    dists = md.packages_distributions()
    root = Path(__file__).resolve().parents[1]
    # the repository's own modules (tests' helpers, docs/_ext) are not distributions
    local = {p.stem for d in ("tests", "docs", "benchmarks", "examples")
             for p in (root.parent / d).rglob("*.py")} | {"iclr25", "tests"}
    bad = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for mod in (n.split(".")[0] for n in names):
                if mod in sys.stdlib_module_names or mod in local or mod == "__future__":
                    continue
                owners = {re.sub(r"[-_.]+", "-", d).lower() for d in dists.get(mod, [mod])}
                if not owners & installed:
                    bad.append(f"{path.relative_to(root)}: {mod}")
    assert not bad, f"module-level imports CI does not install: {bad}"
