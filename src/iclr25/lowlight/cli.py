"""``iclr25 lowlight fit | enhance``: train on a folder of dark photos, then enhance files."""

from __future__ import annotations

from pathlib import Path

import typer

from iclr25._choices import DEFAULT_FALLBACK, Fallback, LowLightMethod
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

app = typer.Typer(help="Zero-reference low-light denoising and enhancement (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


@app.command()
@training_verb
def fit(dark_dir: Path = typer.Argument(..., help="folder (or file) of dark images"),
        out: Path = typer.Option(..., "--out", help="model file to write"),
        steps: int = typer.Option(300, "--steps", help="Adam steps; the paper-scale run is "
                                  "--steps 600 --crop 128 --batch-size 4 --lr 1e-4 --width 64 "
                                  "(an hour or more on a CPU)."),
        crop: int = typer.Option(64, "--crop", help="Training crop side in pixels (even, "
                                 ">= 4)."),
        batch_size: int = typer.Option(2, "--batch-size", help="Crops per step."),
        lr: float = typer.Option(5e-4, "--lr", help="Adam learning rate (> 0)."),
        width: int = typer.Option(16, "--width", help="Network width (paper: 64)."),
        method: LowLightMethod = typer.Option("retinex", "--method",
                                              parser=choice(LowLightMethod, "--method"),
                                      help="The paper's network or the Zero-DCE baseline."),
        seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
        engine: EngineArgs = None) -> None:
    """Train on DARK_DIR's images (no references) and save the model.

    The defaults are the reproduction's CPU setting (300 steps, width 16, 64-px crops), which
    beats Zero-DCE at full scale: about a minute and a half of CPU on a few bundled photos."""
    from iclr25.datasets.images import load_folder
    from iclr25.lowlight.estimator import ZeroReferenceEnhancer

    if steps < 1:
        _fail(f"--steps must be >= 1, got {steps}")
    if lr <= 0:
        _fail(f"--lr must be > 0, got {lr}")
    if crop < 4 or crop % 2:
        _fail(f"--crop must be an even number >= 4, got {crop}")
    output_path(out)
    run = engine.for_(ZeroReferenceEnhancer.fit, out, "lowlight fit")
    try:
        images = list(load_folder(dark_dir).values())
    except ValueError as exc:
        _fail(f"DARK_DIR: {exc}")
    small = [i for i, x in enumerate(images) if min(x.shape[1:]) < crop]
    if small:
        _fail(f"--crop {crop} is larger than some images in {dark_dir}")
    try:
        with estimating():
            est = ZeroReferenceEnhancer(method=method, width=width, steps=steps, crop=crop,
                                        batch_size=batch_size, lr=lr, seed=seed
                                        ).fit(images, **run)
    except ValueError as exc:       # a checkpoint that does not fit: one line
        _fail(str(exc))
    est.save(out)
    typer.echo(f"trained {steps} steps on {len(images)} images; final loss "
               f"{est.history_[-1]:.4f}; wrote {out}")


@app.command("enhance")
@threads_verb
def enhance_cmd(model: Path = typer.Argument(..., help="model file written by fit"),
                inp: Path = typer.Argument(..., help="image file or folder"),
                out: Path = typer.Argument(..., help="output file or folder"),
                fallback: Fallback | None = typer.Option(
                    None, "--fallback", parser=choice(Fallback, "--fallback"),
                    help="Where ours scores below the classical result or does not beat the "
                         "input by --margin: input (write the input), classical (write the "
                         "best of gamma / CLAHE / gamma + NL-means where it scores above ours "
                         "and beats the input as ours must, else as input), "
                         f"none (warn, keep ours); default {DEFAULT_FALLBACK} (as the API's "
                         "and dcpt restore's), so that no output scores below its input "
                         "(none with --no-check)."),
                margin: float = typer.Option(
                    None, "--margin", help="Ours is written only where the check scores it "
                    "this much above the input (dB); default 1 dB, 0 with --reference."),
                reference: Path = typer.Option(None, "--reference", help="Well-lit image (or "
                                               "folder, same file names): the check uses "
                                               "PSNR against it."),
                check: bool = typer.Option(True, "--check/--no-check", help="Compare each "
                                           "output with the input and the classical "
                                           "pipelines (PSNR with --reference, else a PSNR "
                                           "estimated from tones, colour cast and noise) and "
                                           "warn where ours is worse; without --reference a "
                                           "low-key scene (a night sky, objects on black), "
                                           "one whose highlights reach middle grey or one "
                                           "mostly below its noise floor is not judged and "
                                           "the input is written."),
                tile: int = typer.Option(None, "--tile", help="tile side (bounds memory)")
                ) -> None:
    """Enhance an image file or every image in a folder, checking each against the input and
    the classical pipelines (a warning names both numbers where ours is worse)."""
    from iclr25._guard import check_fallback, check_margin
    from iclr25.lowlight.estimator import ZeroReferenceEnhancer

    if tile is not None and tile < 8:
        _fail(f"--tile must be >= 8, got {tile}")
    try:
        fallback = check_fallback(fallback, check, cli=True)
        margin = check_margin(margin, check, cli=True)
    except ValueError as exc:
        _fail(str(exc))
    try:
        est = ZeroReferenceEnhancer.load(model)
    except ValueError as exc:
        _fail(f"MODEL: {exc}")
    jobs = image_jobs(inp, out, reference)
    for name, x, ref, path, src in jobs:
        with api_warnings(("fallback",), name=name, api="lowlight.enhance"):
            y = est.transform(x, tile=tile, fallback=fallback, margin=margin, check=check,
                              reference=ref)
        write_image(y, x, path, src)
    typer.echo(f"enhanced {len(jobs)} image(s) -> {out}")


@app.command("convert")
def convert_cmd(official: Path = typer.Argument(..., help="the official .pth (e.g. "
                                                 "LOLv1_test.pth) or a .safetensors of it"),
                out: Path = typer.Option(..., "--out", help="model file to write (.safetensors)")
                ) -> None:
    """Read the paper's released weights into a model file that `enhance` takes.

    The files are linked from the README of huaqlili/unsupervised-light-enhance-ICLR2025
    (LOLv1_test.pth, LOLv2_test.pth, SICE_test.pth)."""
    from iclr25.lowlight.official import load_official

    output_path(out, suffixes=(".safetensors",))
    try:
        est = load_official(official)
    except ValueError as exc:
        _fail(str(exc))
    est.save(out)
    cfg = est.config_
    typer.echo(f"read the official network (width {cfg['width']}, {cfg['n_blocks']} blocks) "
               f"from {official.name}; wrote {out}")
