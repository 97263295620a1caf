"""``iclr25 list`` reads a copy of the registry (iclr25._catalog) so that it imports no torch;
the copy must say what the registry says."""

from iclr25 import _catalog, claims


def test_catalog_lists_what_the_registry_lists():
    live = _catalog.lines(claims.papers(), claims.discover().values(),
                          claims.unavailable_methods())
    assert _catalog.listing() == live, (
        "iclr25/_catalog.py is stale: run `python -m iclr25._catalog` (with every extra "
        "installed) and commit it")


def test_a_missing_extra_is_listed_as_not_importable(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gymnasium" else real(name, *a))
    shown = _catalog.listing()
    why = "gymnasium is needed here but is not installed: pip install 'iclr25[rl]'"
    assert f"    gsd: not importable ({why})" in shown
    assert f"    lsdt: not importable ({why})" in shown
    assert not [line for line in shown if line.startswith(("18. gsd", "      gsd."))]
