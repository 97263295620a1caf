"""Import an optional dependency, or say which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

EXTRAS = ("ot", "graph", "chem", "rl", "image", "3d", "data", "transformers", "lightning")


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise an ImportError naming ``pip install 'iclr25[extra]'``.

    Call it at the top of a method module that needs a field's library, so importing the
    method without its extra fails at once with the fix in the message.
    """
    if extra not in EXTRAS:
        raise ValueError(f"extra must be one of {', '.join(EXTRAS)}; got {extra!r}")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module} is needed here but is not installed: pip install 'iclr25[{extra}]'"
        ) from exc
