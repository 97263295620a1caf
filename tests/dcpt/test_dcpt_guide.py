"""The DCPT guide's API block runs as written: every name it uses it defines or imports."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

GUIDE = Path(__file__).parents[2] / "docs" / "guide" / "dcpt.md"


def test_the_guides_api_block_defines_every_name_but_the_users_photo():
    # issue 68's walk: `pairs` and `noise_pairs` were never built, and AllInOnePairs is not
    # in iclr25.dcpt (`dcpt.AllInOnePairs` raised AttributeError)
    block = re.search(r"```python\n(.*?)```", GUIDE.read_text(), re.S).group(1)
    tree = ast.parse(block)
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert used - defined == {"photo"}, used - defined
