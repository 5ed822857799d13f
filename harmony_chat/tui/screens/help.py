"""The help screen: every key (with the keys currently bound) and every slash command."""

from __future__ import annotations

import re

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from harmony_chat.tui.bindings import ALL_KEYS, SLASH_COMMANDS
from harmony_chat.tui.literal import visible


def table_code(text: str) -> str:
    """``text`` as a Markdown code span that stays one table cell, whatever it holds (it comes from a file)."""
    text = visible(text).replace("\n", "\u2424")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`") or not text.strip():
        text = f" {text} "
    return fence + text.replace("|", "\\|") + fence


def help_markdown(keymap: dict[str, str]) -> str:
    """The help text, showing remapped keys where the config changed them."""
    rows = "\n".join(f"| {table_code(keymap.get(key.id, key.keys))} | {key.help} | `{key.id}` |" for key in ALL_KEYS)
    commands = "\n".join(f"| `{name}` | {text} |" for name, text in SLASH_COMMANDS)
    return (
        "# harmony-chat help\n\n## Keys\n\n| keys | what it does | id (for `[keymap]`) |\n|---|---|---|\n"
        f"{rows}\n\n## Slash commands (type them in the prompt)\n\n| command | what it does |\n|---|---|\n"
        f"{commands}\n\nThe command palette (`ctrl+p`) offers every action. Press `escape` or `f1` to close."
    )


class HelpScreen(ModalScreen[None]):
    """Keys and commands."""

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen VerticalScroll { width: 90%; max-width: 110; height: 80%; border: round $primary; background: $surface; }
    """

    def __init__(self, keymap: dict[str, str]) -> None:
        super().__init__()
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        with VerticalScroll():
            yield Markdown(help_markdown(self.keymap))
