"""The ``harmony-chat`` command line (Typer).

Imports stay light here so ``harmony-chat --help`` is instant: llama.cpp, openai-harmony and
Textual load only inside the command that needs them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from typer.exceptions import TyperException

from harmony_chat import __version__
from harmony_chat.errors import HarmonyChatError
from harmony_chat.history_cli import RootOptions, app_history, history_app

app = typer.Typer(
    name="harmony-chat",
    help="Chat with OpenAI's gpt-oss models on a local GGUF, in the harmony format.",
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    no_args_is_help=False,
)


def _effort(value: str | None) -> str | None:
    if value is None:
        return None
    from harmony_chat.harmony.effort import parse_effort

    try:
        return parse_effort(value)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from error


class NotATerminal(HarmonyChatError):
    """The chat app was started without a terminal to draw on or read keys from."""

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


def _version(value: bool) -> None:
    if value:
        print(f"harmony-chat {__version__}")
        raise typer.Exit()


ModelOpt = Annotated[Path | None, typer.Option("--model", "-m", help="A gpt-oss GGUF file.")]
HfRepoOpt = Annotated[str | None, typer.Option("--hf-repo", help="Hugging Face repository to download from.")]
HfFileOpt = Annotated[str | None, typer.Option("--hf-file", help="File in --hf-repo to download.")]
ReplayOpt = Annotated[Path | None, typer.Option("--replay", help="Play back a recorded stream (.txt or .json).")]
EffortOpt = Annotated[
    str | None, typer.Option("--effort", "-e", callback=_effort, help="Reasoning effort: low, medium or high.")
]
CtxOpt = Annotated[int, typer.Option("--ctx", min=256, help="Context size in tokens.")]
GpuOpt = Annotated[int, typer.Option("--gpu-layers", help="Layers to offload to the GPU (-1: all).")]
REPLAY_DELAY_S = 0.02
"""Seconds between replayed tokens in the chat app, so a replay looks like a live model."""


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    model: ModelOpt = None,
    hf_repo: HfRepoOpt = None,
    hf_file: HfFileOpt = None,
    replay: ReplayOpt = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Chat with the bundled pocket gpt-oss (the default with no model).")
    ] = False,
    replay_demo: Annotated[bool, typer.Option("--replay-demo", help="Replay recorded gpt-oss conversations.")] = False,
    effort: EffortOpt = None,
    instructions: Annotated[str | None, typer.Option("--instructions", help="Developer instructions.")] = None,
    ctx_size: Annotated[int | None, typer.Option("--ctx", min=256, help="Context size in tokens.")] = None,
    gpu_layers: Annotated[int | None, typer.Option("--gpu-layers", help="Layers to offload (-1: all).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Use this config file.")] = None,
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
    """Chat with gpt-oss on a local GGUF. With no command, open the chat app."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = RootOptions(config, history_db)  # the history commands honour --config and --history-db
        return
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.config import load_settings

    settings = load_settings(config)
    options = ChatOptions.from_settings(
        settings,
        model=model,
        hf_repo=hf_repo,
        hf_file=hf_file,
        replay=replay,
        demo=demo or None,
        replay_demo=replay_demo or None,
        effort=effort,
        instructions=instructions,
        context=ctx_size,
        gpu_layers=gpu_layers,
        replay_delay=REPLAY_DELAY_S,
    )
    history, history_off = app_history(history_db, settings, no_history, resume is not None or continue_latest)
    chosen: int | str | None = None
    if resume is not None and resume != "pick":
        if not resume.isdigit():
            raise typer.BadParameter(f"--resume takes a conversation id, not {resume!r}")
        chosen = int(resume)
    elif resume == "pick" or continue_latest:
        if history is None:
            raise typer.BadParameter("--resume and --continue need the history (drop --no-history)")
        chosen = history.latest() if continue_latest else "pick"
        if continue_latest and chosen is None:
            raise typer.BadParameter("there is no conversation to continue yet")
    if isinstance(chosen, int) and history is not None:
        history.load(chosen)
    _require_terminal()
    if history is not None:
        history.recover_interrupted()
    from harmony_chat.tui.app import run_tui

    run_tui(options, settings, history, chosen, history_off)


app.add_typer(history_app, name="history")


@app.command()
def models() -> None:
    """List the gpt-oss GGUF files found on this machine."""
    from harmony_chat.backends.sources import DOWNLOAD_COMMAND
    from harmony_chat.models import find_models, search_dirs

    found = find_models()
    for model in found:
        print(f"{model.path}\t{model.size_gb:.1f} GB\t{model.source}")
    if not found:
        folders = ", ".join(str(folder) for _, folder in search_dirs())
        print(f"No gpt-oss GGUF files found (searched {folders}).", file=sys.stderr)
        print(f"Download gpt-oss-20b (about 12 GB) with:\n  {DOWNLOAD_COMMAND}", file=sys.stderr)


@app.command()
def ask(
    prompt: Annotated[str | None, typer.Argument(help="The message; - reads it from stdin.")] = None,
    model: ModelOpt = None,
    hf_repo: HfRepoOpt = None,
    hf_file: HfFileOpt = None,
    replay: ReplayOpt = None,
    demo: Annotated[bool, typer.Option("--demo", help="Use the bundled pocket gpt-oss.")] = False,
    record: Annotated[Path | None, typer.Option("--record", help="Write the generated tokens here.")] = None,
    effort: EffortOpt = None,
    instructions: Annotated[str | None, typer.Option("--instructions", help="Developer instructions.")] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Most tokens to generate.")] = 4096,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, help="Sampling temperature.")] = 1.0,
    seed: Annotated[int | None, typer.Option("--seed", help="Sampling seed.")] = None,
    ctx: CtxOpt = 16384,
    gpu_layers: GpuOpt = 0,
    conversation: Annotated[
        Path | None, typer.Option("--conversation", help="A harmony Conversation JSON to continue.")
    ] = None,
    save_conversation: Annotated[
        Path | None, typer.Option("--save-conversation", help="Save the conversation (JSON) after the turn.")
    ] = None,
    show_prompt: Annotated[bool, typer.Option("--show-prompt", help="Print the rendered prompt on stderr.")] = False,
    show_reasoning: Annotated[
        bool, typer.Option("--show-reasoning", help="Print the raw chain of thought on stderr, labelled.")
    ] = False,
    raw: Annotated[
        bool, typer.Option("--raw", help="Print every generated token, special tokens spelled out.")
    ] = False,
    json_lines: Annotated[
        bool, typer.Option("--json", help="Print JSON Lines events; the last line has stats.")
    ] = False,
) -> None:
    """Ask one question; the final answer streams to stdout."""
    from harmony_chat.ask import AskRequest, run_ask

    request = AskRequest(
        prompt=prompt,
        model=model,
        hf_repo=hf_repo,
        hf_file=hf_file,
        replay=replay,
        demo=demo,
        record=record,
        effort=effort,  # type: ignore[arg-type]
        instructions=instructions,
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
        ctx=ctx,
        gpu_layers=gpu_layers,
        conversation=conversation,
        save_conversation=save_conversation,
        show_prompt=show_prompt,
        show_reasoning=show_reasoning,
        raw=raw,
        json=json_lines,
    )
    raise typer.Exit(run_ask(request))


@app.command()
def bench(
    model: Annotated[Path | None, typer.Option("--model", "-m", help="A gpt-oss GGUF file.")] = None,
    tui: Annotated[bool, typer.Option("--tui", help="Benchmark the chat app under load (no model needed).")] = False,
    tui_tokens: Annotated[int, typer.Option("--tui-tokens", min=100, help="Answer length for --tui.")] = 20000,
    tokens: Annotated[int, typer.Option("--tokens", min=8, help="Tokens to generate per run.")] = 256,
    runs: Annotated[int, typer.Option("--runs", min=1, help="Runs of each loop (medians are reported).")] = 3,
    ctx: CtxOpt = 4096,
    gpu_layers: GpuOpt = 0,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="CPU threads.")] = None,
    chat_tokens: Annotated[int, typer.Option("--chat-tokens", min=1, help="Tokens per turn of the chat.")] = 64,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Measure the model and every layer harmony-chat adds on top of it (--tui: the chat app)."""
    if model is None and not tui:
        raise typer.BadParameter("give --model PATH, --tui, or both")
    if model is not None:
        from harmony_chat.bench.runner import BenchSettings, print_report, run_bench

        report = run_bench(BenchSettings(model, tokens, runs, ctx, gpu_layers, threads, chat_tokens))
        print_report(report, sys.stdout, json_output)
    if tui:
        from harmony_chat.tui.bench import print_tui_report, run_tui_bench

        paced = min(4000, tui_tokens)
        print_tui_report(run_tui_bench(tui_tokens, paced_tokens=paced), sys.stdout, json_output)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; every expected failure becomes one ``error:`` line."""
    args = list(sys.argv[1:] if argv is None else argv)
    for index, arg in enumerate(args):  # a bare --resume (no id) opens the history to choose
        if arg == "--resume" and (index + 1 == len(args) or args[index + 1].startswith("-")):
            args[index] = "--resume=pick"
    try:
        result = app(args=args, standalone_mode=False, prog_name="harmony-chat")
    except TyperException as error:
        print(f"error: {error.format_message()}", file=sys.stderr)
        return error.exit_code
    except HarmonyChatError as error:
        print(f"error: {error}", file=sys.stderr)
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
