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

from iclr25._choices import BACKBONES  # PromptIR's and SwinIR's are not read
from iclr25._contract import PathLike, checked
from iclr25._official import count, need, read_state_dict, renamer
from iclr25._official import load_official as _fit
from iclr25.dcpt.io import Checkpoint
from iclr25.dcpt.nafnet import NAFNet
from iclr25.dcpt.restormer import Restormer

__all__ = ["BACKBONES", "load_official"]



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


# Restormer: our module prefix -> DCPT's, then the renamed parts inside a block
_RESTORMER_PREFIX = {
    "embed.": "patch_embed.proj.", "latent.": "latent.body.", "refinement.": "refinement.body.",
    "output.": "output.",
    **{f"encoders.{i}.": f"encoder_level{i + 1}.body." for i in range(3)},
    **{f"decoders.{i}.": f"decoder_level{i + 1}.body." for i in range(3)},
    **{f"downs.{i}.": f"down{i + 1}_{i + 2}.body.0." for i in range(3)},
    **{f"ups.{i}.": f"up{i + 2}_{i + 1}.body.0." for i in range(3)},
    "reduces.0.": "reduce_chan_level2.", "reduces.1.": "reduce_chan_level3."}
_RESTORMER_INNER = {
    ".norm1.weight": ".norm1.body.weight", ".norm2.weight": ".norm2.body.weight",
    ".attn.qkv_dw.": ".attn.qkv_dwconv.", ".attn.proj.": ".attn.project_out.",
    ".ffn.inp.": ".ffn.project_in.", ".ffn.dw.": ".ffn.dwconv.", ".ffn.out.": ".ffn.project_out."}


def _restormer_name(k: str) -> str:
    """Restormer: our key -> the key of DCPT's Restormer."""
    head = next(p for p in _RESTORMER_PREFIX if k.startswith(p))
    k = _RESTORMER_PREFIX[head] + k[len(head):]
    for a, b in _RESTORMER_INNER.items():
        k = k.replace(a, b)
    return k


def _restormer(state: dict[str, torch.Tensor], what: str) -> Restormer:
    """A :class:`Restormer` holding DCPT's Restormer state dict (sizes read from it)."""
    levels = ("encoder_level1", "encoder_level2", "encoder_level3", "latent")
    blocks = [count(state, f"{lv}.body") for lv in levels]
    heads = [need(state, f"{lv}.body.0.attn.temperature", what).shape[0] if n else 1
             for lv, n in zip(levels, blocks, strict=True)]
    net = Restormer(dim=need(state, "patch_embed.proj.weight", what).shape[0],
                    num_blocks=blocks, heads=heads,
                    num_refinement_blocks=count(state, "refinement.body"))
    return _fit(net, state, _restormer_name, what=what)


@checked
def load_official(path: PathLike, backbone: str = "nafnet", *, key: str | None = None,
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
    * ``"restormer"``: DCPT's ``Restormer`` as :class:`~iclr25.dcpt.restormer.Restormer`
      (``encoder_level{i}.body`` -> ``encoders.{i-1}``, ``patch_embed.proj`` -> ``embed``,
      ...). Agreement with the official module (``basicsr/archs/restormer_arch.py`` run in
      a scratch folder with its defaults, the 5D config, 26.1 M parameters; its init +
      N(0, 0.02²), loaded by both; random 1×3×64×64 and 1×3×44×60 images, the official
      input reflect-padded to 8 as its test does): max |difference| 2.4e-7 (float32),
      6.7e-16 (float64).

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
        net = _restormer(state, what)
    return Checkpoint(net.to(device).eval(), None, None, tuple(net.tap_layers))
