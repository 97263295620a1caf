"""Issue 70: a property-based sweep derived from the public signatures, not written by hand.

For every name in every method's ``__all__`` (functions, classes' constructors and public
methods) and every parameter, Hypothesis draws values of other types
(``st.from_type`` over a pool of types, with strategies for the field's objects: tensors and
arrays of every dtype kind and rank, dtypes, modules, generators, paths) and numbers just
outside the annotated interval. Whatever the parameter's annotation excludes (read by
:func:`iclr25._contract.rule_for`, the same reading ``@checked`` applies at run time) must be
refused before any work: a TypeError or ValueError whose message starts with the parameter's
name, says what it expects and what it got, and nothing the caller passed is modified.

The other half of the contract, that the annotations admit every valid call, is checked by
the recipes of ``test_hostile_inputs.py`` and the methods' own tests, which all run through
the same decorators.
"""

from __future__ import annotations

import enum
import inspect
import math
import os
import re
import typing
from pathlib import Path

import numpy as np
import pytest
import torch
from _public import public_objects
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from iclr25._contract import FITS, Range, contract, hints, is_estimator, refusal, rule_for

#: packages not swept (none: every method is)
PENDING: set[str] = set()

#: parameters whose annotation admits anything, each with the reason no narrower one fits
FREE = {
    "mother.as_sources:models": "paths, folders, modules, state dicts, or a mapping of them",
    "mother.pairwise_distances:models": "as as_sources",
    "mother.kurtosis_scores:models": "as as_sources",
    "mother.recover_tree:models": "as as_sources",
    "locodl.ClientLogistic:X": "a dense array or any scipy.sparse matrix",
    "locodl.ClientRidge:X": "a dense array or any scipy.sparse matrix",
    "locodl.DistributedComm:group": "a torch.distributed process group (or None: the world)",
    "oft.from_networkx:G": "a networkx DiGraph; networkx is imported only when used",
    "v3.leakage_report:model": "any fitted V3-like model with encode()",
    "comm.Compose:augmentations": "callables of the caller's choice, checked one by one",
    "locodl.LoCoDLClassifier.fit:X": "a dense array or any scipy.sparse matrix",
    "locodl.LoCoDLClassifier.decision_function:X": "as fit",
    "locodl.LoCoDLClassifier.predict_proba:X": "as fit",
    "locodl.LoCoDLClassifier.predict:X": "as fit",
    "mother.ModelForest.plot:ax": "a matplotlib Axes; matplotlib is imported only to plot",
    **{f"kmeans.ConsistentKMeans.{m}:{a}": "scikit-learn array-like (lists, pandas, object "
       "arrays of numbers), converted and checked by its validate_data, with scikit-learn's "
       "own messages that check_estimator requires"
       for m in ("fit", "partial_fit", "predict", "transform", "fit_predict", "score")
       for a in ("X", "sample_weight") if (m, a) not in (("predict", "sample_weight"),
                                                        ("transform", "sample_weight"))},
    **{f"{est}:y": "ignored, as scikit-learn's fit(X, y=None) (a Pipeline passes its y)"
       for est in ("comm.CoMMEmbedder.fit", "kmeans.ConsistentKMeans.fit",
                   "kmeans.ConsistentKMeans.partial_fit", "kmeans.ConsistentKMeans.fit_predict",
                   "kmeans.ConsistentKMeans.score", "lowlight.ZeroReferenceEnhancer.fit",
                   "urlost.URLOST.fit",
                   "urlost.SelfOrganizingClusters.fit", "v3.V3.fit")},
}


def _record(obj: object) -> bool:
    """A result record the library fills in (NamedTuple), a warning or an exception class."""
    return inspect.isclass(obj) and (issubclass(obj, (tuple, BaseException, enum.Enum)))


def _entries() -> list[tuple[str, object, object]]:
    """``(label, object, callable to call)``: functions, constructors and public methods."""
    out = []
    for method, name, obj in public_objects():
        if method in PENDING or not callable(obj) or _record(obj):
            continue
        out.append((f"{method}.{name}", obj, obj))
        if inspect.isclass(obj):
            for key, member in vars(obj).items():
                raw = member.__func__ if isinstance(member, (classmethod, staticmethod)) \
                    else member
                if not key.startswith("_") and inspect.isfunction(raw):
                    out.append((f"{method}.{name}.{key}", getattr(obj, key), getattr(obj, key)))
    return out


ENTRIES = _entries()


def _parameters(fn: object) -> list[inspect.Parameter]:
    target = inspect.unwrap(fn.__init__ if inspect.isclass(fn) else fn)  # type: ignore[misc]
    if not getattr(target, "__module__", "").startswith("iclr25"):
        return []  # object's or a Protocol's constructor: no parameters of ours
    return [p for p in inspect.signature(target).parameters.values()
            if p.name not in ("self", "cls") and p.kind is not p.VAR_KEYWORD]


def test_the_sweep_covers_every_public_name():
    names = {label for label, _, _ in ENTRIES}
    public = {f"{m}.{n}" for m, n, o in public_objects()
              if m not in PENDING and callable(o) and not _record(o)}
    assert public <= names
    assert len(ENTRIES) >= 300


@pytest.mark.parametrize(("label", "obj"), [(lab, o) for lab, o, _ in ENTRIES
                                            if lab.count(".") == 1], ids=lambda v: str(v)[:60])
def test_every_public_callable_is_checked(label, obj):
    target = obj.__init__ if inspect.isclass(obj) and not is_estimator(obj) else obj
    assert getattr(obj, "__checked__", False) or getattr(target, "__checked__", False), label


def test_every_parameter_is_annotated_precisely():
    loose = []
    for label, obj, _ in ENTRIES:
        target = obj.__init__ if inspect.isclass(obj) else obj
        found = hints(inspect.unwrap(target))
        for p in _parameters(obj):
            key = f"{label}:{p.name}"
            a = found.get(p.name)
            if key not in FREE and (a is None or isinstance(a, str) or rule_for(a) is None):
                loose.append(f"{key} ({a})")
    assert loose == []
    assert all(k.split(":")[0] in {lab for lab, _, _ in ENTRIES} for k in FREE)


# --- the strategies: the field's objects, then "any other type" ----------------------------

_DTYPES = [torch.bool, torch.int64, torch.int32, torch.uint8, torch.float32, torch.float64,
           torch.complex64]


@st.composite
def tensors(draw: st.DrawFn) -> torch.Tensor:
    dtype = draw(st.sampled_from(_DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=4)))
    t = torch.arange(math.prod(shape) or 0).reshape(shape) % 3
    return t.to(dtype)


st.register_type_strategy(torch.Tensor, tensors())
st.register_type_strategy(np.ndarray, tensors().map(lambda t: t.numpy()))
st.register_type_strategy(torch.dtype, st.sampled_from(_DTYPES))
st.register_type_strategy(torch.Generator, st.builds(torch.Generator))
st.register_type_strategy(nn.Module, st.builds(nn.Linear, st.integers(1, 3), st.integers(1, 3)))
st.register_type_strategy(Path, st.sampled_from([Path("/nonexistent/h70/file.json"),
                                                 Path("/")]))

#: the pool "a value of another type" is drawn from, each through ``st.from_type``
POOL = [type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, Path,
        torch.Tensor, np.ndarray, torch.dtype, torch.Generator, nn.Module, object,
        typing.Callable[[int], int], list[tuple[str, str]], dict[str, int]]


def _outside(meta: Range, integer: bool) -> st.SearchStrategy:
    """Numbers just outside ``meta`` (and NaN, infinities)."""
    edges = []
    if meta.low is not None:
        edges += [meta.low - 1, meta.low] if meta.low_open else [meta.low - 1]
    if meta.high is not None:
        edges += [meta.high + 1, meta.high] if meta.high_open else [meta.high * 2 + 1]
    values = [int(v) if integer and math.isfinite(v) and v == int(v) else v for v in edges]
    extra = [] if integer else [math.nan, math.inf, -math.inf]
    return st.sampled_from(values + extra) if values + extra else st.nothing()


def _ranges(annotation: object) -> list[tuple[Range, bool]]:
    out = []
    for a in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(a) is typing.Annotated:
            base, *meta = typing.get_args(a)
            out += [(m, base is int) for m in meta if isinstance(m, Range)]
    return out


def _arrays(annotation: object) -> bool:
    """Whether the annotation names an array kind (then every dtype and rank is drawn)."""
    return "Array(" in repr(annotation)


def hostile(annotation: object) -> st.SearchStrategy:
    """Values of any type from the pool, arrays of every dtype and rank where an array is
    meant, and values outside the annotation's intervals."""
    other = st.sampled_from(POOL).flatmap(st.from_type)
    near = [_outside(m, i) for m, i in _ranges(annotation)]
    if _arrays(annotation):
        near += [tensors(), tensors().map(lambda t: t.numpy()), tensors().map(torch.Tensor.tolist)]
    return st.one_of(other, *near) if near else other


def _snapshot(v: object) -> object:
    return v.clone() if isinstance(v, torch.Tensor) else v.copy() if isinstance(
        v, np.ndarray) else None


def _same(a: object, b: object) -> bool:
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b))
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def _call(fn: object, bound_self: bool, name: str, value: object) -> None:
    if bound_self:  # an unbound method: the check runs before self is used
        fn(object(), **{name: value})  # type: ignore[operator]
    elif inspect.isclass(fn) and is_estimator(fn):
        # scikit-learn's rule: the constructor stores, fit checks (before reading X); the
        # other required parameters (COX's n_classes) get a valid int
        required = {p.name: 2 for p in _parameters(fn) if p.default is p.empty}
        est = fn(**{**required, name: value})
        getattr(est, next(k for k in FITS if k in vars(fn)))()
    else:
        fn(**{name: value})  # type: ignore[operator]


def _kind(rule: tuple, value: object) -> str:
    """The class of a hostile value, for the sweep's counts: a wrong dtype or rank of an
    array, a number out of its interval, a path where none is meant, or another type."""
    want = rule[0]
    arrayish = isinstance(value, (torch.Tensor, np.ndarray))
    if arrayish and "array" in want:
        return "shape" if "-D" in want and "floating" not in want[:0] and _rank_only(
            rule, value) else "dtype"
    if isinstance(value, (float, int)) and not isinstance(value, bool) and " in " in want:
        return "value"
    return "file" if isinstance(value, Path) else "type"


def _rank_only(rule: tuple, value: object) -> bool:
    """True when ``value`` fails only for its rank (its dtype would pass)."""
    x = value if isinstance(value, torch.Tensor) else torch.as_tensor(value)
    return rule[1](x.reshape(-1)) is None or rule[1](x.reshape(1, -1)) is None


def _sweep(fn: object, name: str, rule: object, annotation: object,
           counts: dict[str, int]) -> None:
    """Draw hostile values for parameter ``name`` of ``fn``; each its annotation excludes is
    passed alone and must be refused, naming ``name``, before any work."""
    bound_self = inspect.isfunction(fn) and "self" in inspect.signature(fn).parameters

    @settings(max_examples=12, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(value=hostile(annotation))
    def check(value):
        if refusal(name, rule, value) is None:
            counts["admitted"] += 1
            return
        counts["excluded"] += 1
        kind = _kind(rule, value)
        counts[kind] = counts.get(kind, 0) + 1
        before = _snapshot(value)
        with pytest.raises((TypeError, ValueError)) as err:
            _call(fn, bound_self, name, value)
        msg = str(err.value)
        assert msg.startswith(f"{name} must be "), msg
        assert " got " in msg, msg
        if before is not None:
            assert _same(before, value), f"{name} was modified"

    check()


@pytest.mark.parametrize(("label", "fn"), [(lab, f) for lab, _, f in ENTRIES],
                         ids=[lab for lab, _, _ in ENTRIES])
def test_every_value_the_annotation_excludes_is_refused_naming_the_parameter(label, fn):
    rules = contract(fn)
    annotations = hints(inspect.unwrap(fn.__init__ if inspect.isclass(fn) else fn))
    counts = {"excluded": 0, "admitted": 0}
    for p in _parameters(fn):
        if p.name in rules and p.kind is not p.VAR_POSITIONAL:
            _sweep(fn, p.name, rules[p.name], annotations[p.name], counts)
    _COUNTS[label] = counts


_COUNTS: dict[str, dict[str, int]] = {}


def test_the_drawn_values_are_not_all_admitted():
    # a strategy that only drew admitted values would test nothing: over the sweep, most
    # draws must be excluded by their annotation (run after the sweep in this module)
    if not _COUNTS:
        pytest.skip("the sweep did not run in this process")
    excluded = sum(c["excluded"] for c in _COUNTS.values())
    admitted = sum(c["admitted"] for c in _COUNTS.values())
    assert excluded > 2 * admitted


def test_missing_and_directory_paths_are_refused_by_path_parameters(tmp_path):
    # files: a path parameter given a folder, or a missing file, says which
    from iclr25._io import read_json

    with pytest.raises(ValueError, match="does not exist"):
        read_json(tmp_path / "missing.json", "FILE")
    with pytest.raises(ValueError, match="is not a file"):
        read_json(tmp_path, "FILE")
    (tmp_path / "bad.json").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="cannot be read as UTF-8"):
        read_json(tmp_path / "bad.json", "FILE")
    assert os.path.exists(tmp_path)


# --- files: every public reader, given a missing, unreadable, empty or corrupt file --------

def _readers() -> list[tuple[str, object, str]]:
    """``(label, function, parameter)``: public functions that read a path and need nothing
    else (every other parameter has a default); their names say they read."""
    out = []
    for label, obj, fn in ENTRIES:
        if inspect.isclass(obj) or not label.split(".")[-1].startswith(("read", "load")):
            continue
        params = _parameters(fn)
        paths = [p for p in params if "PathLike" in str(hints(inspect.unwrap(fn)).get(p.name))]
        if len(paths) == 1 and all(p.default is not p.empty for p in params if p not in paths):
            out.append((label, fn, paths[0].name))
    return out


READERS = _readers()
#: the suffix a reader is given (one that checks the suffix first would not open the file)
SUFFIX = {"matern.read_point_cloud": ".xyz", "dcpt.load": ".safetensors",
          "lsdt.load": ".safetensors", "dcpt.load_official": ".pth",
          "lowlight.load_official": ".pth"}


def test_the_readers_are_found():
    assert {"matern.read_point_cloud", "oft.read_dimacs", "schull.read_sdf",
            "schull.read_xyz", *SUFFIX} <= {label for label, _, _ in READERS}


@pytest.mark.parametrize(("label", "fn", "param"), READERS, ids=[r[0] for r in READERS])
def test_a_reader_refuses_every_broken_file_naming_it(label, fn, param, tmp_path_factory,
                                                      monkeypatch):
    real_access = os.access

    @settings(max_examples=25, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(kind=st.sampled_from(["missing", "folder", "unreadable", "empty", "bytes", "text"]),
           payload=st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
    def check(kind, payload):
        folder = tmp_path_factory.mktemp("files")
        p = folder / ("f" + SUFFIX.get(label, ".txt"))
        if kind == "folder":
            p.mkdir()
        elif kind != "missing":
            p.write_bytes(b"" if kind == "empty" else payload)
        deny = kind == "unreadable"
        monkeypatch.setattr(os, "access", lambda q, mode, *a, **k: False if deny and os.fspath(
            q) == os.fspath(p) and mode & os.R_OK else real_access(q, mode, *a, **k))
        try:
            fn(**{param: p})
        except ValueError as exc:
            msg = str(exc)
            assert p.name in msg or str(p) in msg or param in msg, msg
            want = {"missing": "does not exist|no such file", "folder": "not a file|directory",
                    "unreadable": "permission denied"}.get(kind)
            assert want is None or re.search(want, msg, re.IGNORECASE), (kind, msg)
            return
        assert kind in ("bytes", "text"), f"{label} read a {kind} file without a word"

    check()
