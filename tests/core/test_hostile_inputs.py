"""One contract for every public function and class (issue 56), tested by a sweep.

Every callable in a method package's ``__all__`` has a recipe (a valid call on small inputs)
or says in one line why the sweep cannot drive it. The sweep then changes ONE tensor/array
argument at a time to a hostile value:

* ``int``/``bool``: an integer or bool copy where a float is meant (a float copy where
  integers are meant). Accepted only when the answer equals the answer on the same values
  cast back to the meant dtype (the documented cast of ``iclr25._checks``); else refused.
* ``nan``/``inf``: one non-finite entry (floating arguments).
* ``ndim+``/``ndim-``: one dimension more (``x[None]``) or fewer (``x[0]``).
* ``empty``: no rows (``x[:0]``).
* ``rows``/``cols``: a shape that disagrees with a partner argument or a fitted model
  (one row or column fewer).
* ``object``: a plain ``object()``.
* ``neg``/``big``: one entry -1 or 10**6 in an integer argument (a label, index or count
  out of range).

A refusal must be a TypeError or ValueError raised by this package (not by torch, numpy or
sklearn) whose message names the argument (for ``rows``/``cols``: the argument or its
partner). ``ok`` in a recipe lists the cases a documented rule accepts (the result is then
only checked to exist). No call may modify its inputs.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import traceback
from pathlib import Path

import numpy as np
import pytest
import torch
from _hostile_recipes import RECIPES, UNDRIVEN, Recipe
from _public import public_objects

import iclr25

PKG_DIR = str(Path(iclr25.__file__).parent)
CASES = ("int", "bool", "nan", "inf", "ndim+", "ndim-", "empty", "rows", "cols", "object",
         "neg", "big")


def _public() -> list[str]:
    return sorted(f"{method}.{name}" for method, name, obj in public_objects()
                  if callable(obj) and not (inspect.isclass(obj) and issubclass(obj, Warning)))


PUBLIC = _public()


def test_every_public_callable_has_a_recipe_or_a_reason():
    covered = {k.split(":")[0] for k in RECIPES} | set(UNDRIVEN)
    assert sorted(set(PUBLIC) - covered) == []
    assert sorted(covered - set(PUBLIC)) == []
    assert not set(RECIPES) & set(UNDRIVEN)


# --- the hostile values -------------------------------------------------------------------

def _is_array(v: object) -> bool:
    return isinstance(v, (torch.Tensor, np.ndarray)) and not isinstance(v, torch.nn.Parameter)


def _floating(v) -> bool:
    return v.is_floating_point() if isinstance(v, torch.Tensor) else v.dtype.kind == "f"


def _cast(v, like):
    """``v``'s values in ``like``'s dtype (the documented cast)."""
    if isinstance(like, torch.Tensor):
        return torch.as_tensor(v).to(like.dtype)
    return np.asarray(v).astype(like.dtype)


#: the cases that change the shape (or the type): the hostile copy, or None where it has no
#: such copy
_RESHAPED = {
    "ndim+": lambda v: v[None],
    "ndim-": lambda v: v[0] if v.ndim >= 1 and len(v) else None,
    "empty": lambda v: v[:0] if v.ndim >= 1 and len(v) else None,
    "rows": lambda v: v[:-1] if v.ndim >= 1 and len(v) >= 2 else None,
    "cols": lambda v: v[..., :-1] if v.ndim >= 2 and v.shape[-1] >= 2 else None,
    "object": lambda v: object(),
}


def _hostile(v, case: str):
    """The hostile copy of ``v`` for ``case``, or None when the case does not apply."""
    t = isinstance(v, torch.Tensor)
    if case in ("int", "bool"):
        if case == "int":
            if not _floating(v):
                return v.double() if t else v.astype(np.float64)
            return v.round().long() if t else np.round(v).astype(np.int64)
        if v.dtype in (torch.bool, np.bool_):
            return None
        return v != 0
    if case in ("nan", "inf"):
        if not _floating(v) or v.size == 0 if not t else not _floating(v) or v.numel() == 0:
            return None
        out = v.clone() if t else v.copy()
        out.reshape(-1)[len(out.reshape(-1)) // 2] = math.nan if case == "nan" else math.inf
        return out
    if case in _RESHAPED:
        return _RESHAPED[case](v)
    if case in ("neg", "big"):
        if _floating(v) or v.dtype in (torch.bool, np.bool_) or (v.numel() if t else v.size) == 0:
            return None
        out = v.clone() if t else v.copy()
        out.reshape(-1)[0] = -1 if case == "neg" else 10**6
        return out
    raise AssertionError(case)


def _snapshot(kwargs: dict) -> dict:
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v.copy())
            for k, v in kwargs.items() if _is_array(v)}


def _unchanged(before: dict, kwargs: dict) -> list[str]:
    bad = []
    for k, old in before.items():
        new = kwargs[k]
        if isinstance(old, torch.Tensor):
            same = (old.shape == new.shape and old.dtype == new.dtype
                    and bool(torch.equal(torch.nan_to_num(old), torch.nan_to_num(new))))
        else:
            same = old.shape == new.shape and np.array_equal(
                old, new, equal_nan=old.dtype.kind == "f")
        if not same:
            bad.append(k)
    return bad


def _same(a, b) -> bool:
    """Equal answers (tensors and arrays up to 1e-6, containers element by element)."""
    if isinstance(a, (torch.Tensor, np.ndarray)) or isinstance(b, (torch.Tensor, np.ndarray)):
        x = torch.as_tensor(np.asarray(a.detach().cpu() if isinstance(a, torch.Tensor) else a))
        y = torch.as_tensor(np.asarray(b.detach().cpu() if isinstance(b, torch.Tensor) else b))
        if x.shape != y.shape:
            return False
        if x.dtype == torch.bool or y.dtype == torch.bool:
            return bool(torch.equal(x.long(), y.long()))
        return bool(torch.allclose(x.double(), y.double(), rtol=1e-5, atol=1e-6, equal_nan=True))
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-5, abs_tol=1e-6) or (a != a and b != b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=False))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, torch.nn.Module):
        return _same(a.state_dict(), b.state_dict())
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an object without equality: nothing to compare
        return True


def _call(recipe: Recipe, kwargs: dict):
    torch.manual_seed(0)
    np.random.seed(0)
    return recipe.fn(**kwargs)


def _names(msg: str, names: tuple[str, ...]) -> bool:
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", msg)
               for n in names)


def _ours(exc: BaseException) -> bool:
    """Raised by this package's code, not inside torch / numpy / sklearn."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].filename.startswith(PKG_DIR)


def _params() -> list:
    out = []
    for key in sorted(RECIPES):
        r = RECIPES[key]
        for arg in r.arrays:
            for case in CASES:
                out.append(pytest.param(key, arg, case, id=f"{key}-{arg}-{case}",
                                        marks=r.marks(arg, case)))
    return out


_BASE: dict[str, tuple[dict, object]] = {}


def _base(key: str) -> tuple[Recipe, dict, object]:
    """The recipe's valid call, made once: its inputs and its answer."""
    r = RECIPES[key]
    if key not in _BASE:
        kwargs = r.make()
        before = _snapshot(kwargs)
        out = _call(r, kwargs)
        assert not _unchanged(before, kwargs), f"{key} modified {_unchanged(before, kwargs)}"
        _BASE[key] = (kwargs, out)
    return (r, *_BASE[key])


@pytest.mark.parametrize("key", sorted(RECIPES))
def test_the_valid_call_works_and_is_repeatable(key):
    r, kwargs, out = _base(key)
    if r.deterministic:
        assert _same(_call(r, dict(kwargs)), out)


@pytest.mark.parametrize(("key", "arg", "case"), _params())
def test_hostile_argument(key, arg, case):
    r, kwargs, base_out = _base(key)
    bad = _hostile(kwargs[arg], case)
    if bad is None:
        pytest.skip(f"{case} does not apply to {arg}")
    if case in ("rows", "cols") and arg not in r.bound:
        pytest.skip(f"{arg}'s shape is free")
    call = dict(kwargs)
    call[arg] = bad
    before = _snapshot(call)
    try:
        out = _call(r, call)
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        assert _ours(exc), f"refused by a dependency, not by iclr25: {type(exc).__name__}: {msg}"
        who = (arg, *r.partners(arg)) if case in ("rows", "cols") else (arg, *r.alias.get(arg, ()))
        assert _names(msg, who), f"error does not name {who}: {msg}"
        return
    finally:
        changed = _unchanged(before, call)
        assert not changed, f"{key} modified its input(s) {changed} ({case})"
    if case in r.ok.get(arg, ()) or case in r.ok.get("*", ()):
        return
    if case in ("int", "bool") and r.deterministic:
        cast = dict(kwargs)
        cast[arg] = _cast(bad, kwargs[arg])
        expected = _call(r, cast)
        assert _same(out, expected), f"{arg} as {case}: a different answer than the cast's"
        return
    pytest.fail(f"{key} accepted {arg} with case {case!r} (no documented rule)")
