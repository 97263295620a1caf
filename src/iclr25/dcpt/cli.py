"""``iclr25 dcpt pretrain | finetune | restore | classify``: DCPT on the user's own images."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import typer

from iclr25._choices import DEFAULT_FALLBACK, Backbone, Fallback, Kind
from iclr25._cli import (
    EngineArgs,
    api_warnings,
    check_seed,
    choice,
    image_jobs,
    output_path,
    threads_verb,
    training_verb,
    write_image,
)
from iclr25._cli import fail as _fail
from iclr25._progress import estimating

_ALL_IN_ONE = "noise,blur,jpeg,haze,low_light"

app = typer.Typer(help="DCPT: degradation-classification pre-training for image restorers "
                       "(ICLR 2025).", no_args_is_help=True, add_completion=False)


def _pairs_from_dir(pairs: Path, max_side: int | None):
    """``DIR/<kind>/{lq,gt}/NAME.png`` -> (kinds, lq list, gt list, labels)."""
    from iclr25.datasets.images import load_folder

    if not pairs.is_dir():
        _fail(f"--pairs {pairs} is not a directory")
    kinds = sorted(d.name for d in pairs.iterdir() if d.is_dir())
    lq, gt, y = [], [], []
    for k, kind in enumerate(kinds):
        a, b = pairs / kind / "lq", pairs / kind / "gt"
        if not (a.is_dir() and b.is_dir()):
            _fail(f"--pairs: {pairs / kind} must hold lq/ and gt/ folders")
        la, lb = load_folder(a, max_side=max_side), load_folder(b, max_side=max_side)
        common = sorted(set(la) & set(lb))
        if not common:
            _fail(f"--pairs: {pairs / kind} has no lq/gt pairs with the same file name")
        for n in common:
            if la[n].shape != lb[n].shape:
                _fail(f"--pairs: {kind}/lq/{n} and {kind}/gt/{n} differ in size")
            lq.append(la[n])
            gt.append(lb[n])
            y.append(k)
    return tuple(kinds), lq, gt, y


def _paired_stream(lq, gt, y, size: int, batch: int, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    sizes = [min(x.shape[1:]) for x in lq]
    if min(sizes) < size:
        _fail(f"--size {size} is larger than the smallest image ({min(sizes)} px)")
    while True:
        idx = torch.randint(len(lq), (batch,), generator=g).tolist()
        a, b = [], []
        for i in idx:
            H, W = lq[i].shape[1:]
            t = int(torch.randint(H - size + 1, (1,), generator=g))
            s = int(torch.randint(W - size + 1, (1,), generator=g))
            a.append(lq[i][:, t:t + size, s:s + size])
            b.append(gt[i][:, t:t + size, s:s + size])
        yield torch.stack(a), torch.stack(b), torch.tensor([y[i] for i in idx])


def _data(clean_dir: Path | None, pairs: Path | None, kinds: str, size: int, batch: int,
          seed: int, max_side: int | None):
    from iclr25.datasets.images import KINDS, AllInOnePairs, load_folder

    if (clean_dir is None) == (pairs is None):
        _fail("give either CLEAN_DIR (degraded on the fly) or --pairs DIR, not both")
    if pairs is not None:
        names, lq, gt, y = _pairs_from_dir(pairs, max_side)
        return names, _paired_stream(lq, gt, y, size, batch, seed)
    names = tuple(k.strip() for k in kinds.split(",") if k.strip())
    bad = [k for k in names if k not in KINDS]
    if bad or not names:
        _fail(f"--kinds must be comma-separated names from {', '.join(KINDS)}; got {kinds!r}")
    images = list(load_folder(clean_dir, max_side=max_side).values())
    small = [i for i, x in enumerate(images) if min(x.shape[1:]) < size]
    if small:
        _fail(f"--size {size} is larger than some images in {clean_dir}")
    return names, iter(AllInOnePairs(images, names, size, batch, seed=seed))


@app.command("pretrain")
@training_verb
def pretrain_cmd(
    clean_dir: Path = typer.Argument(None, help="Folder of clean images (degraded on the fly)."),
    pairs: Path = typer.Option(None, "--pairs", help="Instead: DIR/<kind>/{lq,gt}/NAME.png."),
    kinds: str = typer.Option(_ALL_IN_ONE, "--kinds",
                              help="Comma-separated degradations for CLEAN_DIR."),
    steps: int = typer.Option(60, "--steps", help="Pre-training steps (>= 1); 60 fit in about "
                              "2 minutes on 2 cores (a demonstration); the reproduction caps "
                              "at 150, the paper-scale run is --steps 1000 or more (about an "
                              "hour on 2 cores)."),
    out: Path = typer.Option(..., "--out", help="Output .safetensors (model + classifier)."),
    width: int = typer.Option(16, "--width", help="UNet width."),
    size: int = typer.Option(64, "--size", help="Crop side."),
    batch: int = typer.Option(16, "--batch", help="Batch size."),
    lr: float = typer.Option(1e-3, "--lr", help="Adam learning rate."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    max_side: int = typer.Option(None, "--max-side", help="Shrink images to this side."),
    engine: EngineArgs = None,
) -> None:
    """Pre-train a U-Net restorer by degradation classification (DCPT)."""
    from iclr25.dcpt.io import save
    from iclr25.dcpt.networks import UNet
    from iclr25.dcpt.training import pretrain

    for name, v, low in (("--steps", steps, 1), ("--width", width, 1), ("--size", size, 8),
                         ("--batch", batch, 1), ("--seed", seed, 0)):
        if v < low:
            _fail(f"{name} must be >= {low}, got {v}")
    if not lr > 0:
        _fail(f"--lr must be > 0, got {lr}")
    output_path(out, suffixes=(".safetensors",))
    run = engine.for_(pretrain, out, "dcpt pretrain")
    try:
        names, stream = _data(clean_dir, pairs, kinds, size, batch, seed, max_side)
        if len(names) < 2:
            _fail("DCPT needs at least two degradation kinds")
        with estimating():
            res = pretrain(UNet(width=width, seed=seed), stream, n_classes=len(names), steps=steps,
                           lr=lr, seed=seed, **run)
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    save(res.model, out, classifier=res.classifier, kinds=names, layers=res.layers)
    typer.echo(f"pre-trained on {', '.join(names)}: last-step accuracy "
               f"{res.history['accuracy'][-1]:.2f}; wrote {out}")


def _check_counts(steps: int, size: int, batch: int, seed: int, lr: float) -> None:
    """finetune's counts and learning rate, each refused in one line naming its option."""
    for name, v, low in (("--steps", steps, 1), ("--size", size, 8), ("--batch", batch, 1),
                         ("--seed", seed, 0)):
        if v < low:
            _fail(f"{name} must be >= {low}, got {v}")
    if not lr > 0:
        _fail(f"--lr must be > 0, got {lr}")


@app.command("finetune")
@training_verb
def finetune_cmd(
    model: Path = typer.Argument(..., help="A .safetensors from `dcpt pretrain` (or earlier)."),
    clean_dir: Path = typer.Argument(None, help="Folder of clean images (degraded on the fly)."),
    pairs: Path = typer.Option(None, "--pairs", help="Instead: DIR/<kind>/{lq,gt}/NAME.png."),
    degradation: Kind | None = typer.Option(None, "--degradation",
                                            parser=choice(Kind, "--degradation"),
                                            help="Fine-tune for this one "
                                    "degradation: the recommended path when you know it "
                                    "(noise σ = 25/255 on three photos: 27.9 dB against 19.8 "
                                    "all-in-one, input 20.5, at the defaults); the "
                                    "checkpoint records it and `restore` checks against its "
                                    "classical restorer."),
    kinds: str = typer.Option(None, "--kinds", help="Instead: all-in-one over these "
                              "comma-separated degradations (e.g. "
                              "noise,blur,jpeg,haze,low_light); one of --degradation and "
                              "--kinds is needed."),
    steps: int = typer.Option(80, "--steps", help="Fine-tuning steps (>= 1); 80 fit in about "
                              "2 minutes on 2 cores; the reproduction uses 200, the "
                              "paper-scale run --steps 1000 or more."),
    out: Path = typer.Option(..., "--out", help="Output .safetensors."),
    size: int = typer.Option(64, "--size", help="Training crop side in pixels."),
    batch: int = typer.Option(16, "--batch", help="Crops per step."),
    lr: float = typer.Option(1e-3, "--lr", help="Adam learning rate (> 0)."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    max_side: int = typer.Option(None, "--max-side", help="Shrink images to this side."),
    engine: EngineArgs = None,
) -> None:
    """Fine-tune a (pre-trained) restorer with L1 on degraded/clean pairs: for one
    --degradation (recommended when you know it) or all-in-one over --kinds."""
    from iclr25.dcpt.io import load, save
    from iclr25.dcpt.training import finetune

    _check_counts(steps, size, batch, seed, lr)
    if degradation is not None and kinds is not None:
        _fail("give --degradation (one kind) or --kinds (all-in-one), not both")
    if degradation is None and kinds is None and pairs is None:  # issue 68: no silent default
        _fail(f"give --degradation KIND (your photos' kind: one of {', '.join(get_args(Kind))}; "
              f"recommended) or --kinds K1,K2,... (all-in-one)")
    if degradation is not None and pairs is not None:
        _fail("--degradation degrades CLEAN_DIR on the fly; with --pairs, keep only that "
              "kind's folder")
    output_path(out, suffixes=(".safetensors",))
    run = engine.for_(finetune, out, "dcpt finetune")
    try:
        ck = load(model)
        seen, stream = _data(clean_dir, pairs, degradation or kinds or _ALL_IN_ONE, size,
                             batch, seed, max_side)
        with estimating():
            res = finetune(ck.model, stream, steps=steps, lr=lr, seed=seed, **run)
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    save(res.model, out, classifier=ck.classifier, kinds=ck.kinds, layers=ck.layers,
         degradation=degradation, finetuned=None if degradation else seen)
    what = f"for {degradation}" if degradation else "all-in-one"
    typer.echo(f"fine-tuned {what} {steps} steps: last L1 {res.history['loss'][-1]:.4f}; "
               f"wrote {out}")
    if degradation is None:
        typer.echo(_all_in_one_note(seen, ck.kinds if ck.classifier is not None else ()))


def _all_in_one_note(finetuned: tuple[str, ...], named: tuple[str, ...]) -> str:
    """The line after an all-in-one fine-tune on ``finetuned`` kinds: what `restore` does
    without --degradation with a classifier pre-trained on ``named`` (empty: none). A kind
    fine-tuned but not pre-trained is never named (:func:`_allowed`): the issue 68 walk
    (h68walk12) fine-tuned defocus and motion blur on the default pre-training's classifier
    and was told, wrongly, that restore names each image's kind."""
    if not named:
        return ("note: all-in-one, and the model has no degradation classifier: `restore` "
                "needs --degradation KIND to judge its output against that kind's classical "
                "restorer (without it or --reference the input is kept)")
    line = ("note: all-in-one: `restore` names each image's degradation with the model's "
            "classifier and checks against that kind's classical restorer")
    unknown = [k for k in finetuned if k not in named]
    if unknown:
        line += (f"; it was pre-trained on {', '.join(named)} and cannot name "
                 f"{', '.join(unknown)}: give `restore --degradation KIND` for such photos, "
                 f"or pre-train with --kinds including them")
    return line


@app.command("restore")
@threads_verb
def restore_cmd(
    model: Path = typer.Argument(..., help="A .safetensors restorer."),
    source: Path = typer.Argument(..., help="An image file or a folder of images."),
    dest: Path = typer.Argument(..., help="Output file (for one image) or folder."),
    degradation: Kind | None = typer.Option(None, "--degradation",
                                            parser=choice(Kind, "--degradation"),
                                            help="The degradation, if known "
                                    "(default: the one the model was fine-tuned for): picks "
                                    "the classical restorer the output is checked against."),
    fallback: Fallback | None = typer.Option(
        None, "--fallback", parser=choice(Fallback, "--fallback"),
        help="Where ours scores below the classical result or not --margin above the input: "
             "input (write the input), classical (the classical result where it beats ours and "
             f"the input as ours must, else as input), none (keep ours); default {DEFAULT_FALLBACK}"
             " (as the API's), so that no output scores below its input (none with --no-check)."),
    margin: float = typer.Option(None, "--margin", help="Ours is written only where the check "
                                 "scores it this much above the input (dB; NIQE units), a fixed "
                                 "margin; default 1 (noise 0.5 dB + 2 standard errors of the "
                                 "estimated gain; blur 2; motion_blur 2, posterior 0.25 fixed; "
                                 "defocus 0, re-blur 5 fixed), 0 with --reference."),
    reference: Path = typer.Option(None, "--reference", help="Clean image (or folder, same "
                                   "file names): the check uses PSNR against it."),
    check: bool = typer.Option(True, "--check/--no-check", help="Compare each output with "
                               "the input and the classical restorer (by PSNR with "
                               "--reference; else estimated PSNR: noise's R2R, the round "
                               "trip one scale down (blur, motion_blur), posterior (defocus), "
                               "exposure/cast/noise (low_light); NIQE otherwise, which judges "
                               "no output: the input is kept) and warn where ours is worse."),
    tile: int = typer.Option(None, "--tile", help="Process in tiles of this side."),
) -> None:
    """Restore an image or every image in a folder, checking each against the input and the
    classical restorer (a warning names both numbers where ours is worse)."""
    from iclr25._guard import check_fallback, check_margin
    from iclr25.dcpt.baselines import CLASSICAL
    from iclr25.dcpt.io import load
    from iclr25.dcpt.restoration import restore

    if tile is not None and tile < 8:
        _fail(f"--tile must be >= 8, got {tile}")
    try:
        ck = load(model)
        degradation = degradation or ck.degradation
        # no known kind: DCPT's own classifier names each image's (issue 68), and a classical
        # fallback is settled image by image; no --fallback: the API's default
        named = degradation is None and ck.classifier is not None and bool(ck.kinds)
        fallback = check_fallback(fallback, check, degradation=degradation,
                                  classical=None if named else CLASSICAL, cli=True)
        margin = check_margin(margin, check, cli=True)
    except ValueError as exc:
        _fail(str(exc))
    jobs, low = image_jobs(source, dest, reference), []
    for name, x, ref, path, src in jobs:
        kind, fb = degradation, fallback
        if named:  # DCPT's own classifier names the degradation (issue 68)
            kind, fb = _classified(ck, x, name, fb, low)
        with api_warnings(("fallback",), name=name, api="dcpt.restore"):
            out = restore(ck.model, x, degradation=kind, fallback=fb, margin=margin,
                          check=check, tile=tile, reference=ref)
        write_image(out, x, path, src)
        typer.echo(f"wrote {path}")
    if low:
        _warn_unsure(len(low), len(jobs), len(_allowed(ck)))


def _warn_unsure(n_unsure: int, n: int, k: int, hint: str = "--degradation KIND") -> None:
    """One stderr line for a command whose classifier was unsure of ``n_unsure`` images."""
    from iclr25.dcpt.probe import unsure_message

    typer.echo(f"warning: {unsure_message(n_unsure, n, k, hint)}", err=True)


def _allowed(ck) -> list[int]:
    """The kinds (indices) ``restore`` classifies among: only those the model was fine-tuned
    on: a blurred photo named "jpeg" (0.35) by a weak classifier was judged by NIQE and came
    out worse (issue 68 walk)."""
    return [i for i, kind in enumerate(ck.kinds) if ck.finetuned is None
            or kind in ck.finetuned] or list(range(len(ck.kinds)))


def _classified(ck, x, name: str, fallback: str, low: list[str]) -> tuple[str, str]:
    """The kind the checkpoint's classifier names for image ``x`` (printed on stderr) and
    the fallback for it (input where that kind has no classical restorer); ``name`` is
    appended to ``low`` where it is unsure (:func:`~iclr25.dcpt.probe.unsure`, over the
    allowed kinds)."""
    from iclr25.dcpt.baselines import CLASSICAL
    from iclr25.dcpt.probe import _probabilities, unsure

    p = _probabilities(ck, x)[0]
    allowed = _allowed(ck)
    k = max(allowed, key=lambda i: float(p[i]))
    share = float(p[k]) / max(float(p[allowed].sum()), 1e-12)  # among the allowed kinds
    typer.echo(f"{name}: degradation classified as {ck.kinds[k]} ({share:.2f}); "
               f"--degradation KIND overrides", err=True)
    if bool(unsure(p[allowed][None] / p[allowed].sum().clamp_min(1e-12))):
        low.append(name)
    if fallback == "classical" and ck.kinds[k] not in CLASSICAL:
        typer.echo(f"note: {name}: {ck.kinds[k]} has no classical restorer: --fallback "
                   f"input for it", err=True)
        return ck.kinds[k], "input"
    return ck.kinds[k], fallback


@app.command("classify")
@threads_verb
def classify_cmd(
    model: Path = typer.Argument(..., help="A .safetensors saved with its classifier."),
    source: Path = typer.Argument(..., help="An image file or folder."),
) -> None:
    """Name the degradation of each image (from the restorer's features)."""
    from iclr25.datasets.images import load_folder
    from iclr25.dcpt.io import load
    from iclr25.dcpt.probe import _probabilities, unsure

    try:
        ck = load(model)
        images = load_folder(source)
        if ck.classifier is None:
            _fail(f"{model} holds no degradation classifier")
        names = ck.kinds or tuple(str(i) for i in range(ck.classifier.n_classes))
        low = 0
        typer.echo("image\tdegradation\tprobability")   # columns named, as other outputs
        for name, x in images.items():
            p = _probabilities(ck, x)[0]
            k = int(p.argmax())
            low += int(unsure(p[None]))
            typer.echo(f"{name}\t{names[k]}\t{float(p[k]):.3f}")
    except ValueError as exc:
        _fail(str(exc))
    if low:  # once per command (issue 68); classify itself takes no --degradation
        _warn_unsure(low, len(images), len(names), "`dcpt restore --degradation KIND`")


@app.command("convert")
def convert_cmd(
    official: Path = typer.Argument(..., help="A released DCPT .pth (or .safetensors of it)."),
    backbone: Backbone = typer.Option(..., "--backbone", parser=choice(Backbone, "--backbone"),
                                      help="The file's architecture (e.g. "
                                      "dcpt_nafnet_5d.pth: nafnet)."),
    out: Path = typer.Option(..., "--out", help="Output .safetensors for restore."),
) -> None:
    """Read a released DCPT checkpoint into a model file that `restore` takes.

    The files are linked from the README of MILab-PKU/dcpt (a Google Drive folder)."""
    from iclr25.dcpt.io import save
    from iclr25.dcpt.official import BACKBONES, load_official

    if backbone not in BACKBONES:
        _fail(f"--backbone must be one of {', '.join(BACKBONES)}, got {backbone!r}")
    output_path(out, suffixes=(".safetensors",))
    try:
        ck = load_official(official, backbone)
    except ValueError as exc:
        _fail(str(exc))
    save(ck.model, out, layers=ck.layers)
    n = sum(p.numel() for p in ck.model.parameters())
    typer.echo(f"read the official {backbone} ({n / 1e6:.1f} M parameters) from "
               f"{official.name}; wrote {out}")
