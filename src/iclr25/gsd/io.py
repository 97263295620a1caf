"""Save and load a trained GSD/InfoGAIL result as one ``.safetensors`` file."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from iclr25.gsd.training import GSDConfig, GSDResult, build_networks, config_dict

__all__ = ["load", "save"]

_PARTS = ("policy", "discriminator", "posterior", "dual")


def save(result: GSDResult, path: str | Path) -> Path:
    """Write the four networks' weights, the config and the dims (metadata) to ``path``.

    Raises:
        ValueError: ``path`` does not end in ``.safetensors``.
    """
    path = Path(path)
    if path.suffix != ".safetensors":
        raise ValueError(f"path must end in .safetensors, got {path.name!r}")
    tensors = {}
    for name in _PARTS:
        for k, v in getattr(result, name).state_dict().items():
            tensors[f"{name}.{k}"] = v.detach().cpu().contiguous()
    meta = {"config": json.dumps(config_dict(result.config)),
            "obs_dim": str(result.policy.obs_dim), "act_dim": str(result.policy.act_dim)}
    save_file(tensors, str(path), metadata=meta)
    return path


def load(path: str | Path, *, device: torch.device | str | None = None) -> GSDResult:
    """Read a file written by :func:`save` (history is not stored).

    Raises:
        ValueError: missing or unreadable file, or missing metadata/keys.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} does not exist")
    try:
        from safetensors import safe_open

        with safe_open(str(path), "pt") as f:
            meta = f.metadata() or {}
        tensors = load_file(str(path))
        cfg_d = json.loads(meta["config"])
        obs_dim, act_dim = int(meta["obs_dim"]), int(meta["act_dim"])
    except (SafetensorError, OSError, KeyError, ValueError) as exc:
        raise ValueError(f"path {str(path)!r} is not a GSD .safetensors file ({exc})") from None
    cfg_d["hidden"] = tuple(cfg_d["hidden"])
    cfg = GSDConfig(**cfg_d)
    nets = build_networks(cfg, obs_dim, act_dim, device=device)
    for name, net in nets.items():
        sd = {k[len(name) + 1:]: v for k, v in tensors.items() if k.startswith(name + ".")}
        try:
            net.load_state_dict(sd)
        except RuntimeError as exc:
            raise ValueError(f"path {str(path)!r}: {name} weights do not fit ({exc})") from None
    return GSDResult(**nets, config=cfg)
