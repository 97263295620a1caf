"""A public function's contract read from its annotations (issue 70): one decorator,
:func:`checked`, refuses what a parameter's annotation excludes before any work, with a
message naming the parameter, what it expects and what it was given.

The annotations are the usual ones (``int``, ``float``, ``Mapping[str, str]``,
``Callable[..., T]``, ``nn.Module``, ``str | os.PathLike``, ``Literal[...]``, unions) plus
``Annotated`` kinds for what a Python type cannot say:

* :class:`Array`: the dtype kind (``"float"``, ``"int"``, ``"bool"``, ``"real"``) and rank of
  an array argument (tensor, numpy array or nested sequence); ``FloatArray``, ``Floats1D``,
  ``Floats2D``, ``Ints1D`` are the common ones.
* :class:`Range`: an interval a number must lie in (NaN and, unless said, inf refused).
* :class:`FloatingDtype`: a ``torch.dtype`` that is floating point.

Element types inside containers are not read (that would cost a pass over the data); a
function still checks values (NaN, labels in range) itself, once, where it converts them.
A new public function is covered by annotating it and decorating it: the sweep in
``tests/core/test_contract_sweep.py`` derives its hostile inputs from the same annotations.
"""

from __future__ import annotations

import collections.abc as cabc
import functools
import inspect
import math
import numbers
import os
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeAlias, TypeVar

import numpy as np
import torch

from ._checks import ArrayLike

F = TypeVar("F")

_KINDS = {"float": "floating-point", "int": "integer", "bool": "boolean",
          "real": "real (integer or floating)"}


@dataclass(frozen=True)
class Array:
    """``Annotated`` metadata: an array argument of dtype ``kind`` and ``ndim`` dimensions.

    ``kind``: "float" refuses integer and bool (a cast would hide a caller's mix-up), "int"
    refuses floating and bool, "bool" refuses the rest, "real" refuses bool and complex.
    """

    kind: str = "real"
    ndim: int | tuple[int, ...] | None = None
    #: what the caller should pass, in their terms (said after the kind and rank)
    note: str = ""

    def describe(self) -> str:
        rank = "" if self.ndim is None else " or ".join(
            f"{d}-D" for d in ((self.ndim,) if isinstance(self.ndim, int) else self.ndim)) + " "
        return f"a {rank}{_KINDS[self.kind]} array" + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class Range:
    """``Annotated`` metadata: a number in ``[low, high]`` (open sides as said); NaN always
    fails, inf unless ``finite=False``."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    finite: bool = True

    def describe(self) -> str:
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "(" if self.low_open or self.low is None else "["
        right = ")" if self.high_open or self.high is None else "]"
        return f"a number in {left}{lo}, {hi}{right}"

    def holds(self, v: float) -> bool:
        if v != v or (self.finite and not math.isfinite(v)):
            return False
        if self.low is not None and (v <= self.low if self.low_open else v < self.low):
            return False
        return self.high is None or (v < self.high if self.high_open else v <= self.high)


@dataclass(frozen=True)
class FloatingDtype:
    """``Annotated`` metadata: a floating-point ``torch.dtype``."""


FloatArray: TypeAlias = Annotated[ArrayLike, Array("float")]
Floats1D: TypeAlias = Annotated[ArrayLike, Array("float", 1)]
Floats2D: TypeAlias = Annotated[ArrayLike, Array("float", 2)]
Ints1D: TypeAlias = Annotated[ArrayLike, Array("int", 1)]
RealArray: TypeAlias = Annotated[ArrayLike, Array("real")]
Reals1D: TypeAlias = Annotated[ArrayLike, Array("real", 1)]
Ints2D: TypeAlias = Annotated[ArrayLike, Array("int", 2)]
#: (3, H, W) or (B, 3, H, W) floating-point images (their channels and range are read where
#: they are converted); the note answers the usual mix-up, an 8-bit (H, W, 3) file as read
Images: TypeAlias = Annotated[ArrayLike, Array(
    "float", (3, 4), "(3, H, W) or (B, 3, H, W) in [0, 1]; an 8-bit (H, W, 3) image as "
    "read from a file: torch.from_numpy(a).permute(2, 0, 1) / 255, or read files with "
    "iclr25.datasets.images.load_folder")]
#: images of any real dtype (a metric reads 8-bit images with ``data_range=255``)
RealImages: TypeAlias = Annotated[ArrayLike, Array("real", (3, 4))]
#: a network's input: one (C, H, W) image or a (B, C, H, W) floating-point batch
ImageTensor: TypeAlias = Annotated[torch.Tensor, Array("float", (3, 4))]
#: a (B, C, H, W) floating-point batch
Images4D: TypeAlias = Annotated[ArrayLike, Array("float", 4)]
FloatDtype: TypeAlias = Annotated[torch.dtype, FloatingDtype()]
PathLike: TypeAlias = str | os.PathLike
Positive: TypeAlias = Annotated[float, Range(0.0, low_open=True)]
NonNegative: TypeAlias = Annotated[float, Range(0.0)]
Probability: TypeAlias = Annotated[float, Range(0.0, 1.0)]
PositiveInt: TypeAlias = Annotated[int, Range(1)]
NonNegativeInt: TypeAlias = Annotated[int, Range(0)]


# --- what a value is, in a message ---------------------------------------------------------

def given(value: object) -> str:
    """A short description of ``value`` for "got ..." (dtype and shape of an array)."""
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    text = repr(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{type(value).__name__} {text}"


# --- one test per kind of annotation -------------------------------------------------------
# A test is (what it expects, predicate); a predicate returns None when the value fits, or a
# reason (the "got ..." part) when it does not.

Rule = tuple[str, Callable[[object], "str | None"]]


class OutOfRange(str):
    """A reason that is a value outside its interval (a ValueError), not a wrong type."""


def _is_number(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _scalar_array(v: object) -> bool:
    """A 0-d real tensor or array (a number that stayed a tensor)."""
    kd = _dtype_kind(v) if isinstance(v, (torch.Tensor, np.ndarray)) else None
    return kd is not None and kd[1] == 0 and kd[0] in "if"


def _dtype_kind(value: object) -> tuple[str, int] | None:
    """(numpy kind letter, ndim) of an array-like, or None when it is not one."""
    if isinstance(value, torch.Tensor):
        d = value.dtype
        kind = ("b" if d == torch.bool else "c" if d.is_complex else
                "f" if d.is_floating_point else "i")
        return kind, value.ndim
    if isinstance(value, (str, bytes, cabc.Mapping)) or value is None:
        return None
    if not isinstance(value, (np.ndarray, np.generic, cabc.Sequence, numbers.Number)):
        return None
    try:
        a = np.asarray(value)
    except (ValueError, TypeError):
        return None
    return (a.dtype.kind.replace("u", "i"), a.ndim) if a.dtype.kind in "biufc" else None


def _array(meta: Array) -> Rule:
    def test(v: object) -> str | None:
        kd = _dtype_kind(v)
        if kd is None:
            return given(v)
        kind, ndim = kd
        ok = {"float": kind == "f", "int": kind == "i", "bool": kind == "b",
              "real": kind in "if"}[meta.kind]
        dims = (meta.ndim,) if isinstance(meta.ndim, int) else meta.ndim
        if not ok or (dims is not None and ndim not in dims):
            return given(v) if isinstance(v, (torch.Tensor, np.ndarray)) else \
                f"{given(v)} ({'dtype ' + kind if not ok else f'{ndim}-D'})"
        return None
    return meta.describe(), test


def _range(base: Rule, meta: Range) -> Rule:
    want, inner = base

    def test(v: object) -> str | None:
        bad = inner(v)
        if bad is not None:
            return bad
        return None if meta.holds(float(v)) else OutOfRange(repr(v))  # type: ignore[arg-type]
    return f"{want} in {meta.describe()[len('a number in '):]}", test


def _isinstance(cls: type, want: str) -> Rule:
    return want, lambda v: None if isinstance(v, cls) else given(v)


def _not_text(cls: type, want: str) -> Rule:
    """A container that is not a string (``'ab'`` is not a pair of names)."""
    def test(v: object) -> str | None:
        if isinstance(v, (str, bytes)) or not isinstance(v, cls):
            return given(v)
        return None
    return want, test


def _tuple(args: tuple) -> Rule:
    if len(args) == 2 and args[1] is Ellipsis or not args:
        return _not_text(cabc.Sequence, "a sequence")
    want = "a pair" if len(args) == 2 else f"a sequence of {len(args)}"

    def test(v: object) -> str | None:
        if isinstance(v, (str, bytes)) or not isinstance(v, (cabc.Sequence, np.ndarray)) or (
                isinstance(v, np.ndarray) and v.ndim == 0):
            return given(v)
        return None if len(v) == len(args) else f"{given(v)} (length {len(v)})"
    return want, test


def _sequence(args: tuple) -> Rule:
    numeric = bool(args) and args[0] in (int, float)
    inner = rule_for(args[0]) if args else None
    items = "numbers" if numeric else "values" if inner is None else \
        inner[0].removeprefix("a ").removeprefix("an ")
    want = f"a list of {items}"

    def test(v: object) -> str | None:
        if isinstance(v, (str, bytes)):
            return given(v)
        if isinstance(v, cabc.Sequence) or numeric and isinstance(v, (np.ndarray, torch.Tensor)):
            return None
        return given(v)
    return want, test


_SIMPLE: dict[object, Rule] = {
    bool: ("a bool", lambda v: None if isinstance(v, (bool, np.bool_)) else given(v)),
    int: ("an int", lambda v: None if hasattr(v, "__index__") and not isinstance(
        v, (bool, np.bool_)) and not isinstance(v, (torch.Tensor, np.ndarray)) else given(v)),
    float: ("a number", lambda v: None if _is_number(v) or _scalar_array(v) else given(v)),
    str: ("a str", lambda v: None if isinstance(v, str) else given(v)),
    type(None): ("None", lambda v: None if v is None else given(v)),
    torch.dtype: _isinstance(torch.dtype, "a torch.dtype"),
    torch.device: ("a device", lambda v: None if isinstance(v, (str, torch.device))
                   else given(v)),
    torch.Tensor: ("an array", lambda v: None if _dtype_kind(v) else given(v)),
    np.ndarray: ("an array", lambda v: None if _dtype_kind(v) else given(v)),
    os.PathLike: ("a path", lambda v: None if isinstance(v, (str, os.PathLike)) else given(v)),
    # a function annotated ``Path`` calls ``Path(p)`` on what it is given: a str is a path
    Path: ("a path", lambda v: None if isinstance(v, (str, os.PathLike)) else given(v)),
}


def _union(tests: list[Rule]) -> Rule:
    want = " or ".join(dict.fromkeys(w for w, _ in tests))

    def test(v: object) -> str | None:
        reasons = [t(v) for _, t in tests]
        if any(r is None for r in reasons):
            return None
        # a value of a member's type that misses only its range says so (a ValueError)
        return next((r for r in reasons if isinstance(r, OutOfRange)), reasons[-1])
    return want, test


def _literal(options: tuple, v: object) -> str | None:
    """One of ``options``; a value of their type that is not one is out of range."""
    if any(type(v) is type(a) and v == a for a in options):
        return None
    return OutOfRange(given(v)) if any(type(v) is type(a) for a in options) else given(v)


def _class(tp: type) -> Rule | None:
    if getattr(tp, "_is_protocol", False) and not getattr(tp, "_is_runtime_protocol", False):
        return None
    name = f"nn.{tp.__name__}" if tp.__module__.startswith("torch.nn") else tp.__name__
    article = "an" if name[:1].lower() in "aeiou" or name.startswith("nn.") else "a"
    return _isinstance(tp, f"{article} {name}")


_ORIGINS: dict[object, Callable[[tuple], Rule]] = {
    cabc.Mapping: lambda a: _isinstance(cabc.Mapping, "a mapping"),
    cabc.MutableMapping: lambda a: _isinstance(cabc.Mapping, "a mapping"),
    dict: lambda a: _isinstance(cabc.Mapping, "a mapping"),
    cabc.Sequence: _sequence,
    list: _sequence,
    tuple: _tuple,
    cabc.Iterable: lambda a: _not_text(cabc.Iterable, "an iterable"),
    cabc.Collection: lambda a: _not_text(cabc.Collection, "a collection"),
    cabc.Iterator: lambda a: _isinstance(cabc.Iterator, "an iterator"),
    set: lambda a: _isinstance(cabc.Set, "a set"),
    frozenset: lambda a: _isinstance(cabc.Set, "a set"),
    cabc.Set: lambda a: _isinstance(cabc.Set, "a set"),
    cabc.Callable: lambda a: ("a callable", lambda v: None if callable(v) else given(v)),
    type: lambda a: _isinstance(type, "a class"),
}


def rule_for(tp: object) -> Rule | None:
    """What an annotation admits, as a test; None when it admits anything (``Any``, a
    ``TypeVar``, a non-runtime protocol)."""
    if tp is Any or tp is object or isinstance(tp, TypeVar) or isinstance(tp, str):
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Annotated:
        test = rule_for(args[0])
        for meta in args[1:]:
            if isinstance(meta, Array):
                test = _array(meta)
            elif isinstance(meta, Range) and test is not None:
                test = _range(test, meta)
            elif isinstance(meta, FloatingDtype):
                test = ("a floating-point torch.dtype", lambda v: None if isinstance(
                    v, torch.dtype) and v.is_floating_point else given(v))
        return test
    if origin in (typing.Union, types.UnionType):
        tests = [rule_for(a) for a in args]
        return None if any(t is None for t in tests) else _union(tests)  # type: ignore[arg-type]
    if origin is typing.Literal:
        return "one of " + ", ".join(map(repr, args)), functools.partial(_literal, args)
    if origin is not None:
        make = _ORIGINS.get(origin)
        return make(args) if make else (_class(origin) if isinstance(origin, type) else None)
    if tp in _SIMPLE:
        return _SIMPLE[tp]
    if tp in _ORIGINS:
        return _ORIGINS[tp](())
    if tp is Callable:
        return _ORIGINS[cabc.Callable](())
    return _class(tp) if isinstance(tp, type) else None


# --- the decorator -------------------------------------------------------------------------

def hints(fn: Callable) -> dict[str, object]:
    """``fn``'s parameter annotations resolved (``Annotated`` kept); one that names what only
    a type checker imports stays a string (admits anything; the sweep lists it)."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except NameError:
        ns = {**getattr(fn, "__globals__", {}), "typing": typing}
        out: dict[str, object] = {}
        for k, v in getattr(fn, "__annotations__", {}).items():
            try:
                out[k] = eval(v, ns) if isinstance(v, str) else v  # noqa: S307 - own source
            except NameError:
                out[k] = v
        return out


def _tests(fn: Callable) -> dict[str, tuple[Rule, bool]]:
    """Each annotated parameter's test and whether it is ``*args``."""
    found = hints(fn)
    out = {}
    for p in inspect.signature(fn).parameters.values():
        if p.name in found and p.kind is not p.VAR_KEYWORD:
            test = rule_for(found[p.name])
            if test is not None:
                out[p.name] = (test, p.kind is p.VAR_POSITIONAL)
    return out


def refusal(name: str, test: Rule, value: object) -> TypeError | ValueError | None:
    """The error ``checked`` raises for ``value`` of parameter ``name``, or None if it fits:
    a ValueError when only a range is missed (a number of the right type), else TypeError."""
    want, pred = test
    reason = pred(value)
    if reason is None:
        return None
    cls = ValueError if isinstance(reason, OutOfRange) else TypeError
    return cls(f"{name} must be {want}, got {reason}")


#: the methods that fit a scikit-learn estimator, where its constructor's parameters are checked
FITS = ("fit", "partial_fit", "fit_predict", "fit_transform")


def is_estimator(cls: type) -> bool:
    """A scikit-learn estimator (``get_params`` and its own fit method): its ``__init__``
    only stores (scikit-learn's rule, which ``clone`` and ``set_params`` rely on), so its
    parameters are checked when it is fitted."""
    return hasattr(cls, "get_params") and any(k in vars(cls) for k in FITS)


def _params_checked(fit: Callable, cls: type) -> Callable:
    """``fit`` that first checks ``self.get_params()`` against ``cls.__init__``'s
    annotations."""
    cache: list[dict[str, tuple[Rule, bool]]] = []

    @functools.wraps(fit)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not cache:
            cache.append(_tests(inspect.unwrap(cls.__init__)))  # type: ignore[misc]
        params = self.get_params(deep=False)
        for name, (rule, star) in cache[0].items():
            err = None if star or name not in params else refusal(name, rule, params[name])
            if err is not None:
                raise err
        return fit(self, *args, **kwargs)

    return wrapper


def checked(obj: F) -> F:
    """Check every annotated argument of a function (or of a class's ``__init__`` and public
    methods) against its annotation before the call; see the module's docstring. The tests
    are built on the first call (annotations may name what is imported later) and kept."""
    if isinstance(obj, type):
        # the constructor and every public method the class defines (not inherited ones, nor
        # properties); a scikit-learn estimator's constructor parameters when it is fitted
        estimator = is_estimator(obj)
        for key, member in list(vars(obj).items()):
            if key.startswith("_") and (key != "__init__" or estimator):
                continue
            if inspect.isfunction(member):
                if key in FITS and estimator:
                    member = _params_checked(member, obj)  # the arguments are checked first
                setattr(obj, key, checked(member))
            elif isinstance(member, (classmethod, staticmethod)):
                setattr(obj, key, type(member)(checked(member.__func__)))
        if "__init__" not in vars(obj) and obj.__init__ is not object.__init__ and not estimator:
            obj.__init__ = checked(obj.__init__)  # type: ignore[misc]  # an inherited one
        obj.__checked__ = True  # type: ignore[attr-defined]
        return obj
    fn: Callable = obj  # type: ignore[assignment]
    sig = inspect.signature(fn)
    cache: list[dict[str, tuple[Rule, bool]]] = []

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not cache:
            cache.append(_tests(inspect.unwrap(fn)))
        bound = sig.bind_partial(*args, **kwargs).arguments
        for name, (test, star) in cache[0].items():
            if name in bound:
                for v in (bound[name] if star else (bound[name],)):
                    err = refusal(name, test, v)
                    if err is not None:
                        raise err
        return fn(*args, **kwargs)

    wrapper.__checked__ = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def contract(obj: Callable) -> dict[str, Rule]:
    """``{parameter: test}`` of a function or class as :func:`checked` reads it."""
    fn = obj.__init__ if isinstance(obj, type) else obj  # type: ignore[misc]
    return {k: t for k, (t, _) in _tests(inspect.unwrap(fn)).items()}
