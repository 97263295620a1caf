"""Issue 70: every option and argument of every command line, derived from the commands
themselves (not listed by hand), given hostile text: parsing and the option's own callback
either take it or refuse it as bad usage (exit 2, one line naming the option), never a
traceback."""

from __future__ import annotations

import importlib

import click
import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iclr25.cli import METHOD_COMMANDS
from iclr25.cli import app as root


def _commands():
    """``(name, command)`` of every verb: the root's and each method's."""
    apps = {"": root, **{m: importlib.import_module(f"iclr25.{m}.cli").app
                         for m in METHOD_COMMANDS}}
    for name, app in apps.items():
        cmd = typer.main.get_command(app)
        for verb, sub in (getattr(cmd, "commands", None) or {"": cmd}).items():
            if not getattr(sub, "commands", None):
                yield f"{name} {verb}".strip(), sub


OPTIONS = [(f"{name} {p.name}", cmd, p) for name, cmd in _commands() for p in cmd.params
           if not getattr(p, "hidden", False) and p.name not in ("help",)]

#: hostile command-line text: non-numbers, non-finite and out-of-range numbers, paths that
#: are not there, empty and odd strings
WORDS = st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e400", "x", "", "4294967296",
                         "1.5", "-0", "/nonexistent/h70", "/", "true", "None", "1,2",
                         "a,b,", "\x00"]) | st.text(max_size=6)


def test_every_command_line_is_found():
    assert len({n.split()[0] for n, _, _ in OPTIONS}) >= len(METHOD_COMMANDS)
    assert len(OPTIONS) >= 150


@pytest.mark.parametrize(("label", "cmd", "param"), OPTIONS, ids=[o[0] for o in OPTIONS])
def test_an_option_takes_or_refuses_hostile_text_as_bad_usage(label, cmd, param):
    @settings(max_examples=15, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(word=WORDS)
    def check(word):
        ctx = click.Context(cmd)
        value = [word] if param.multiple or param.nargs == -1 else word
        try:
            param.process_value(ctx, value)
        except (click.BadParameter, typer.BadParameter, click.UsageError,
                typer.BadParameter.__mro__[1]) as exc:
            assert exc.exit_code == 2
        except typer.Exit as exc:
            assert exc.exit_code == 2, label

    check()
