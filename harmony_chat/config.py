"""The user's config file (TOML): model, chat defaults, theme and keymap. No UI imports.

It lives at ``config.toml`` in the user config dir (``HARMONY_CHAT_CONFIG_FILE`` points
elsewhere). Command-line options override it. A bad file gives one error naming the line.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from harmony_chat.errors import HarmonyChatError
from harmony_chat.locations import config_dir

EFFORT_VALUES = ("low", "medium", "high")


class ConfigError(HarmonyChatError):
    """The config file cannot be read or holds a bad value."""


@dataclass(slots=True)
class ModelSettings:
    """``[model]``: which model and how to run it."""

    path: str | None = None
    """A gpt-oss GGUF file."""
    hf_repo: str | None = None
    """A Hugging Face repository to download from (with ``hf_file``)."""
    hf_file: str | None = None
    context: int = 16384
    """Context size in tokens."""
    gpu_layers: int = 0
    """Layers to offload to the GPU (-1: all)."""
    threads: int | None = None
    temperature: float = 1.0
    max_tokens: int = 4096
    seed: int | None = None


@dataclass(slots=True)
class ChatSettings:
    """``[chat]``: how conversations start."""

    effort: str = "medium"
    """Reasoning effort of a new chat: low, medium or high."""
    instructions: str | None = None
    """Developer instructions for every chat."""


@dataclass(slots=True)
class UiSettings:
    """``[ui]``: how the app looks."""

    theme: str = "harmony-dark"
    debug: bool = False
    """Start in debug mode (analysis and token inspector visible)."""
    cursor_blink: bool = True
    """Blink the prompt's cursor."""


@dataclass(slots=True)
class HistorySettings:
    """``[history]``: where conversations are kept and what is kept."""

    path: str | None = None
    """The SQLite file (default: ``history.sqlite3`` in the user data dir)."""
    store_analysis: bool = False
    """Also store the raw chain of thought, labelled, for debugging (off by default)."""


@dataclass(slots=True)
class Settings:
    """Everything in the config file."""

    model: ModelSettings = field(default_factory=ModelSettings)
    chat: ChatSettings = field(default_factory=ChatSettings)
    ui: UiSettings = field(default_factory=UiSettings)
    history: HistorySettings = field(default_factory=HistorySettings)
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id -> keys, e.g. ``cycle-effort = "ctrl+e"``."""
    path: Path | None = None
    """The file these settings came from."""


_SECTIONS: dict[str, type] = {
    "model": ModelSettings,
    "chat": ChatSettings,
    "ui": UiSettings,
    "history": HistorySettings,
}


def config_file() -> Path:
    """Return the config file's path."""
    override = os.environ.get("HARMONY_CHAT_CONFIG_FILE")
    return Path(override) if override else config_dir() / "config.toml"


def _line_of(text: str, section: str, key: str | None) -> int:
    """Find the line (1-based) where ``section``/``key`` is written, for error messages."""
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if header := re.match(r"^\[([^\]]+)\]", stripped):
            current = header.group(1).strip()
            if key is None and current == section:
                return number
        elif key is not None and current == section and re.match(rf"^\"?{re.escape(key)}\"?\s*=", stripped):
            return number
    return 0


def _check(value: Any, expected: type, optional: bool) -> bool:
    if value is None:
        return optional
    if expected is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


def _section(text: str, path: Path, name: str, values: Any, kind: type) -> Any:
    where = f"{path}, line {_line_of(text, name, None)}"
    if not isinstance(values, dict):
        raise ConfigError(f"config file {where}: [{name}] must be a table")
    known = {f.name: f for f in fields(kind)}
    result = kind()
    for key, value in values.items():
        line = _line_of(text, name, key)
        if key not in known:
            raise ConfigError(f"config file {path}, line {line}: unknown setting {key!r} in [{name}]")
        hint = str(known[key].type)
        expected = {"int": int, "float": float, "bool": bool}.get(hint.split(" |")[0], str)
        if not _check(value, expected, "None" in hint):
            raise ConfigError(f"config file {path}, line {line}: {name}.{key} must be {hint.replace(' | None', '')}")
        setattr(result, key, value)
    return result


def parse_settings(text: str, path: Path) -> Settings:
    """Parse and validate config text.

    Raises:
        ConfigError: naming the file and line of the first problem.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {path}: {error}") from error
    settings = Settings(path=path)
    for name, values in data.items():
        if name == "keymap":
            if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
                line = _line_of(text, "keymap", None)
                raise ConfigError(f"config file {path}, line {line}: [keymap] maps binding ids to key strings")
            settings.keymap = dict(values)
        elif name in _SECTIONS:
            setattr(settings, name, _section(text, path, name, values, _SECTIONS[name]))
        else:
            raise ConfigError(f"config file {path}, line {_line_of(text, name, None)}: unknown section [{name}]")
    if settings.chat.effort not in EFFORT_VALUES:
        line = _line_of(text, "chat", "effort")
        raise ConfigError(f"config file {path}, line {line}: chat.effort must be low, medium or high")
    return settings


def load_settings(path: Path | None = None) -> Settings:
    """Read the config file (a missing file means defaults).

    Raises:
        ConfigError: when the file is unreadable or invalid.
    """
    path = path or config_file()
    if not path.exists():
        return Settings(path=path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config file {path}: {error}") from error
    return parse_settings(text, path)


def save_ui_value(path: Path, key: str, value: str) -> None:
    """Set ``[ui] key = "value"`` in the config file, keeping everything else as written."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    line = f'{key} = "{value}"'
    lines = text.splitlines()
    number = _line_of(text, "ui", key)
    if number:
        lines[number - 1] = line
    elif section := _line_of(text, "ui", None):
        lines.insert(section, line)
    else:
        lines += ["", "[ui]", line] if lines else ["[ui]", line]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
