"""The user's choices that the app saves to the config file: theme, reasoning mode, always-approved tools.

The TUI asks :class:`Preferences` to remember a choice; only this module writes them (through
:func:`~harmony_chat.config.save_config_value`, which keeps the file's comments, mode and links).
No UI imports: a failure to save is a :class:`NotSaved` the caller shows.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from harmony_chat.config import ConfigError, Settings, save_config_value

if TYPE_CHECKING:
    from harmony_chat.harmony.visibility import ReasoningMode

__all__ = ["NotSaved", "Preferences"]


class NotSaved(Exception):
    """A choice applies now but could not be written to the config file (the message says why)."""


class Preferences:
    """What the user chose that outlives the session, and the config file it is saved to.

    Args:
        path: the config file (None: nothing is saved; theme and reasoning still change for the session).
        theme: the theme the config file names.
        reasoning: the reasoning mode the config file names.
    """

    def __init__(self, path: Path | None, theme: str, reasoning: ReasoningMode = "hidden") -> None:
        self.path = path
        """The config file choices are saved to (None: they last for the session)."""
        self.theme = theme
        """The theme last chosen (or the config file's)."""
        self.reasoning: ReasoningMode = reasoning
        """The reasoning mode last chosen (or the config file's)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Preferences:
        """The preferences of ``settings``, saved to the file they were read from."""
        return cls(settings.path, settings.ui.theme, settings.ui.reasoning)

    def choose_theme(self, name: str) -> None:
        """Remember ``name`` as the theme (``[ui] theme``).

        Raises:
            NotSaved: the file could not be written (the theme is still chosen for the session).
        """
        self.theme = name
        self._save("ui", "theme", name)

    def choose_reasoning(self, mode: ReasoningMode) -> None:
        """Remember ``mode`` as the reasoning mode (``[ui] reasoning``).

        Raises:
            NotSaved: the file could not be written (the mode is still chosen for the session).
        """
        self.reasoning = mode
        self._save("ui", "reasoning", mode)

    def always_approve(self, key: str) -> None:
        """Add ``key`` to ``[tools] always`` in the config file, keeping the keys already there.

        Raises:
            NotSaved: there is no config file, or it could not be read or written.
        """
        if self.path is None:
            raise NotSaved("there is no config file")
        try:
            existing = _always_in(self.path)
            if key not in existing:
                save_config_value(self.path, "tools", "always", [*existing, key])
        except (OSError, ConfigError) as error:
            raise NotSaved(str(error)) from error

    def _save(self, section: str, key: str, value: str) -> None:
        if self.path is None:
            return
        try:
            save_config_value(self.path, section, key, value)
        except (OSError, ConfigError) as error:
            raise NotSaved(str(error)) from error


def _always_in(path: Path) -> list[str]:
    """The keys ``[tools] always`` holds in the file now (not as the session started: it may have changed).

    Raises:
        ConfigError: when the file is not valid TOML.
        OSError: when it cannot be read.
    """
    if not path.exists():
        return []
    try:
        tools = tomllib.loads(path.read_text(encoding="utf-8")).get("tools")
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {path}: {error}") from error
    value = tools.get("always") if isinstance(tools, dict) else None
    return [str(item) for item in value] if isinstance(value, list) else []
