"""Themes as data files (the bundled ``themes/*.toml`` plus the user's theme dir), and choosing one."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.app import App, InvalidThemeError
from textual.theme import Theme

from harmony_chat.config import DEFAULT_THEME
from harmony_chat.locations import bundled_theme_dir, user_theme_dir
from harmony_chat.preferences import NotSaved, Preferences

_COLOURS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
)
REQUIRED_VARIABLES = ("channel-final", "channel-analysis", "channel-commentary", "special-token", "user-message")
"""Theme variables the app's CSS uses; a theme that lacks one gets the default theme's."""


@dataclass(slots=True)
class LoadedThemes:
    """Themes that loaded, and one line per file that did not."""

    themes: list[Theme] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def parse_theme(path: Path, fallback: dict[str, str] | None = None) -> Theme:
    """Read one theme file.

    Raises:
        ValueError: with a one-line reason.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"{path.name}: {error}") from error
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{path.name}: needs a name")
    if not isinstance(data.get("primary"), str):
        raise ValueError(f"{path.name}: needs a primary colour")
    variables = {**(fallback or {}), **{str(k): str(v) for k, v in dict(data.get("variables", {})).items()}}
    colours = {key: str(data[key]) if key in data else None for key in _COLOURS}
    try:
        theme = Theme(
            name=name,
            primary=str(data["primary"]),
            secondary=colours["secondary"],
            accent=colours["accent"],
            foreground=colours["foreground"],
            background=colours["background"],
            surface=colours["surface"],
            panel=colours["panel"],
            success=colours["success"],
            warning=colours["warning"],
            error=colours["error"],
            dark=bool(data.get("dark", True)),
            variables=variables,
        )
        theme.to_color_system()
    except Exception as error:  # Textual raises several kinds for bad colours
        raise ValueError(f"{path.name}: {error}") from error
    return theme


def load_themes(extra_dir: Path | None = None) -> LoadedThemes:
    """Load the bundled themes, then the user's (which may override a bundled name)."""
    result = LoadedThemes()
    fallback: dict[str, str] = {}
    for folder in (bundled_theme_dir(), extra_dir or user_theme_dir()):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = parse_theme(path, fallback)
            except ValueError as error:
                result.failures.append(str(error))
                continue
            if theme.name == DEFAULT_THEME:
                fallback = {key: theme.variables[key] for key in REQUIRED_VARIABLES if key in theme.variables}
            result.themes.append(theme)
    return result


def choose_theme(app: App[Any], preferences: Preferences, name: str) -> bool:
    """Switch ``app`` to theme ``name`` and remember the choice (False: no such theme; a notice says so)."""
    try:
        app.theme = name
    except InvalidThemeError:
        app.notify(f"Unknown theme {name!r}; try one of: {', '.join(sorted(app.available_themes))}", severity="error")
        return False
    try:
        preferences.choose_theme(name)
    except NotSaved as error:
        app.notify(f"Theme not saved: {error}", severity="warning")
    return True
