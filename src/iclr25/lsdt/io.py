"""Saving and loading a :class:`~iclr25.lsdt.model.LongShortDecisionTransformer`: weights
(normalisation buffers included) and its config in one ``.safetensors`` file."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from iclr25.lsdt.model import LongShortDecisionTransformer

__all__ = ["load", "save"]


def save(model: LongShortDecisionTransformer, path: str | Path) -> Path:
    """Write weights (incl. normalisation buffers) and config (metadata) to ``.safetensors``.

    Raises:
        ValueError: ``path`` does not end in ``.safetensors``.
    """
    path = Path(path)
    if path.suffix != ".safetensors":
        raise ValueError(f"path must end in .safetensors, got {path.name!r}")
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, str(path), metadata={"config": json.dumps(model.config)})
    return path


def load(path: str | Path, *, device: str | torch.device | None = None
         ) -> LongShortDecisionTransformer:
    """Read a model written by :func:`save`, in eval mode, on ``device`` (default CPU).

    Raises:
        ValueError: missing or unreadable file, or missing config/weights.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} does not exist")
    try:
        with safe_open(str(path), framework="pt") as f:
            config = json.loads((f.metadata() or {})["config"])
        model = LongShortDecisionTransformer(**config)
        model.load_state_dict(load_file(str(path)))
    except (OSError, KeyError, RuntimeError, TypeError, SafetensorError,
            json.JSONDecodeError) as exc:
        raise ValueError(f"path {str(path)!r} is not a saved LSDT model ({exc})") from None
    return model.to(device or "cpu").eval()
