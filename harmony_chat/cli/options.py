"""The command line's chat options: one table of flags over the settings, given to each command by a decorator.

Every option with a default has its one home in :class:`harmony_chat.config.Settings`: the field
holds the default and the bound, its docstring the help. A flag that overrides a setting is one
row of :data:`FLAGS` naming the setting's path (``Flag("--ctx", "model.context")``): its type, the
values it allows (a Literal's) and its help are the setting's, and a value given is checked by
the setting's own rule, in the same words as a bad value in the config file. They come from
:mod:`harmony_chat.cli.settings_digest`, generated from the settings, so ``--help`` loads no
pydantic. The ``[sampling]`` rows are generated (:data:`SAMPLING_FLAGS`): each of its keys is a
flag. The other rows are the flags that are no setting: another model source (``--demo``,
``--replay``), an alias (``--yes`` is ``--approve all``), more MCP files, the config file.

:func:`chat_flags` adds a command's rows to its signature and hands the command one
:class:`Overrides`; :meth:`Overrides.chat_options` reads the config file and puts them on top.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from harmony_chat.cli.settings_digest import SETTINGS
from harmony_chat.harmony.effort import parse_effort

if TYPE_CHECKING:
    from typer.models import OptionInfo

    from harmony_chat.chat.options import ChatOptions

_Result = TypeVar("_Result")

APP, ASK, SERVE = "app", "ask", "serve"
EVERY_CHAT = frozenset({APP, ASK, SERVE})
"""The commands that run a chat: the app (the root command), ``ask`` and ``serve``."""
WITH_TOOLS = frozenset({APP, ASK})
"""The commands that run tools (``serve`` leaves tool calls to its clients)."""
_KINDS: dict[str, Any] = {"int": int, "float": float, "str": str, "bool": bool, "list": list[str]}


@dataclass(frozen=True, slots=True)
class Flag:
    """One command-line option: the setting it overrides, or what it does when it is no setting."""

    name: str
    """The long option, ``--ctx``."""
    setting: str | None = None
    """The setting's dotted path (``model.context``): its type, allowed values, help and rule are the flag's."""
    commands: frozenset[str] = EVERY_CHAT
    """The commands that take it."""
    short: str | None = None
    help: str = ""
    """The help of a flag that is no setting (a setting's is its docstring)."""
    kind: Any = bool
    """The value of a flag that is no setting: ``bool`` (a switch), ``Path`` or ``list[Path]`` (repeatable)."""
    source: bool = False
    """Giving it chooses the model, in place of the config file's (``--model``, ``--url``, ``--demo``...)."""
    adds: bool = False
    """Its values are added to the setting's list (``--tool``), not put in its place."""
    sets: tuple[str, str] | None = None
    """An alias: giving it sets this setting to this value (``--yes`` sets ``tools.approve`` to ``all``)."""
    parse: Callable[[str], object] | None = None
    """Reads the value as typed before the setting's rule checks it (``--effort HIGH`` is ``high``)."""
    metavar: str | None = None
    must_exist: bool = False
    """A file that must exist (``--config``)."""

    @property
    def dest(self) -> str:
        """The flag's parameter name: ``--replay-demo`` is ``replay_demo``."""
        return self.name.removeprefix("--").replace("-", "_")


SAMPLING_FLAGS: tuple[Flag, ...] = tuple(
    Flag("--" + path.removeprefix("sampling.").replace("_", "-"), path)
    for path in SETTINGS
    if path.startswith("sampling.")
)
"""A flag for every ``[sampling]`` setting, generated (``--top-k`` sets ``sampling.top_k``): a new key is a new flag."""

FLAGS: tuple[Flag, ...] = (
    Flag("--model", "model.path", short="-m", source=True, metavar="<path>"),
    Flag("--hf-repo", "model.hf_repo", source=True),
    Flag("--hf-file", "model.hf_file"),
    Flag("--replay", help="Play back a recorded stream (.txt or .json).", kind=Path, source=True),
    Flag("--demo", help="Use the bundled pocket gpt-oss (the app's default).", source=True),
    Flag("--replay-demo", help="Replay recorded gpt-oss conversations.", source=True, commands=frozenset({APP})),
    Flag("--url", "model.url", source=True),
    Flag("--engine", "model.engine"),
    Flag("--api-key", "model.api_key", commands=WITH_TOOLS),  # serve's --api-key is the key its clients send
    Flag("--served-model", "model.served_model"),
    Flag("--effort", "chat.effort", short="-e", parse=parse_effort),
    Flag("--instructions", "chat.instructions", commands=WITH_TOOLS),
    Flag("--ctx", "model.context"),
    Flag("--gpu-layers", "model.gpu_layers"),
    Flag("--threads", "model.threads"),
    *SAMPLING_FLAGS,
    Flag("--approve", "tools.approve", commands=WITH_TOOLS),
    Flag("--yes", short="-y", sets=("tools.approve", "all"), commands=WITH_TOOLS, help="Run tool calls without asking"),
    Flag("--max-steps", "tools.max_steps", commands=WITH_TOOLS),
    Flag(
        "--mcp-config",
        help='MCP servers from a {"mcpServers": ...} JSON file (repeatable).',
        kind=list[Path],
        commands=WITH_TOOLS,
        metavar="FILE",
    ),
    Flag("--tool", "tools.builtin", adds=True, commands=WITH_TOOLS),
    Flag("--reasoning", "ui.reasoning", commands=frozenset({ASK})),
    Flag(
        "--show-reasoning",
        sets=("ui.reasoning", "raw"),
        commands=frozenset({ASK}),
        help="Print the raw chain of thought on stderr",
    ),
    Flag("--config", help="Use this config file.", kind=Path, must_exist=True),
)
"""Every shared flag, in the order ``--help`` lists them."""


def setting_help(path: str) -> str:
    """The help of the setting at ``path``: its docstring."""
    return SETTINGS[path][2]


def setting_rule(path: str, parse: Callable[[str], object] | None = None) -> Callable[..., Any]:
    """A Typer callback that checks an option's value by the rule of the setting at ``path`` (``"model.threads"``).

    A value the setting's Literal does not allow is named with the allowed ones (``--engine takes
    llama-server, vllm, sglang, not 'x'``); any other rule is the setting's own (``1000000 must be
    at most 512``). The config module loads only when the option is given, so ``--help`` stays instant.
    """
    choices = SETTINGS[path][1]

    def check(param: typer.CallbackParam, value: Any) -> Any:
        if value is None:
            return None
        name = max(param.opts, key=len)
        items = list(value) if isinstance(value, list | tuple) else [value]
        try:
            items = [parse(item) for item in items] if parse else items
        except ValueError as error:
            raise typer.BadParameter(str(error)) from None
        for item in items:
            if choices and item not in choices:
                raise typer.BadParameter(f"{name} takes {', '.join(choices)}, not {item!r}")
        from harmony_chat.config import ConfigError, check_setting

        try:
            return check_setting(path, items if isinstance(value, list | tuple) else items[0], str(value))
        except ConfigError as error:
            raise typer.BadParameter(str(error)) from None

    return check


def setting_option(
    path: str, *names: str, parse: Callable[[str], object] | None = None, metavar: str | None = None
) -> OptionInfo:
    """A Typer option that sets the setting at ``path``: its help, allowed values and rule are the setting's."""
    kind, choices, _ = SETTINGS[path]
    option: OptionInfo = typer.Option(
        *names,
        callback=setting_rule(path, parse),
        help=setting_help(path) + (" Repeatable." if kind == "list" else ""),
        metavar=metavar or (f"[{'|'.join(choices)}]" if choices else None),
    )
    return option


def _parameter(flag: Flag) -> inspect.Parameter:
    """The command parameter a flag becomes (Typer reads it from the command's signature)."""
    names = [flag.name, *([flag.short] if flag.short else [])]
    keyword = inspect.Parameter.KEYWORD_ONLY
    if flag.setting is not None:  # not given: None, the settings' value holds
        kind = _KINDS[SETTINGS[flag.setting][0]]
        if kind is bool:
            names[0] = f"{flag.name}/--no-{flag.name.removeprefix('--')}"
        option = setting_option(flag.setting, *names, parse=flag.parse, metavar=flag.metavar)
        return inspect.Parameter(flag.dest, keyword, default=None, annotation=Annotated[kind | None, option])
    help_text = f"{flag.help} (= {_owner(flag.sets[0]).name} {flag.sets[1]})." if flag.sets else flag.help
    option = typer.Option(
        *names, help=help_text, metavar=flag.metavar, exists=flag.must_exist, dir_okay=not flag.must_exist
    )
    if flag.kind is bool:
        return inspect.Parameter(flag.dest, keyword, default=False, annotation=Annotated[bool, option])
    return inspect.Parameter(flag.dest, keyword, default=None, annotation=Annotated[flag.kind | None, option])


def _owner(path: str) -> Flag:
    """The flag that sets the setting at ``path``."""
    return next(flag for flag in FLAGS if flag.setting == path)


def chat_flags(command: str) -> Callable[[Callable[..., _Result]], Callable[..., _Result]]:
    """Give a Typer command the shared flags ``command`` takes, in place of its ``overrides`` parameter.

    The command declares its own parameters and one ``overrides: Overrides``; the flags appear in
    its ``--help`` where ``overrides`` stands, and the command receives what they said as one
    :class:`Overrides`.
    """
    flags = [flag for flag in FLAGS if command in flag.commands]

    def decorate(function: Callable[..., _Result]) -> Callable[..., _Result]:
        signature = inspect.signature(function, eval_str=True)
        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            if parameter.name == "overrides":
                parameters += [_parameter(flag) for flag in flags]
            else:
                parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
        names = [parameter.name for parameter in parameters]
        clashes = sorted({name for name in names if names.count(name) > 1})
        if "overrides" not in signature.parameters or clashes:
            raise TypeError(f"{function.__name__} needs an `overrides` parameter and none named as a flag: {clashes}")

        @functools.wraps(function)
        def run(**values: Any) -> _Result:
            given = {flag: values.pop(flag.dest) for flag in flags}
            return function(**values, overrides=Overrides.from_flags(given))

        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
        return run

    return decorate


@dataclass(slots=True)
class Overrides:
    """What the command line said about the chat: settings to override, and the flags that are no setting."""

    settings: dict[str, object] = field(default_factory=dict)
    """Setting path to value, each checked by its setting's rule (``{"model.context": 4096}``)."""
    added: dict[str, list[str]] = field(default_factory=dict)
    """Setting path to values to add to the setting's list (``--tool``)."""
    new_source: bool = False
    """A model source was given: the config file's is replaced."""
    replay: Path | None = None
    demo: bool = False
    replay_demo: bool = False
    mcp_config: list[Path] = field(default_factory=list)
    config: Path | None = None

    @classmethod
    def from_flags(cls, given: Mapping[Flag, object]) -> Overrides:
        """Collect the flags' values; a flag left out (None, False, nothing repeated) changes nothing.

        Raises:
            typer.BadParameter: an alias given with its flag at another value (``--show-reasoning``
                with ``--reasoning summary``).
        """
        overrides = cls()
        aliases: list[tuple[str, tuple[str, str]]] = []
        for flag, value in given.items():
            if isinstance(value, list | tuple):
                value = list(value)
            if value is None or value is False or value == []:
                continue
            overrides.new_source |= flag.source
            if flag.sets is not None:
                aliases.append((flag.name, flag.sets))
            elif flag.setting is None:
                setattr(overrides, flag.dest, value)
            elif flag.adds and isinstance(value, list):
                overrides.added[flag.setting] = [str(item) for item in value]
            else:
                overrides.settings[flag.setting] = value
        for alias, (path, value) in aliases:
            other = overrides.settings.setdefault(path, value)
            if other != value:
                owner = _owner(path).name
                raise typer.BadParameter(f"{alias} is {owner} {value}; it does not go with {owner} {other}")
        return overrides

    def given(self, path: str) -> bool:
        """Whether the command line set the setting at ``path``."""
        return path in self.settings or path in self.added

    def chat_options(self, invocation: typer.Context | None = None) -> ChatOptions:
        """The config file's settings (and the environment's) with these overrides on top.

        The config file is the command's ``--config``, else the one given before the command
        (``harmony-chat --config F ask``), else the default one.

        Raises:
            ConfigError: when the config file is bad (one line naming the line).
        """
        from harmony_chat.chat.options import ChatOptions
        from harmony_chat.cli.history import RootOptions
        from harmony_chat.config import get_setting, load_settings, set_setting

        root = invocation.obj if invocation is not None and isinstance(invocation.obj, RootOptions) else None
        options = ChatOptions(load_settings(self.config or (root.config if root else None)))
        if self.new_source:
            options.choose_model()
        for path, value in self.settings.items():
            set_setting(options.settings, path, value)
        for path, values in self.added.items():
            set_setting(options.settings, path, sorted(set(get_setting(options.settings, path)) | set(values)))
        options.replay, options.demo, options.replay_demo = self.replay, self.demo, self.replay_demo
        options.mcp_files = list(self.mcp_config)
        return options
