"""Saving and loading a :class:`~iclr25.lsdt.model.LongShortDecisionTransformer`: weights
(normalisation buffers included) and its config in one ``.safetensors`` file."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file

from iclr25._contract import PathLike, checked
from iclr25._io import check_readable, save_safetensors, written_by
from iclr25.datasets.control import OfflineDataset
from iclr25.lsdt.model import LongShortDecisionTransformer

__all__ = ["data_returns", "env_of", "load", "returns_summary", "save"]


@checked
def save(model: LongShortDecisionTransformer, path: PathLike, *,
         data: OfflineDataset | None = None, env_id: str | None = None) -> Path:
    """Write weights (incl. normalisation buffers) and config (metadata) to ``.safetensors``;
    with ``data`` (the training data), its episode returns' summary too (see
    :func:`data_returns`), from which evaluation suggests target returns; ``env_id`` (default:
    the model's ``env_id``, if any), the env it was trained for, from which evaluation takes
    its default env (:func:`env_of`). The model's ``longest_episode`` (set by
    :func:`~iclr25.lsdt.train`), when known, is recorded too, with or without ``data``, so
    the loaded model warns as this one does where rollouts outlast the data.

    Raises:
        ValueError: ``path`` does not end in ``.safetensors``; ``env_id`` is not a gymnasium id.
    """
    path = Path(path)
    if path.suffix != ".safetensors":
        raise ValueError(f"path must end in .safetensors, got {path.name!r}")
    if env_id is not None and not env_id.strip():     # its type checked by @checked
        raise ValueError(f"env_id must be a gymnasium env id such as 'Pendulum-v1', "
                         f"got {env_id!r}")
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    meta = {"method": "lsdt", "config": json.dumps(model.config)}
    env_id = env_id if env_id is not None else getattr(model, "env_id", None)
    if env_id is not None:
        meta["env_id"] = env_id
    if data is not None:
        meta["data_returns"] = json.dumps(returns_summary(data.returns(), data))
    if getattr(model, "longest_episode", None) is not None:
        meta["longest_episode"] = json.dumps(int(model.longest_episode))
    return save_safetensors(tensors, path, meta)


def returns_summary(returns: torch.Tensor, data: OfflineDataset | None = None
                    ) -> dict[str, float]:
    """``{"min", "median", "p90", "max", "mean"}`` of (E,) episode returns: the targets a
    decision transformer can be conditioned on (it rarely exceeds the best of its data);
    with ``data`` (whose returns they are), ``"steps"`` too: its longest episode's steps,
    which returns from longer rollouts cannot be compared with."""
    r = returns.double()
    q = torch.quantile(r, torch.tensor([0.5, 0.9], dtype=r.dtype))
    out = {"min": float(r.min()), "median": float(q[0]), "p90": float(q[1]),
           "max": float(r.max()), "mean": float(r.mean())}
    if data is not None:
        out["steps"] = data.longest_episode
    return out


def _header(path: str | Path) -> dict[str, str]:
    """A .safetensors file's metadata ({} when unreadable: :func:`load` says why)."""
    try:
        with safe_open(str(path), framework="pt") as f:
            return f.metadata() or {}
    except (OSError, SafetensorError):
        return {}


def data_returns(path: str | Path) -> dict[str, float] | None:
    """The training data's :func:`returns_summary` recorded by :func:`save` (None: the file
    records none, e.g. written before it was recorded)."""
    raw = _header(path).get("data_returns")
    return None if raw is None else json.loads(raw)


def env_of(path: str | Path) -> str | None:
    """The env id recorded by :func:`save` (None: the file records none: trained without
    one, or written before it was recorded)."""
    return _header(path).get("env_id")


@checked
def load(path: PathLike, *, device: str | torch.device | None = None
         ) -> LongShortDecisionTransformer:
    """Read a model written by :func:`save`, in eval mode, on ``device`` (default CPU).

    Raises:
        ValueError: missing or unreadable file, or missing config/weights.
    """
    path = check_readable(Path(path), "path")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
        if meta.get("method", "lsdt") != "lsdt" or "obs_dim" in meta:
            # a GSD policy's header also has a config (and its dims, and since issue 68 its
            # method): say what the file is, not which keyword LSDT's __init__ lacks
            raise ValueError(f"path {str(path)!r} is a GSD policy (written by `gsd train`), "
                             f"not an LSDT model: evaluate it with `iclr25 gsd evaluate`")
        held = None if "config" in meta else written_by(meta)
        if held:  # another verb's file: say whose, not which key it lacks
            raise ValueError(f"path {str(path)!r} is not a saved LSDT model: it is {held}")
        config = json.loads(meta["config"])
        model = LongShortDecisionTransformer(**config)
        model.load_state_dict(load_file(str(path)))
        model.env_id = meta.get("env_id")
        # files written before the model's own record: the data's (``"steps"``), if any
        steps = meta.get("longest_episode")
        model.longest_episode = (json.loads(steps) if steps is not None else
                                 json.loads(meta.get("data_returns", "{}")).get("steps"))
    except (OSError, KeyError, RuntimeError, TypeError, SafetensorError,
            json.JSONDecodeError) as exc:
        raise ValueError(f"path {str(path)!r} is not a saved LSDT model ({exc})") from None
    return model.to(device or "cpu").eval()
