"""The multi-line prompt: Enter sends, ctrl+j / alt+enter (shift+enter where reported) adds a newline.

Pasted text is data: it goes in where the cursor is, as one edit, with line ends as newlines and
other control characters as their pictures (``␛``); nothing in it is a key (see ``pasted_text.py``).

Enter and the newline keys are priority bindings (the text area would otherwise take Enter as a
newline). A priority binding runs as soon as the app reads the key, while the keys that came
before it in the same read (a paste without bracketed paste, automation, a laggy link) still
wait in this widget's queue. So the actions only queue their work behind those keys: the text
is read, sent and cleared in the order it was typed, at any input speed.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from harmony_chat.tui.bindings import PROMPT_KEYS
from harmony_chat.tui.literal import visible


class PromptInput(TextArea):
    """Where the user writes; posts :class:`PromptInput.Submitted` on Enter and clears itself."""

    BINDINGS = [key.binding() for key in PROMPT_KEYS]
    DEFAULT_CSS = """
    PromptInput { height: auto; max-height: 10; min-height: 3; border: round $primary 50%; }
    PromptInput:focus { border: round $primary; }
    """

    @dataclass
    class Submitted(Message):
        """The user sent ``text`` (the prompt is already cleared; see :meth:`PromptInput.give_back`)."""

        text: str

    def __init__(self, cursor_blink: bool = True) -> None:
        super().__init__("", id="prompt", soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.cursor_blink = cursor_blink
        self.border_title = "Message (Enter sends · ctrl+j newline)"

    async def on_paste(self, event: events.Paste) -> None:
        """Insert pasted text as text (in place of the selection), never sent, whatever it holds."""
        event.prevent_default()  # instead of the text area's own paste, which inserts it as it is
        if not self.read_only:
            self.insert_pasted(event.text)
            self.focus()

    def insert_pasted(self, text: str) -> None:
        """Put pasted ``text`` in place of the selection: line ends as newlines, other controls as pictures."""
        result = self.replace(visible(text.replace("\r\n", "\n").replace("\r", "\n")), *self.selection)
        self.move_cursor(result.end_location)

    def type_ahead(self, key: events.Key | events.Paste) -> bool:
        """Take a key typed as a modal opened (a character, or backspace), or a paste; False: not one to take."""
        if isinstance(key, events.Paste):
            self.insert_pasted(key.text)
            return True
        if key.key == "backspace":
            self.action_delete_left()
            return True
        if key.is_printable and key.character:
            self.insert(key.character)
            return True
        return False

    def action_submit(self) -> None:
        """Send the text once every key typed before Enter is in it (empty text is ignored)."""
        self.call_later(self._submit)

    def _submit(self) -> None:
        text = self.text
        if text.strip():
            self.clear()
            self.post_message(self.Submitted(text))

    def action_newline(self) -> None:
        """Insert a newline at the cursor, after the keys typed before it."""
        self.call_later(self.insert, "\n")

    def give_back(self, text: str, select: bool = False) -> None:
        """Put ``text`` back (a refused send, an edit), before anything typed since; cursor at the end.

        With ``select``, ``text`` is selected instead, so what is typed next replaces it (a failed
        slash command: the user fixes it, or types another).
        """
        current = self.text
        self.text = text if not current else f"{text}\n{current}"
        if not select:
            self.move_cursor(self.document.end)
            return
        lines = text.split("\n")
        self.selection = Selection((0, 0), (len(lines) - 1, len(lines[-1])))
