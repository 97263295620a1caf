"""List the package's long and complex functions (issue 67's counts).

    python tools/long_functions.py [--lines 60] [--complexity 12]

Length: a def's lines, decorators aside, with and without its docstring ("code-only"; what
tests/core/test_layout.py limits). Complexity: ruff's mccabe (C901) at the given level.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "iclr25"


def functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def lengths(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """(lines, code-only lines) of a def: from ``def`` to its last line, less the docstring."""
    total = node.end_lineno - node.lineno + 1
    first = node.body[0]
    doc = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
           and isinstance(first.value.value, str))
    return total, total - (first.end_lineno - first.lineno + 1 if doc else 0)


def long_functions(limit: int, src: Path = SRC) -> list[tuple[str, int, int]]:
    """``(path:line name, lines, code-only lines)`` of every def over ``limit`` lines."""
    out = []
    for p in sorted(src.rglob("*.py")):
        for f in functions(ast.parse(p.read_text())):
            n, code = lengths(f)
            if n > limit:
                out.append((f"{p.relative_to(src.parent)}:{f.lineno} {f.name}", n, code))
    return out


def complex_functions(level: int, src: Path = SRC) -> list[tuple[str, int]]:
    """``(path:line name, complexity)`` of every def above ``level`` (ruff's C901)."""
    res = subprocess.run(["ruff", "check", str(src), "--select", "C901", "--output-format",
                          "json", "--config", f"lint.mccabe.max-complexity={level}"],
                         capture_output=True, text=True)
    out = []
    for d in json.loads(res.stdout or "[]"):
        words = d["message"].split()   # "`name` is too complex (N > level)"
        out.append((f"{Path(d['filename']).relative_to(src.parent)}:{d['location']['row']} "
                    f"{words[0].strip('`')}", int(words[4].lstrip("("))))
    return sorted(out, key=lambda t: -t[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=60)
    ap.add_argument("--complexity", type=int, default=12)
    a = ap.parse_args()
    long = long_functions(a.lines)
    print(f"{len(long)} functions over {a.lines} lines, "
          f"{sum(c > a.lines for _, _, c in long)} of them without their docstrings:")
    for where, n, code in sorted(long, key=lambda t: -t[2]):
        print(f"  {n:4d} {code:4d}  {where}")
    cx = complex_functions(a.complexity)
    print(f"{len(cx)} functions over C901 {a.complexity}:")
    for where, c in cx:
        print(f"  {c:4d}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
