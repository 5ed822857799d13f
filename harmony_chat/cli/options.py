"""The command-line options every entry point shares (the app, ``ask``, ``serve``), as Typer types.

Every option defaults to "not given" (None or False), so the config file's value holds unless the
command line says otherwise; :func:`chat_options` applies them over the config file. An option that
sets a setting (``--threads`` sets ``[model] threads``) is checked by that setting's own rule, so a
bound is written once, in :mod:`harmony_chat.config`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from harmony_chat.chat.options import ChatOptions
from harmony_chat.chat.summary import REASONING_MODES

_Value = TypeVar("_Value")


def setting_rule(section: str, key: str) -> Callable[[_Value | None], _Value | None]:
    """A Typer callback that checks an option's value by the rule of the setting ``[section] key``.

    The config module loads only when the option is given, so ``--help`` stays instant.
    """

    def check(value: _Value | None) -> _Value | None:
        if value is None:
            return None
        from harmony_chat.config import ConfigError, check_setting

        try:
            checked: _Value = check_setting(section, key, value, str(value))
        except ConfigError as error:
            raise typer.BadParameter(str(error)) from None
        return checked

    return check


def _effort(value: str | None) -> str | None:
    if value is None:
        return None
    from harmony_chat.harmony.effort import parse_effort

    try:
        return parse_effort(value)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from error


def _approve(value: str | None) -> str | None:
    if value is not None and value not in ("ask", "all", "none"):
        raise typer.BadParameter(f"--approve takes ask, all or none, not {value!r}")
    return value


def _tool(values: list[str] | None) -> list[str] | None:
    from harmony_chat.harmony.session import BUILTIN_TOOLS

    for value in values or []:
        if value not in BUILTIN_TOOLS:
            raise typer.BadParameter(f"--tool takes {' or '.join(BUILTIN_TOOLS)}, not {value!r}")
    return values


def _engine(value: str | None) -> str | None:
    if value is not None and value not in ("llama-server", "vllm", "sglang"):
        raise typer.BadParameter(f"--engine takes llama-server, vllm or sglang, not {value!r}")
    return value


def _reasoning(value: str | None) -> str | None:
    if value is not None and value not in REASONING_MODES:
        raise typer.BadParameter(f"--reasoning takes {', '.join(REASONING_MODES)}, not {value!r}")
    return value


def reasoning_mode(reasoning: str | None, show_reasoning: bool) -> str | None:
    """``--reasoning`` with ``--show-reasoning`` as its raw alias (None: the config's mode holds).

    Raises:
        typer.BadParameter: when the two ask for different modes.
    """
    if show_reasoning and reasoning not in (None, "raw"):
        raise typer.BadParameter(f"--show-reasoning is --reasoning raw; it does not go with --reasoning {reasoning}")
    return "raw" if show_reasoning else reasoning


ModelOpt = Annotated[Path | None, typer.Option("--model", "-m", help="A gpt-oss GGUF file.")]
HfRepoOpt = Annotated[str | None, typer.Option("--hf-repo", help="Hugging Face repository to download from.")]
HfFileOpt = Annotated[str | None, typer.Option("--hf-file", help="File in --hf-repo to download.")]
ReplayOpt = Annotated[Path | None, typer.Option("--replay", help="Play back a recorded stream (.txt or .json).")]
DemoOpt = Annotated[bool, typer.Option("--demo", help="Use the bundled pocket gpt-oss (the app's default).")]
UrlOpt = Annotated[
    str | None, typer.Option("--url", help="A serving engine running gpt-oss (llama-server, vLLM, SGLang).")
]
EngineOpt = Annotated[
    str | None, typer.Option("--engine", callback=_engine, help="The engine at --url (default: detected).")
]
ApiKeyOpt = Annotated[
    str | None, typer.Option("--api-key", help="The engine's API key (better: HARMONY_CHAT_API_KEY).")
]
ServedModelOpt = Annotated[str | None, typer.Option("--served-model", help="The model name the engine serves.")]
EffortOpt = Annotated[
    str | None, typer.Option("--effort", "-e", callback=_effort, help="Reasoning effort: low, medium or high.")
]
InstructionsOpt = Annotated[str | None, typer.Option("--instructions", help="Developer instructions.")]
CtxOpt = Annotated[
    int | None,
    typer.Option("--ctx", callback=setting_rule("model", "context"), help="Context size in tokens."),
]
GpuOpt = Annotated[
    int | None,
    typer.Option(
        "--gpu-layers", callback=setting_rule("model", "gpu_layers"), help="Layers to offload to the GPU (-1: all)."
    ),
]
ThreadsOpt = Annotated[
    int | None, typer.Option("--threads", callback=setting_rule("model", "threads"), help="CPU threads.")
]
TemperatureOpt = Annotated[
    float | None,
    typer.Option("--temperature", callback=setting_rule("model", "temperature"), help="Sampling temperature."),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option("--max-tokens", callback=setting_rule("model", "max_tokens"), help="Most tokens an answer may take."),
]
SeedOpt = Annotated[
    int | None,
    typer.Option("--seed", callback=setting_rule("model", "seed"), help="Sampling seed."),
]
ConfigOpt = Annotated[Path | None, typer.Option("--config", exists=True, dir_okay=False, help="Use this config file.")]
ApproveOpt = Annotated[
    str | None,
    typer.Option("--approve", callback=_approve, help="Tool calls: ask (each), all (no asking) or none."),
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Run tool calls without asking (= --approve all).")]
MaxStepsOpt = Annotated[
    int | None,
    typer.Option("--max-steps", callback=setting_rule("tools", "max_steps"), help="Generation calls per turn at most."),
]
McpConfigOpt = Annotated[
    list[Path] | None,
    typer.Option("--mcp-config", help='MCP servers from a {"mcpServers": ...} JSON file (repeatable).'),
]
ToolOpt = Annotated[
    list[str] | None,
    typer.Option("--tool", callback=_tool, help="Turn on a built-in tool: python or browser (repeatable)."),
]


ReasoningOpt = Annotated[
    str | None,
    typer.Option(
        "--reasoning",
        callback=_reasoning,
        help="What to show of the reasoning: hidden, summary (the model summarises it, an extra generation) "
        "or raw (the raw chain of thought). Default: [ui] reasoning in the config (hidden).",
    ),
]


def config_option(ctx: typer.Context, config: Path | None) -> Path | None:
    """The command's own ``--config``, else the one given before the command (``harmony-chat --config F ask``)."""
    from harmony_chat.cli.history import RootOptions

    if config is not None:
        return config
    return ctx.obj.config if isinstance(ctx.obj, RootOptions) else None


def chat_options(config: Path | None, **given: object) -> ChatOptions:
    """The config file's settings with the options given on the command line on top.

    ``yes`` is ``--approve all``; flags left False and options left None keep the config's values.

    Raises:
        ConfigError: when the config file is bad (one line naming the line).
    """
    from harmony_chat.config import load_settings

    if given.pop("yes", False):
        given["approve"] = "all"
    return ChatOptions.from_settings(load_settings(config), **given)
