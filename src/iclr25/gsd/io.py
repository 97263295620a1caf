"""Save and load a trained GSD/InfoGAIL result as one ``.safetensors`` file."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file

from iclr25._io import save_safetensors, written_by
from iclr25.gsd.training import GSDConfig, GSDResult, build_networks, config_dict

__all__ = ["env_of", "load", "save"]

_PARTS = ("policy", "discriminator", "posterior", "dual")


def save(result: GSDResult, path: str | Path) -> Path:
    """Write the four networks' weights, the config, the dims, the env id and the training
    horizon (metadata, the last two where known) to ``path``.

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
    meta = {"method": "gsd", "config": json.dumps(config_dict(result.config)),
            "obs_dim": str(result.policy.obs_dim), "act_dim": str(result.policy.act_dim)}
    if result.env_id is not None:
        meta["env_id"] = result.env_id
    if result.max_episode_steps is not None:
        meta["max_episode_steps"] = str(result.max_episode_steps)
    return save_safetensors(tensors, path, meta)


def _metadata(path: Path) -> dict[str, str]:
    """The header's metadata of a file written by :func:`save`."""
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} does not exist")
    try:
        with safe_open(str(path), "pt") as f:
            meta = f.metadata() or {}
    except (SafetensorError, OSError, ValueError) as exc:
        raise ValueError(f"path {str(path)!r} is not a GSD .safetensors file ({exc})") from None
    if meta.get("method", "gsd") != "gsd" or ("config" in meta and "obs_dim" not in meta):
        # an LSDT model's header has a config but no dims (and, since issue 68, its method)
        raise ValueError(f"path {str(path)!r} is an LSDT model (written by `lsdt train`), not "
                         f"a GSD policy: roll it out with `iclr25 lsdt evaluate`")
    if "config" not in meta:
        held = written_by(meta)
        raise ValueError(f"path {str(path)!r} is not a GSD .safetensors file"
                         + (f": it is {held}" if held else " (no config in its header)"))
    return meta


def env_of(path: str | Path) -> str | None:
    """The env id a file written by :func:`save` was trained on, read from its header only
    (None: a file from before the env was recorded).

    Raises:
        ValueError: missing or unreadable file.
    """
    return _metadata(Path(path)).get("env_id")


def load(path: str | Path, *, device: torch.device | str | None = None) -> GSDResult:
    """Read a file written by :func:`save` (history is not stored; ``env_id`` is None in a
    file from before it was recorded, ``max_episode_steps`` where training kept the env's
    time limit).

    Raises:
        ValueError: missing or unreadable file, or missing metadata/keys.
    """
    path = Path(path)
    meta = _metadata(path)
    try:
        tensors = load_file(str(path))
        cfg_d = json.loads(meta["config"])
        obs_dim, act_dim = int(meta["obs_dim"]), int(meta["act_dim"])
        steps = meta.get("max_episode_steps")
        steps = None if steps is None else int(steps)
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
    return GSDResult(**nets, config=cfg, env_id=meta.get("env_id"), max_episode_steps=steps)
