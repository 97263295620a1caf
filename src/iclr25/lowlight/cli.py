"""``iclr25 lowlight fit | enhance``: train on a folder of dark photos, then enhance files."""

from __future__ import annotations

import warnings
from pathlib import Path

import typer

from iclr25._cli import check_seed, output_path
from iclr25._cli import fail as _fail
from iclr25._progress import estimating

app = typer.Typer(help="Zero-reference low-light denoising and enhancement (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


@app.command()
def fit(dark_dir: Path = typer.Argument(..., help="folder (or file) of dark images"),
        out: Path = typer.Option(..., "--out", help="model file to write"),
        steps: int = typer.Option(300, "--steps", help="Adam steps; the paper-scale run is "
                                  "--steps 600 --crop 128 --batch-size 4 --lr 1e-4 --width 64 "
                                  "(an hour or more on a CPU)."),
        crop: int = typer.Option(64, "--crop"),
        batch_size: int = typer.Option(2, "--batch-size"),
        lr: float = typer.Option(5e-4, "--lr"),
        width: int = typer.Option(16, "--width", help="Network width (paper: 64)."),
        method: str = typer.Option("retinex", "--method", help="retinex | zero_dce"),
        seed: int = typer.Option(0, "--seed", callback=check_seed)) -> None:
    """Train on DARK_DIR's images (no references) and save the model.

    The defaults are the reproduction's CPU setting (300 steps, width 16, 64-px crops), which
    beats Zero-DCE at full scale: about a minute and a half of CPU on a few bundled photos."""
    from iclr25.datasets.images import load_folder
    from iclr25.lowlight.training import ZeroReferenceEnhancer

    if steps < 1:
        _fail(f"--steps must be >= 1, got {steps}")
    if lr <= 0:
        _fail(f"--lr must be > 0, got {lr}")
    if crop < 4 or crop % 2:
        _fail(f"--crop must be an even number >= 4, got {crop}")
    if method not in ("retinex", "zero_dce"):
        _fail(f"--method must be retinex or zero_dce, got {method!r}")
    output_path(out)
    try:
        images = list(load_folder(dark_dir).values())
    except ValueError as exc:
        _fail(f"DARK_DIR: {exc}")
    small = [i for i, x in enumerate(images) if min(x.shape[1:]) < crop]
    if small:
        _fail(f"--crop {crop} is larger than some images in {dark_dir}")
    with estimating():
        est = ZeroReferenceEnhancer(method=method, width=width, steps=steps, crop=crop,
                                    batch_size=batch_size, lr=lr, seed=seed).fit(images)
    est.save(out)
    typer.echo(f"trained {steps} steps on {len(images)} images; final loss "
               f"{est.history_[-1]:.4f}; wrote {out}")


@app.command("enhance")
def enhance_cmd(model: Path = typer.Argument(..., help="model file written by fit"),
                inp: Path = typer.Argument(..., help="image file or folder"),
                out: Path = typer.Argument(..., help="output file or folder"),
                fallback: str = typer.Option("none", "--fallback", help="Where ours scores "
                                             "below the alternative: none (warn, keep ours; "
                                             "the default), classical (write the best of "
                                             "gamma / CLAHE / gamma + NL-means), input (write "
                                             "the input)."),
                reference: Path = typer.Option(None, "--reference", help="Well-lit image (or "
                                               "folder, same file names): the check uses "
                                               "PSNR against it."),
                check: bool = typer.Option(True, "--check/--no-check", help="Compare each "
                                           "output with the input and the classical "
                                           "pipelines (PSNR with --reference, else NIQE) and "
                                           "warn where ours is worse."),
                tile: int = typer.Option(None, "--tile", help="tile side (bounds memory)")
                ) -> None:
    """Enhance an image file or every image in a folder, checking each against the input and
    the classical pipelines (a warning names both numbers where ours is worse)."""
    from iclr25._guard import FALLBACKS
    from iclr25.datasets.images import IMAGE_SUFFIXES, load_folder, save_image
    from iclr25.lowlight.training import ZeroReferenceEnhancer

    if tile is not None and tile < 8:
        _fail(f"--tile must be >= 8, got {tile}")
    if fallback not in FALLBACKS:
        _fail(f"--fallback must be one of {', '.join(FALLBACKS)}; got {fallback!r}")
    if fallback != "none" and not check:
        _fail(f"--fallback {fallback} needs the check (drop --no-check)")
    try:
        est = ZeroReferenceEnhancer.load(model)
    except ValueError as exc:
        _fail(f"MODEL: {exc}")
    try:
        images = load_folder(inp)
    except ValueError as exc:
        _fail(f"IN: {exc}")
    refs = None
    if reference is not None:
        try:
            refs = load_folder(reference)
        except ValueError as exc:
            _fail(f"--reference: {exc}")
        if reference.is_file():
            refs = {next(iter(images)): next(iter(refs.values()))}
        missing = [n for n in images if n not in refs or refs[n].shape != images[n].shape]
        if missing:
            _fail(f"--reference has no image of the same size for {missing[0]}")
    # a missing output folder is made, as every verb does (`dcpt restore` did, this refused)
    if inp.is_file():
        output_path(out, "OUT", suffixes=IMAGE_SUFFIXES)
        targets = {next(iter(images)): out}
    else:
        if out.exists() and not out.is_dir():
            _fail(f"OUT must be a folder when IN is a folder, got file {out}")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _fail(f"OUT: cannot create folder {out} ({exc.strerror})")
        targets = {n: out / n for n in images}
    for name, x in images.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = est.transform(x, tile=tile, fallback=fallback, check=check,
                              reference=None if refs is None else refs[name])
        for w in caught:
            typer.echo(f"warning: {name}: {w.message}", err=True)
        save_image(y, targets[name])
    typer.echo(f"enhanced {len(images)} image(s) -> {out}")


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
