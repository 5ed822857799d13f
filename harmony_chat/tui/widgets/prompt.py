"""The multi-line prompt: Enter sends, ctrl+j / alt+enter (shift+enter where reported) adds a newline."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.widgets import TextArea

from harmony_chat.tui.bindings import PROMPT_KEYS


class PromptInput(TextArea):
    """Where the user writes; posts :class:`PromptInput.Submitted` on Enter."""

    BINDINGS = [key.binding() for key in PROMPT_KEYS]
    DEFAULT_CSS = """
    PromptInput { height: auto; max-height: 10; min-height: 3; border: round $primary 50%; }
    PromptInput:focus { border: round $primary; }
    """

    @dataclass
    class Submitted(Message):
        """The user sent ``text``."""

        text: str

    def __init__(self, cursor_blink: bool = True) -> None:
        super().__init__("", id="prompt", soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.cursor_blink = cursor_blink
        self.border_title = "Message (Enter sends · ctrl+j newline)"

    def action_submit(self) -> None:
        """Send the text (empty text is ignored)."""
        if self.text.strip():
            self.post_message(self.Submitted(self.text))

    def action_newline(self) -> None:
        """Insert a newline at the cursor."""
        self.insert("\n")
