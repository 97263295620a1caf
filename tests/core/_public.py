"""The public API as the sweeps over it see it: every name in each method's ``__all__``."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from typing import Any

import iclr25


def public_objects() -> Iterator[tuple[str, str, Any]]:
    """``(method, name, object)`` for every name in every method package's ``__all__``."""
    for info in pkgutil.iter_modules(iclr25.__path__):
        if info.name.startswith("_") or not info.ispkg:
            continue
        mod = importlib.import_module(f"iclr25.{info.name}")
        for name in getattr(mod, "__all__", ()):
            yield info.name, name, getattr(mod, name)
