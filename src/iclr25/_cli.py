"""What every command line of the package shares: one way to refuse bad usage, one way to
take a choice among the names of a ``Literal``, and one way to check the files a verb reads
and writes before any work (their contents are read by :mod:`iclr25._io`, whose errors name
the file)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar, get_args

import typer

T = TypeVar("T")

#: numpy and scikit-learn seeds are 32-bit: a larger seed is bad usage (exit 2), not an
#: experiment that errors later
SEED_MAX = 2**32 - 1


def fail(message: object) -> NoReturn:
    """Print ``error: message`` on stderr and exit 2 (bad usage), with no traceback."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2) from None


def cli_words(message: object, names: dict[str, str]) -> str:
    """``message`` (a library's refusal) with its leading API name, one of ``names``' keys
    (``n_blocks must be >= 1``), as the command line spells it (``--n-blocks must ...``)."""
    text = str(message)
    for api, flag in names.items():
        if re.match(rf"{re.escape(api)}\b", text):
            return flag + text[len(api):]
    return text


def check_seed(value: int | None) -> int | None:
    """Every ``--seed`` option's callback: exit 2 unless the seed lies in [0, 2**32)."""
    if value is not None and not 0 <= value <= SEED_MAX:
        fail(f"--seed must be >= 0 and < 2**32, got {value}")
    return value


def choice(names: Any, option: str) -> Callable[[str], str]:
    """An option's ``parser=`` taking one of the names of the ``Literal`` ``names``.

    Annotate the parameter with the same ``Literal``: typer's help then lists the names.
    Any other value exits 2 with one line naming ``option`` and the names (typer's own check
    of a ``Literal`` prints a framed usage message instead)::

        fallback: Fallback = typer.Option("none", "--fallback",
                                          parser=choice(Fallback, "--fallback"))
    """
    allowed = get_args(names)

    def parse(value: str) -> str:
        if value not in allowed:
            fail(f"{option} must be one of {', '.join(allowed)}; got {value!r}")
        return value

    return parse


def _suffix_ok(p: Path, option: str, suffixes: tuple[str, ...] | None) -> None:
    if suffixes and p.suffix.lower() not in suffixes:
        fail(f"{option} must end in {' or '.join(suffixes)}, got {p.name}")


def output_path(path: Path | None, option: str = "--out", *,
                suffixes: tuple[str, ...] | None = None) -> Path | None:
    """Check a file the verb will write, before any work; its folder is created if missing.

    Every verb behaves alike: a missing folder is made (as ``mkdir -p``); a wrong suffix, a
    path that is a folder, or a folder that cannot be made or written exits 2 naming
    ``option``. ``None`` (the option not given) passes through.
    """
    if path is None:
        return None
    p = Path(path)
    if p.is_dir():
        fail(f"{option} {p} is a directory, expected a file name")
    _suffix_ok(p, option, suffixes)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"{option}: cannot create folder {p.parent} ({exc.strerror})")
    if not os.access(p.parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        fail(f"{option}: {p} is not writable")
    return p


def input_file(path: Path, option: str = "FILE", *,
               suffixes: tuple[str, ...] | None = None) -> Path:
    """Check a file the verb will read, before any work: it exists, is a readable, non-empty
    file with an accepted suffix; else exit 2 naming ``option`` and the file."""
    p = Path(path)
    if not p.exists():
        fail(f"{option} {p} does not exist")
    if p.is_dir():
        fail(f"{option} {p} is a directory, expected a file")
    _suffix_ok(p, option, suffixes)
    if not os.access(p, os.R_OK):
        fail(f"{option} {p} is not readable (permission denied)")
    if p.stat().st_size == 0:
        fail(f"{option} {p} is empty")
    return p


def image_jobs(source: Path, dest: Path, reference: Path | None = None) -> list[tuple]:
    """What an image verb (restore, enhance) does: ``(name, image, reference or None, path
    to write, file read)`` for each image of IN, all read and checked before any work.

    IN (``source``) is an image file or a folder of images; OUT (``dest``) an image path for
    one image, a folder for a folder (a missing folder made in both cases); --reference
    an image for one image, else a folder with an image of the same name and size for each.
    Anything else exits 2 naming the argument.
    """
    from iclr25.datasets.images import IMAGE_SUFFIXES, load_folder

    try:
        images = load_folder(source)
    except ValueError as exc:
        fail(f"IN: {exc}")
    refs = None
    if reference is not None:
        try:
            refs = load_folder(reference)
        except ValueError as exc:
            fail(f"--reference: {exc}")
        if reference.is_file():
            refs = {next(iter(images)): next(iter(refs.values()))}
        for n, im in images.items():
            if n not in refs:
                fail(f"--reference has no image named {n}")
            if refs[n].shape != im.shape:
                fail(f"--reference's {n} is {'×'.join(map(str, refs[n].shape[-2:]))}, the "
                     f"input's {'×'.join(map(str, im.shape[-2:]))}")
    if source.is_file():  # a missing folder is made, as every verb does (output_path)
        targets = {next(iter(images)): output_path(dest, "OUT", suffixes=IMAGE_SUFFIXES)}
    else:
        if dest.exists() and not dest.is_dir():
            fail(f"OUT must be a folder when IN is a folder, got file {dest}")
        try:
            dest.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"OUT: cannot create folder {dest} ({exc.strerror})")
        targets = {n: dest / n for n in images}
    read = {n: source if source.is_file() else source / n for n in images}
    return [(n, images[n], None if refs is None else refs[n], p, read[n])
            for n, p in targets.items()]


def write_image(y: Any, x: Any, path: Path, source: Path) -> None:
    """Write an image verb's result ``y`` for the image ``x`` read from ``source``: where ``y``
    is the input unchanged (the check kept it) and ``path`` has ``source``'s format (by
    Pillow's suffixes: .jpg and .jpeg alike), a copy of ``source``'s bytes, so that a kept
    JPEG is not compressed again (issue 68, walk 13: kept .jpg inputs re-encoded at quality
    95 came back 0.04-0.84 dB below the input against the clean photo) and a grey or 16-bit
    file stays as it was."""
    import shutil

    import torch

    from iclr25._optional import require
    from iclr25.datasets.images import save_image

    fmt = require("PIL.Image", "image").registered_extensions()
    if fmt.get(source.suffix.lower()) == fmt.get(path.suffix.lower()) and torch.equal(y, x):
        # written over itself (the same path, a link to it): nothing to do
        if not (path.exists() and os.path.samefile(source, path)):
            shutil.copyfile(source, path)
        return
    save_image(y, path)


def option_words(message: str, options: tuple[str, ...]) -> str:
    """``message`` with each of the API's keywords ``options`` that it spells as Python
    (``fallback='input'``, ``max_episode_steps=20``) written as the command line's option
    (``--fallback input``, ``--max-episode-steps 20``)."""
    for key in options:
        flag = "--" + key.replace("_", "-")
        message = re.sub(rf"\b{key}='([^']*)'", lambda m, f=flag: f"{f} {m[1]}", message)
        message = re.sub(rf"\b{key}=(?=[^\s'])", f"{flag} ", message)
    return message


def print_notes(notes: list[str]) -> None:
    """A verb's notes (the lines :func:`api_warnings` collected among them) on stderr, after
    its checks, so that an error stays one line."""
    for note in notes:
        typer.echo(note, err=True)


@contextlib.contextmanager
def api_warnings(options: tuple[str, ...] = (), lines: list[str] | None = None, *,
                 name: str | None = None, api: str | None = None,
                 words: Callable[[str], str] | None = None):
    """The warnings the API gives inside the block, each one line in the command line's
    words: ``warning: message``, or ``warning: NAME: message`` where ``name`` says what it
    concerns (the verb, ``toss fit``; the image, ``cat.png``); the API's keywords ``options``
    written as the options (:func:`option_words`: ``max_episode_steps=20`` as
    ``--max-episode-steps 20``); the function's name ``api`` that the message starts with
    (``dcpt.restore: ``) left out; ``words``, the verb's own rewording of what is left (``cox
    fit``'s, ``oft solve``'s). Every verb prints the API's warnings through this one printer.

    With ``lines`` None they are printed on stderr as they come, before the work they
    concern (``gsd train``'s, before its training); else appended to ``lines``, which the
    verb prints after its checks (:func:`print_notes`), so that an error stays one line
    (``lsdt evaluate``'s).

    The policy, one for every verb: the warning filters in force are kept, so a user's
    ``-W ignore`` (or ``PYTHONWARNINGS=ignore``) silences them, and Python's default shows
    a warning from one line once per block (a block is entered afresh per image, so each
    image of a folder gets its own); but a filter that makes a warning an exception (``-W
    error``, ``PYTHONWARNINGS=error``) prints it once instead: an exception would end the
    verb in a traceback, after the work it warned of had begun (``lsdt evaluate`` did, exit
    1, where it printed the warning before issue 68's review)::

        notes: list[str] = []
        with api_warnings(("max_episode_steps",), notes):
            res = evaluate(model, env, max_episode_steps=steps)
    """
    head = "warning: " if name is None else f"warning: {name}: "

    def show(message: Warning | str, *_args: object, **_kwargs: object) -> None:
        text = str(message)
        if api is not None:
            text = text.removeprefix(f"{api}: ")
        text = option_words(text, options)
        line = head + (text if words is None else words(text))
        if lines is None:
            typer.echo(line, err=True)
        else:
            lines.append(line)

    def pattern(p: re.Pattern | str | None) -> str:   # Python's own filters hold exact names
        return "" if p is None else p.pattern if isinstance(p, re.Pattern) else \
            re.escape(p) + r"\Z"

    with warnings.catch_warnings():
        kept = list(warnings.filters)
        warnings.resetwarnings()   # a new filter version: each block's once-per-line is fresh
        for action, message, category, module, lineno in kept:   # in order, "error" printed
            warnings.filterwarnings("default" if action == "error" else action,
                                    pattern(message), category, pattern(module), lineno,
                                    append=True)
        warnings.showwarning = show
        yield


# -- the training engine's options, the same on every training verb ---------------------------

#: The options :func:`training_verb` adds: (parameter, flag, type, default, help).
ENGINE_OPTIONS = (
    ("devices", "--devices", int, 1,
     "Processes (CPU, gloo) or GPUs (NCCL) of data-parallel training; at most what exists."),
    ("strategy", "--strategy", str, "auto", "auto (ddp when --devices > 1), single or ddp."),
    ("precision", "--precision", str, "32", "32, bf16-mixed, or 16-mixed (CUDA)."),
    ("checkpoint_every", "--checkpoint-every", int | None, None,
     "Write the whole training state every K optimiser steps (to --out with the suffix "
     ".ckpt)."),
    ("resume", "--resume", Path | None, None,
     "Continue from a checkpoint of this same training (data, batch size, model)."),
)


#: The torch CPU threads option :func:`threads_verb` adds (every training verb's, beside the
#: engine's; evaluating verbs' too), as
#: ``iclr25 reproduce --threads`` (it sets this process's threads; the engine's own
#: processes under ``--devices`` keep theirs).
THREADS_OPTION = ("threads", "--threads", int | None, None,
                  "Torch CPU threads of this process (default: torch's, one per core); 1 on a "
                  "busy or shared machine, where more threads wait on each other.")


@dataclass(frozen=True)
class EngineArgs:
    """The engine options a training verb was given (:data:`ENGINE_OPTIONS`)."""

    devices: int = 1
    strategy: str = "auto"
    precision: str = "32"
    checkpoint_every: int | None = None
    resume: Path | None = None

    def given(self) -> list[str]:
        """The flags given away from their defaults."""
        return [flag for name, flag, _, default, _ in ENGINE_OPTIONS
                if getattr(self, name) != default]

    def run(self, out: Path, device: str = "cpu") -> dict[str, Any]:
        """The checked keyword arguments of the API's training call (exit 2 with one line
        naming the option if not): the checkpoint goes beside ``--out`` as ``<out>.ckpt``."""
        from iclr25._engine import Engine

        run = {"devices": self.devices, "strategy": self.strategy, "precision": self.precision,
               "checkpoint": out.with_suffix(".ckpt") if self.checkpoint_every else None,
               "checkpoint_every": self.checkpoint_every, "resume": self.resume}
        try:
            Engine(**run, device_kind=device)
        except (ValueError, TypeError) as exc:
            message = str(exc)
            for name, flag, *_ in ENGINE_OPTIONS:    # name the option as the user typed it
                if message.startswith(name):
                    message = flag + message[len(name):]
            fail(message)
        return run

    def for_(self, fn: Callable[..., Any], out: Path, verb: str,
             device: str = "cpu") -> dict[str, Any]:
        """:meth:`run`'s keywords that ``fn`` (the API's training call) takes: its named
        parameters, or all of them through ``**engine: Unpack[EngineOptions]``. Options given
        that ``fn`` does not take exit 2 naming them and ``verb``, before any work."""
        run = self.run(out, device)
        params = inspect.signature(fn).parameters
        takes_all = any(p.kind is p.VAR_KEYWORD and "EngineOptions" in str(p.annotation)
                        for p in params.values())
        keep = {k: v for k, v in run.items() if takes_all or k in params}
        missing = [flag for name, flag, *_ in ENGINE_OPTIONS
                   if flag in self.given() and name not in keep]
        if missing:
            fail(f"`iclr25 {verb}` does not take {', '.join(missing)} yet (its training loop "
                 f"is not on the engine)")
        return keep


def _engine_choice(literal: str, flag: str) -> Callable[[str], str]:
    """:func:`choice` of the engine's ``literal`` (``Strategy``, ``Precision``), importing
    the engine (and torch) only when a verb runs, not when the command line is built."""

    def parse(value: str) -> str:
        from iclr25 import _engine

        return choice(getattr(_engine, literal), flag)(value)

    return parse


def at_least_one(param: typer.CallbackParam, value: int | None) -> int | None:
    """An integer option's callback: exit 2 naming the option unless it is unset or >= 1
    (``--threads``, ``--max-episode-steps``), as the options are parsed: before any work."""
    if value is not None and value < 1:
        fail(f"{param.opts[0]} must be >= 1, got {value}")
    return value


def max_episode_steps_option(help: str = "Steps per rollout (default: the env's time "
                             "limit); the training data's longest episode compares returns "
                             "over as many steps.") -> Any:
    """``--max-episode-steps``, the rollouts' horizon of ``lsdt evaluate``, ``gsd evaluate``
    and ``gsd train`` (``iclr25.datasets.control.env_maker``: passed to ``gymnasium.make``);
    ``help``: what the horizon is to the verb (default: the evaluation rollouts')."""
    return typer.Option(None, "--max-episode-steps", callback=at_least_one, help=help)


def threads_verb(fn: Callable[..., T]) -> Callable[..., T]:
    """Give a typer command :data:`THREADS_OPTION` (defined once here): torch's CPU threads
    are pinned to ``--threads`` while the command runs, then restored. Training verbs get it
    from :func:`training_verb`; a verb that only evaluates takes it from here (issue 68 walk
    9: ``lsdt evaluate`` gave -2010.3 at one thread and -2007.7 at torch's default two)."""
    sig = inspect.signature(fn, eval_str=True)
    name, flag, kind, default, help_ = THREADS_OPTION
    params = [*sig.parameters.values(),
              inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind,
                                default=typer.Option(default, flag, help=help_,
                                                     callback=at_least_one))]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        threads = kwargs.pop(name)
        if threads is None:
            pinned = contextlib.nullcontext()
        else:   # torch imported only here, when the verb runs
            from iclr25._threads import torch_threads

            pinned = torch_threads(threads)
        with pinned:
            return fn(*args, **kwargs)

    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


def training_verb(fn: Callable[..., T]) -> Callable[..., T]:
    """Give a typer command the engine options (:data:`ENGINE_OPTIONS`, defined once here)
    and ``--threads`` (:func:`threads_verb`): ``fn`` declares ``engine: EngineArgs`` and
    receives them in it::

        @app.command()
        @training_verb
        def fit(data: Path = ..., out: Path = ..., engine: EngineArgs = None) -> None:
            est.fit(X, **engine.for_(est.fit, out, "toss fit"))
    """
    sig = inspect.signature(fn, eval_str=True)
    params = [p for p in sig.parameters.values() if p.name != "engine"]
    for name, flag, kind, default, help_ in ENGINE_OPTIONS:
        parser = _engine_choice(name.capitalize(), flag) \
            if name in ("strategy", "precision") else None
        option = typer.Option(default, flag, help=help_, parser=parser)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                                        annotation=kind))

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        engine = EngineArgs(**{name: kwargs.pop(name) for name, *_ in ENGINE_OPTIONS})
        return fn(*args, **kwargs, engine=engine)

    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return threads_verb(wrapper)
