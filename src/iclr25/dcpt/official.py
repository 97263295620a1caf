"""DCPT's released checkpoints (``MILab-PKU/dcpt``) in our modules, behind our API:
:func:`~iclr25.dcpt.restore` (tiling), :func:`~iclr25.dcpt.save`/``load`` and the CLI.

The repository's README links a Google Drive folder of the fine-tuned 5D all-in-one models
(``dcpt_nafnet_5d.pth``, ``dcpt_restormer_5d.pth``, ``dcpt_promptir_5d.pth``,
``dcpt_swinir_5d.pth``, per its test configs), basicsr files holding ``params`` and
``params_ema`` (the configs load ``params_ema``). Supported here: NAFNet and Restormer.
PromptIR and SwinIR are not (no module of ours has their architecture).
"""

from __future__ import annotations

from pathlib import Path

import torch

from iclr25._official import count, need, read_state_dict, renamer
from iclr25._official import load_official as _fit
from iclr25.dcpt.nafnet import NAFNet
from iclr25.dcpt.training import Checkpoint

__all__ = ["BACKBONES", "load_official"]

BACKBONES = ("nafnet", "restormer")

# NAFNet: our key -> DCPT's NAFNetBaseline key
_NAFNET_NAME = renamer([(r"^decoders\.(\d+)\.", r"decoder\1."), (r"^middle\.", "middle_blks."),
                        (r"\.sca\.", ".sca.1.")])


def _nafnet(state: dict[str, torch.Tensor], what: str) -> NAFNet:
    width = need(state, "intro.weight", what).shape[0]
    n_enc = count(state, "encoders")
    net = NAFNet(width=width,
                 enc_blocks=[count(state, f"encoders.{i}") for i in range(n_enc)],
                 middle_blocks=count(state, "middle_blks"),
                 dec_blocks=[count(state, f"decoder{i}") for i in range(n_enc)])
    return _fit(net, state, _NAFNET_NAME, what=what)


def load_official(path: str | Path, backbone: str = "nafnet", *, key: str | None = None,
                  device: torch.device | str = "cpu") -> Checkpoint:
    """A :class:`~iclr25.dcpt.Checkpoint` holding one of DCPT's released restorers.

    The sizes (width, blocks per level) are read from the file; every key is renamed to
    ours and its shape checked before anything is copied.

    * ``"nafnet"``: DCPT's ``NAFNetBaseline`` as :class:`~iclr25.dcpt.nafnet.NAFNet`
      (``decoder{i}`` -> ``decoders.{i}``, ``middle_blks`` -> ``middle``, ``sca.1`` ->
      ``sca``). Agreement with the official module (``basicsr/archs/nafnet_arch.py`` run
      in a scratch folder; the 5D config: width 64, blocks [1, 1, 1, 28]/1/[1, 1, 1, 1],
      67.9 M parameters; its init + N(0, 0.05²) in its layout, loaded by both; random
      1×3×64×64 and 1×3×50×70 images, the official input reflect-padded to 16 as its test
      does): max |difference| 1.8e-5 on outputs up to 20 (float32 rounding over 36
      blocks), 7.1e-14 in float64.
    * ``"restormer"``: see :mod:`iclr25.dcpt.restormer`.

    Args:
        path: the released ``.pth`` (or a ``.safetensors`` of its state dict); the
            ``params_ema``/``params``/``state_dict``/``model`` wrappers and ``module.``
            prefixes are handled (``params_ema`` first, as the official test configs).
        backbone: one of :data:`BACKBONES`.
        key: the wrapper to read, e.g. ``"params"`` for the raw weights.
        device: where the model lives.

    Returns:
        ``Checkpoint(model, classifier=None, kinds=None, layers=model.tap_layers)``: pass
        ``.model`` to :func:`~iclr25.dcpt.restore`; :func:`~iclr25.dcpt.save` writes a file
        that ``iclr25 dcpt restore`` reads. The released files hold no degradation
        classifier.

    Raises:
        ValueError: an unknown ``backbone``, an unreadable file, or a checkpoint whose first
            non-fitting key (unexpected, missing, or of the wrong shape) the message names.

    Examples:
        >>> ck = load_official("dcpt_nafnet_5d.pth", backbone="nafnet")  # doctest: +SKIP
        >>> clean = restore(ck.model, noisy, tile=256)                   # doctest: +SKIP
    """
    if backbone not in BACKBONES:
        raise ValueError(f"backbone must be one of {', '.join(BACKBONES)}, got {backbone!r} "
                         f"(PromptIR and SwinIR checkpoints are not supported)")
    p = Path(path)
    state = read_state_dict(p, key=key)
    what = f"official DCPT {backbone} checkpoint {p.name}"
    if backbone == "nafnet":
        net = _nafnet(state, what)
    else:
        from iclr25.dcpt.restormer import from_official

        net = from_official(state, what)
    return Checkpoint(net.to(device).eval(), None, None, tuple(net.tap_layers))
