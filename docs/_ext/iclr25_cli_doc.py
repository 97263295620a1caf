"""The ``iclr25`` command as one click group for sphinx-click, every method's verbs mounted.

The real CLI imports a method's verbs only when they are used; here each method's typer app is
mounted the way ``iclr25 <method>`` mounts it, so its ``--help`` is documented as shown.
"""

import importlib

import click
import typer

from iclr25 import cli

_root = typer.main.get_command(cli.app)
_ctx = click.Context(_root)

command = click.Group(name="iclr25", help=_root.help)
for _name in _root.list_commands(_ctx):
    if _name in cli.METHOD_COMMANDS:
        _holder = typer.Typer()
        _holder.add_typer(importlib.import_module(f"iclr25.{_name}.cli").app, name=_name,
                          help=cli.METHOD_COMMANDS[_name])
        command.add_command(typer.main.get_command(_holder).commands[_name], _name)
    else:
        command.add_command(_root.get_command(_ctx, _name), _name)
