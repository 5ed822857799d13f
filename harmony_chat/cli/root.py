"""The ``harmony-chat`` root command (the chat app), ``models``, and the entry point (Typer).

Imports stay light here so ``harmony-chat --help`` is instant: llama.cpp, openai-harmony and
Textual load only inside the command that needs them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException

from harmony_chat import __version__, collector
from harmony_chat.cli.history import MAX_CONVERSATION_ID, RootOptions, app_history, history_app
from harmony_chat.cli.options import APP, Overrides, chat_flags
from harmony_chat.errors import HarmonyChatError
from harmony_chat.text_safety import visible

app = typer.Typer(
    name="harmony-chat",
    help="Chat with OpenAI's gpt-oss models on a local GGUF, in the harmony format.",
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    no_args_is_help=False,
)


class NotATerminal(HarmonyChatError):
    """The chat app was started without a terminal to draw on or read keys from."""

    exit_code = 2


class MisplacedOption(HarmonyChatError):
    """An option given before a command that the command would not use (a usage error)."""

    exit_code = 2


def _require_terminal() -> None:
    """Refuse to start the chat app when stdin or stdout is not a terminal (it would spin, unseen).

    Raises:
        NotATerminal: naming the stream, and pointing to ``harmony-chat ask``.
    """
    missing = [name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)) if not _is_terminal(stream)]
    if missing:
        raise NotATerminal(
            f"the chat app needs a terminal, but {' and '.join(missing)} "
            f"{'is not one' if len(missing) == 1 else 'are not'}; for scripts and pipes use "
            '`harmony-chat ask` (for example: harmony-chat ask "What is 2 + 2?" --demo)'
        )


def _is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


READS_NO_CONFIG = frozenset({"bench", "models"})
"""Commands that read no config file, so a ``--config`` before them would change nothing."""


def _check_root_options(ctx: typer.Context, command: str) -> None:
    """Refuse an option given before ``command`` that ``command`` would not use.

    ``--config`` applies to every command that reads the config file, ``--history-db`` to the
    history commands; the app's other options (``--model``, ``--effort``...) belong after the
    command (``harmony-chat ask --model F``), where the command has them.

    Raises:
        MisplacedOption: one line naming the option and where it goes.
    """
    used = {"config"} if command not in READS_NO_CONFIG else set()
    if command == "history":
        used.add("history_db")
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if param.name in used or source is None or source.name != "COMMANDLINE":
            continue
        flag = max(param.opts, key=len)
        if param.name == "config":
            raise MisplacedOption(f"--config does not apply to `harmony-chat {command}`: it reads no config file")
        sub = ctx.command.get_command(ctx, command) if isinstance(ctx.command, TyperGroup) else None
        if sub is not None and any(flag in other.opts for other in sub.params):
            raise MisplacedOption(f"{flag} goes after the command: harmony-chat {command} {flag} ...")
        raise MisplacedOption(f"{flag} does not apply to `harmony-chat {command}`")


def _version(value: bool) -> None:
    if value:
        print(f"harmony-chat {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
@chat_flags(APP)
def root(
    invocation: typer.Context,
    overrides: Overrides,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="Continue conversation ID (with no ID: choose one)."),
    ] = None,
    continue_latest: Annotated[bool, typer.Option("--continue", help="Continue the latest conversation.")] = False,
    history_db: Annotated[Path | None, typer.Option("--history-db", help="Keep the history in this file.")] = None,
    no_history: Annotated[bool, typer.Option("--no-history", help="Store nothing.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Chat with gpt-oss (a local GGUF, a serving engine, or the pocket model). With no command, open the app."""
    if invocation.invoked_subcommand is not None:
        _check_root_options(invocation, invocation.invoked_subcommand)
        collector.resume()  # only the app's startup runs without the collector (``collector.py``)
        # --config for every command, --history-db for history's
        invocation.obj = RootOptions(overrides.config, history_db)
        return
    from harmony_chat.chat.model_source import DemoReplay

    options = overrides.chat_options()
    if isinstance(options.valid_source, DemoReplay):  # clashing options: the app says so when it loads
        options.replay_delay = 0.02  # replays look like a live model in the app
    options.demo_tools = True  # the pocket model shows the tool loop: its weather tool and python
    wanted = resume is not None or continue_latest
    chosen: int | str | None = None
    if resume is not None and resume != "pick":
        if not (resume.isascii() and resume.isdigit() and int(resume) <= MAX_CONVERSATION_ID):
            raise typer.BadParameter(f"--resume takes a conversation id, not {resume!r}")
        chosen = int(resume)
    _require_terminal()  # before the history is opened: a run that cannot start creates nothing
    history, history_off = app_history(history_db, options.settings, no_history, wanted)
    if chosen is None and (resume == "pick" or continue_latest):
        if history is None:
            raise typer.BadParameter("--resume and --continue need the history (drop --no-history)")
        chosen = history.latest() if continue_latest else "pick"
        if continue_latest and chosen is None:
            raise typer.BadParameter("there is no conversation to continue yet")
    if isinstance(chosen, int) and history is not None:
        history.load(chosen)
    if history is not None:
        history.recover_interrupted()
    from harmony_chat.tui.app import run_tui

    run_tui(options, history, chosen, history_off)


app.add_typer(history_app, name="history")


@app.command()
def models() -> None:
    """List the gpt-oss GGUF files found on this machine."""
    from harmony_chat.backends.sources import DOWNLOAD_COMMAND
    from harmony_chat.gguf.discovery import find_models, search_dirs

    found = find_models()
    for model in found:
        print(visible(f"{model.path}\t{model.size_text}\t{model.source}"))
    if not found:
        folders = ", ".join(str(folder) for _, folder in search_dirs())
        print(visible(f"No gpt-oss GGUF files found (searched {folders})."), file=sys.stderr)
        print(f"Download gpt-oss-20b (about 12 GB) with:\n  {DOWNLOAD_COMMAND}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; every expected failure becomes one ``error:`` line.

    An error can quote an engine, a model or a file: its control characters show as symbols.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    for index, arg in enumerate(args):  # a bare --resume (no id) opens the history to choose
        if arg == "--resume" and (index + 1 == len(args) or args[index + 1].startswith("-")):
            args[index] = "--resume=pick"
    try:
        result = app(args=args, standalone_mode=False, prog_name="harmony-chat")
    except TyperException as error:
        print(visible(f"error: {error.format_message()}"), file=sys.stderr)
        return error.exit_code
    except HarmonyChatError as error:
        print(visible(f"error: {error}"), file=sys.stderr)
        return error.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("interrupted", file=sys.stderr)
        return 130
    except typer.Exit as done:
        return done.exit_code
    except BrokenPipeError:
        return 0
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
