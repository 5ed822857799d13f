"""Parse command-line flags through the real flag table, as a command would receive them."""

from __future__ import annotations

import typer

from harmony_chat.chat.options import ChatOptions
from harmony_chat.cli.options import ASK, Overrides, chat_flags


def parse_flags(*args: str, command: str = ASK) -> Overrides:
    """The :class:`Overrides` a command decorated with ``chat_flags(command)`` receives for ``args``."""
    received: list[Overrides] = []
    app = typer.Typer()

    @app.command()
    @chat_flags(command)
    def run(*, overrides: Overrides) -> None:
        received.append(overrides)

    typer.main.get_command(app).main(list(args), standalone_mode=False)
    (overrides,) = received
    return overrides


def options_from(*args: str, command: str = ASK) -> ChatOptions:
    """The chat options a command runs with for ``args`` (the config file named by ``--config``, else none)."""
    return parse_flags(*args, command=command).chat_options()
