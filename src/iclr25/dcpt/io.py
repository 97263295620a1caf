"""DCPT checkpoints: :func:`save` a restorer (and its degradation classifier) to
``.safetensors`` with what rebuilds it, :func:`load` it back as a :class:`Checkpoint`."""

from __future__ import annotations

import copy
import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from iclr25._checks import check_choice, user_stacklevel
from iclr25._contract import PathLike, checked, given
from iclr25._io import check_readable, written_by
from iclr25.datasets.images import KINDS
from iclr25.dcpt.networks import DegradationClassifier, UNet

__all__ = ["Checkpoint", "load", "save"]


@checked
@dataclass
class Checkpoint:
    """What :func:`load` returns."""

    model: nn.Module
    classifier: DegradationClassifier | None = None
    kinds: tuple[str, ...] | None = None
    layers: tuple[str, ...] | None = None
    degradation: str | None = None   # the one degradation it was fine-tuned for, if any
    finetuned: tuple[str, ...] | None = None  # the kinds an all-in-one fine-tune saw


def _backbones() -> dict[str, type[nn.Module]]:
    """The restorers besides :class:`UNet` that :func:`save` records and :func:`load`
    rebuilds by name (the backbones of DCPT's released checkpoints)."""
    from iclr25.dcpt.nafnet import NAFNet
    from iclr25.dcpt.restormer import Restormer

    return {"NAFNet": NAFNet, "Restormer": Restormer}


@checked
def save(model: nn.Module | PathLike, path: PathLike | nn.Module, *,
         classifier: DegradationClassifier | None = None,
         kinds: Sequence[str] | None = None, layers: Sequence[str] | None = None,
         degradation: str | None = None, finetuned: Sequence[str] | None = None) -> Path:
    """Write a restorer (and optionally its degradation classifier) to ``.safetensors``.

    A :class:`UNet`'s width/depth (a ``NAFNet``'s or ``Restormer``'s sizes) are stored
    so :func:`load` can rebuild it; any other model is reloaded into an instance passed to
    :func:`load`. The order is gsd's and lsdt's: ``save(obj, path)``; the old
    ``save(path, model)`` still works, with a DeprecationWarning. ``degradation`` records the
    one degradation the model was fine-tuned for (``iclr25 dcpt restore`` then checks
    against its classical restorer by default).

    Raises:
        ValueError: ``path`` not ending in .safetensors or its directory missing;
            ``kinds`` length not matching the classifier; unknown ``degradation``.
    """
    from iclr25._io import save_safetensors

    if isinstance(model, (str, os.PathLike)) and isinstance(path, nn.Module):
        warnings.warn("dcpt.save(path, model) is deprecated: call save(model, path)",
                      DeprecationWarning, stacklevel=user_stacklevel())
        model, path = path, model
    # (the annotations admit a path first, for that old order; otherwise the usual one)
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {given(model)}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a path, got {given(path)}")

    p = Path(path)
    if p.suffix != ".safetensors":
        raise ValueError(f"path must end in .safetensors, got {p.name!r}")
    if not p.parent.is_dir():
        raise ValueError(f"path: directory {p.parent} does not exist")
    meta: dict[str, object] = {}
    if isinstance(model, UNet):
        meta["unet"] = {"width": model.width, "depth": model.depth}
    elif type(model).__name__ in _backbones():
        meta["backbone"] = {"name": type(model).__name__, "config": model.config()}
    tensors = {f"model.{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    if classifier is not None:
        if kinds is not None and len(kinds) != classifier.n_classes:
            raise ValueError(f"kinds has {len(kinds)} names but the classifier has "
                             f"{classifier.n_classes} classes")
        meta["classifier"] = {"feature_dims": list(classifier.feature_dims),
                              "n_classes": classifier.n_classes,
                              "num_res_blocks": classifier.num_res_blocks}
        tensors.update({f"classifier.{k}": v.detach().cpu().contiguous()
                        for k, v in classifier.state_dict().items()})
    if kinds is not None:
        meta["kinds"] = list(kinds)
    if layers is not None:
        meta["layers"] = list(layers)
    if degradation is not None:
        meta["degradation"] = check_choice(degradation, "degradation", KINDS)
    if finetuned is not None:  # restore classifies among these only (issue 68 walk)
        meta["finetuned"] = [check_choice(k, "finetuned", KINDS) for k in finetuned]
    return save_safetensors(tensors, p, {"iclr25.dcpt": json.dumps(meta)})


@checked
def _metadata(raw: str, p: Path) -> dict:
    """The checkpoint's metadata: a JSON object (a damaged header says so)."""
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"path {p}: its iclr25.dcpt metadata is corrupt ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"path {p}: its iclr25.dcpt metadata is not a JSON object")
    return meta


def _built(cls: type[nn.Module], config: object, p: Path, what: str) -> nn.Module:
    """``cls(**config)`` from the metadata; a damaged config is the file's fault, said so."""
    try:
        if not isinstance(config, dict):
            raise TypeError(f"a {type(config).__name__}, not a mapping")
        return cls(**config)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"path {p}: the {what} configuration in its metadata is invalid "
                         f"({exc})") from None


def _rebuild(meta: dict, p: Path) -> nn.Module:
    """The restorer the metadata names (a :class:`UNet` or a released backbone)."""
    if "unet" in meta:
        return _built(UNet, meta["unet"], p, "UNet")
    backbone = meta.get("backbone")
    name = backbone.get("name") if isinstance(backbone, dict) else None
    if name in _backbones():
        return _built(_backbones()[name], backbone.get("config"), p, name)
    raise ValueError(f"{p} holds a custom model: pass an instance as model=")


@checked
def load(path: PathLike, model: nn.Module | None = None, *,
         device: torch.device | str | None = None) -> Checkpoint:
    """Read a checkpoint written by :func:`save`.

    Args:
        path: the ``.safetensors`` file.
        model: an instance to load the weights into (needed for non-:class:`UNet` models);
            it is not modified, a loaded copy is returned.
        device: where the loaded modules live (default CPU).

    Raises:
        ValueError: unreadable file, not a DCPT checkpoint, or weights not matching ``model``.
    """
    from safetensors import safe_open

    p = check_readable(Path(path), "path")
    try:
        with safe_open(str(p), framework="pt") as f:
            header = f.metadata() or {}
            meta_raw = header.get("iclr25.dcpt")
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises its own error types
        raise ValueError(f"cannot read checkpoint {p}: {exc}") from None
    if meta_raw is None:
        held = written_by(header)
        raise ValueError(f"{p} is not an iclr25.dcpt checkpoint"
                         + (f": it is {held}" if held else " (no metadata)"))
    meta = _metadata(meta_raw, p)
    net = copy.deepcopy(model) if model is not None else _rebuild(meta, p)
    try:
        net.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    except RuntimeError as exc:
        raise ValueError(f"weights in {p} do not match the model: {exc}") from None
    clf = None
    if "classifier" in meta:
        clf = _built(DegradationClassifier, meta["classifier"], p, "classifier")
        try:    # files from before the official last down-sampling block lack its weights
            clf.load_state_dict({k[11:]: v for k, v in tensors.items()
                                 if k.startswith("classifier.")})
        except RuntimeError as exc:
            raise ValueError(f"classifier weights in {p} do not match: {exc}") from None
        clf = clf.to(device or "cpu").eval()
    kinds = tuple(meta["kinds"]) if "kinds" in meta else None
    layers = tuple(meta["layers"]) if "layers" in meta else getattr(net, "tap_layers", None)
    finetuned = tuple(meta["finetuned"]) if "finetuned" in meta else None
    return Checkpoint(net.to(device or "cpu").eval(), clf, kinds, layers,
                      meta.get("degradation"), finetuned)

