"""Slash commands typed in the prompt (``/effort high``), parsed without touching the UI."""

from __future__ import annotations

from dataclasses import dataclass

from harmony_chat.harmony.effort import EFFORTS
from harmony_chat.harmony.visibility import REASONING_MODES

COMMANDS = ("effort", "regen", "edit", "copy", "reasoning", "debug", "theme", "new", "history", "tools", "help")


class SlashError(ValueError):
    """The command is unknown or its arguments are wrong (the message says which)."""


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A parsed command: its name and arguments."""

    name: str
    args: tuple[str, ...] = ()


def parse_slash(text: str) -> SlashCommand | None:
    """Return the command in ``text``, None if it is an ordinary message.

    Raises:
        SlashError: for an unknown command or bad arguments.
    """
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    words = stripped[1:].split()
    if not words:
        raise SlashError("type a command after /; try /help")
    name, args = words[0].lower(), words[1:]
    if name not in COMMANDS:
        raise SlashError(f"unknown command /{name}; try /help")
    if name == "effort" and (len(args) != 1 or args[0].lower() not in EFFORTS):
        raise SlashError("usage: /effort low|medium|high")
    if name == "regen" and (len(args) > 1 or (args and args[0].lower() not in EFFORTS)):
        raise SlashError("usage: /regen [low|medium|high]")
    if name == "reasoning" and (len(args) != 1 or args[0].lower() not in REASONING_MODES):
        raise SlashError("usage: /reasoning hidden|summary|raw")
    if name == "theme" and len(args) != 1:
        raise SlashError("usage: /theme NAME")
    if name == "copy" and args and (args[0] != "code" or len(args) > 2 or (len(args) == 2 and not args[1].isdigit())):
        raise SlashError("usage: /copy, or /copy code [N]")
    return SlashCommand(name, tuple(arg.lower() if name in ("effort", "regen", "reasoning") else arg for arg in args))
