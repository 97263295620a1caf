"""Lazy access to the weights of many models, one tensor at a time.

A *model source* is anything that can hand out a named tensor on request without holding the
whole model: a ``.safetensors`` file (memory-mapped through ``safe_open``), a torch
``.pt``/``.pth`` state dict (loaded with ``mmap=True``), a Hugging Face model folder (one
``model.safetensors`` or ``pytorch_model.bin``, or shards listed by
``model.safetensors.index.json`` / ``pytorch_model.bin.index.json``), an in-memory
``nn.Module`` or state dict. ``as_sources`` turns what the user passes (a directory, a list of
paths, modules, dicts, or a ``{name: model}`` mapping) into a list of named sources, reading
only file headers.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import torch

from iclr25._contract import checked
from iclr25._io import read_json

SUFFIXES = (".safetensors", ".pt", ".pth", ".bin")
# a Hugging Face model folder's weights, in the order transformers prefers them
HF_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
              "pytorch_model.bin.index.json")


@checked
class ModelSource:
    """One model: its name and lazy per-tensor access. Subclasses implement ``_shapes``/``get``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._shape_cache: dict[str, tuple[int, ...]] | None = None

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """``{tensor name: shape}`` of every floating-point tensor, read from the header only."""
        if self._shape_cache is None:
            try:
                self._shape_cache = self._shapes()
            except Exception as exc:  # any reader failure -> one clear error naming the model
                raise ValueError(f"model {self.name!r}: cannot read weights ({exc})") from exc
        return self._shape_cache

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        raise NotImplementedError

    def get(self, key: str) -> torch.Tensor:
        """The tensor ``key`` (a fresh read; the caller must not keep it longer than needed)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class SafetensorsSource(ModelSource):
    """A ``.safetensors`` file; each ``get`` opens the memory map, copies one tensor, closes."""

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(name)
        self.path = Path(path)

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        from safetensors import safe_open

        out = {}
        with safe_open(str(self.path), framework="pt") as f:
            for k in f.keys():
                sl = f.get_slice(k)
                if sl.get_dtype().startswith(("F", "BF")):  # F16/F32/F64/BF16
                    out[k] = tuple(int(s) for s in sl.get_shape())
        return out

    def get(self, key: str) -> torch.Tensor:
        from safetensors import safe_open

        try:
            with safe_open(str(self.path), framework="pt") as f:
                return f.get_tensor(key)
        except Exception as exc:
            raise ValueError(f"model {self.name!r}: cannot read tensor {key!r} ({exc})") from exc


class TorchFileSource(ModelSource):
    """A torch ``.pt``/``.pth``/``.bin`` state dict, memory-mapped so only read tensors load."""

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(name)
        self.path = Path(path)

    def _load(self) -> Mapping[str, Any]:
        try:
            sd = torch.load(self.path, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError:
            # legacy (non-zip) files cannot be memory-mapped; fall back to a plain load
            sd = torch.load(self.path, map_location="cpu", weights_only=True)
        if isinstance(sd, Mapping) and "state_dict" in sd and isinstance(sd["state_dict"], Mapping):
            sd = sd["state_dict"]
        if not isinstance(sd, Mapping):
            raise TypeError(f"expected a state dict, found {type(sd).__name__}")
        return sd

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        return _floating_shapes(self._load())

    def get(self, key: str) -> torch.Tensor:
        try:
            return self._load()[key]
        except Exception as exc:
            raise ValueError(f"model {self.name!r}: cannot read tensor {key!r} ({exc})") from exc


class StateDictSource(ModelSource):
    """An in-memory state dict (or an ``nn.Module``'s); tensors are read, never modified."""

    def __init__(self, state: Mapping[str, Any], name: str) -> None:
        super().__init__(name)
        self.state = state

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        return _floating_shapes(self.state)

    def get(self, key: str) -> torch.Tensor:
        return self.state[key].detach()


class ShardedSource(ModelSource):
    """A model split over shard files (``*.index.json``'s ``weight_map``: tensor -> shard)."""

    def __init__(self, shards: Mapping[str, ModelSource], weight_map: Mapping[str, str],
                 name: str) -> None:
        super().__init__(name)
        self.shards, self.weight_map = dict(shards), dict(weight_map)

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        out: dict[str, tuple[int, ...]] = {}
        for file, shard in self.shards.items():
            for k, shape in shard.shapes.items():
                if self.weight_map.get(k) == file:  # the index says where each tensor lives
                    out[k] = shape
        return out

    def get(self, key: str) -> torch.Tensor:
        if key not in self.weight_map:
            raise ValueError(f"model {self.name!r}: no tensor {key!r} in its index")
        return self.shards[self.weight_map[key]].get(key)


def _hf_folder(folder: Path, name: str | None = None) -> ModelSource | None:
    """The model in a Hugging Face folder (None if ``folder`` holds no ``HF_WEIGHTS``)."""
    name = name or folder.name
    for weights in HF_WEIGHTS:
        path = folder / weights
        if not path.exists():
            continue
        if not weights.endswith(".index.json"):
            return _from_path(path, name)
        weight_map = read_json(path, f"model {name!r}: shard index", ("weight_map",))[
            "weight_map"]
        if not isinstance(weight_map, dict) or not all(
                isinstance(v, str) for v in weight_map.values()):
            raise ValueError(f"model {name!r}: shard index {path}: 'weight_map' must map "
                             f"tensor names to file names")
        files = sorted(set(weight_map.values()))
        shards = {f: _from_path(folder / f, f"{name}/{f}") for f in files}
        return ShardedSource(shards, weight_map, name)
    return None


def _floating_shapes(sd: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in sd.items()
            if isinstance(v, torch.Tensor) and v.is_floating_point()}


def _from_path(path: Path, name: str | None = None) -> ModelSource:
    name = name or (path.name if path.is_dir() else path.stem)
    if path.is_symlink() and not path.exists():
        raise ValueError(f"model {name!r}: {str(path)!r} is a broken or looping symbolic link")
    if not path.exists():
        raise ValueError(f"model {name!r}: file {str(path)!r} does not exist")
    if path.is_dir():
        hf = _hf_folder(path, name)
        if hf is None:
            raise ValueError(f"model {name!r}: folder {str(path)!r} holds none of "
                             f"{', '.join(HF_WEIGHTS)}")
        return hf
    if not path.is_file():
        raise ValueError(f"model {name!r}: {str(path)!r} is not a file")
    if not os.access(path, os.R_OK):
        raise ValueError(f"model {name!r}: file {str(path)!r} is not readable (permissions)")
    suffix = path.suffix.lower()
    if suffix == ".safetensors":
        return SafetensorsSource(path, name)
    if suffix in (".pt", ".pth", ".bin"):
        return TorchFileSource(path, name)
    raise ValueError(f"model {name!r}: unsupported file type {path.suffix!r} "
                     f"(expected one of {', '.join(SUFFIXES)})")


def _from_object(obj: Any, name: str) -> ModelSource:
    if isinstance(obj, ModelSource):
        if obj.name == name:
            return obj
        # a renamed shallow copy: the caller's source keeps its own name
        renamed = copy.copy(obj)
        renamed.name = name
        return renamed
    if isinstance(obj, (str, Path)):
        return _from_path(Path(obj), name)
    if isinstance(obj, torch.nn.Module):
        return StateDictSource(obj.state_dict(keep_vars=False), name)
    if isinstance(obj, Mapping):
        return StateDictSource(obj, name)
    raise TypeError(f"model {name!r}: expected a path, nn.Module or state dict, "
                    f"got {type(obj).__name__}")


def _directory_sources(root: Path) -> list[ModelSource]:
    if not root.is_dir():
        raise ValueError(f"models: {str(root)!r} is not a directory")
    if _hf_folder(root) is not None:
        raise ValueError(f"models: {str(root)!r} is one Hugging Face model folder; pass the "
                         f"folder that holds one sub-folder per model")
    # every entry that looks like a model, whatever the suffix's case; one that cannot be read
    # (a broken link, a directory named x.pt) is an error rather than silently left out.
    # Sub-folders are models when they hold Hugging Face weights (HF_WEIGHTS).
    srcs = []
    for p in sorted(root.iterdir()):
        if p.suffix.lower() in SUFFIXES:
            srcs.append(_from_path(p))
        elif p.is_dir() and (hf := _hf_folder(p)) is not None:
            srcs.append(hf)
    if not srcs:
        raise ValueError(f"models: no {'/'.join(SUFFIXES)} files or Hugging Face model "
                         f"folders ({', '.join(HF_WEIGHTS)}) in {str(root)!r}")
    return srcs


def _sequence_sources(models: Any, names: Iterable[str] | None) -> list[ModelSource]:
    try:
        items = list(models)
    except TypeError as exc:
        raise TypeError(f"models must be a directory, sequence or mapping, "
                        f"got {type(models).__name__}") from exc
    given = list(names) if names is not None else None
    if given is not None and len(given) != len(items):
        raise ValueError(f"names has {len(given)} entries but models has {len(items)}")
    srcs = []
    for i, obj in enumerate(items):
        if given is not None:
            nm = str(given[i])
        elif isinstance(obj, (str, Path)):
            nm = Path(obj).name if Path(obj).is_dir() else Path(obj).stem
        elif isinstance(obj, ModelSource):
            nm = obj.name
        else:
            nm = f"model_{i}"
        srcs.append(_from_object(obj, nm))
    return srcs


@checked
def as_sources(models: Any, names: Iterable[str] | None = None) -> list[ModelSource]:
    """Named lazy sources for ``models``.

    Args:
        models: a directory (every ``*.safetensors``/``*.pt``/``*.pth``/``*.bin`` in it, any
            suffix case, and every sub-folder holding Hugging Face weights, sharded or not,
            named by the folder; sorted by name), a sequence of paths / ``nn.Module`` / state dicts,
            or a mapping ``{name: any of those}``.
        names: names for a sequence (default: file stems, else ``model_{i}``). A directory
            names its models by file stem and a mapping by key, so ``names`` is refused there.

    Returns:
        list of ``ModelSource``, in input order.

    Raises:
        TypeError / ValueError naming the offending model (missing, unreadable or broken-link
        file, unknown type, duplicate names).
    """
    is_mapping = isinstance(models, Mapping)
    if names is not None and (isinstance(models, (str, Path)) or is_mapping):
        raise ValueError("names is only used with a sequence of models: a directory names "
                         "its models by file stem, a mapping by its keys")
    if isinstance(models, ModelSource):
        raise TypeError("models must hold several models, got a single ModelSource")
    if isinstance(models, torch.nn.Module):
        raise TypeError("models must hold several models, got a single nn.Module")
    if isinstance(models, (str, Path)):
        srcs = _directory_sources(Path(models))
    elif is_mapping and all(isinstance(v, torch.Tensor) for v in models.values()):
        raise TypeError("models must hold several models; got a single state dict "
                        "(pass a list of state dicts or a {name: state_dict} mapping)")
    elif is_mapping:
        srcs = [_from_object(v, str(k)) for k, v in models.items()]
    else:
        srcs = _sequence_sources(models, names)
    seen: set[str] = set()
    for s in srcs:
        if s.name in seen:
            raise ValueError(f"models: duplicate model name {s.name!r}")
        seen.add(s.name)
    return srcs


def check_architecture(sources: list[ModelSource], argument: str = "models") -> None:
    """Raise a ValueError naming ``argument`` unless every model has the same square matrices.

    The square 2-D floating-point matrices (name and shape) are the layers MoTHer compares;
    heads, biases and embeddings may differ (fine-tunes for other label sets do). Only
    headers are read.
    """
    layouts: dict[tuple, list[str]] = {}
    for s in sources:
        key = tuple(sorted((k, v) for k, v in s.shapes.items() if len(v) == 2 and v[0] == v[1]))
        layouts.setdefault(key, []).append(s.name)
    if len(layouts) < 2:
        return
    (ka, na), (kb, nb) = list(layouts.items())[:2]
    da, db = dict(ka), dict(kb)
    diff = next(k for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k))
    raise ValueError(
        f"{argument} mixes {len(layouts)} architectures (different square weight matrices): "
        f"{na[:3]} vs {nb[:3]}; e.g. {diff!r} is {da.get(diff, 'absent')} in {na[0]!r} and "
        f"{db.get(diff, 'absent')} in {nb[0]!r}. Recover trees of one architecture at a time")
