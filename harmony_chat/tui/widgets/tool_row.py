"""A tool call in the conversation: what the model asked for, its state, and the result.

The row is collapsible: its title says which tool and where the call stands (asking, running
with the time it has taken, done, denied, failed, timed out, cancelled); the body holds the
arguments as formatted JSON (``python``'s code, highlighted as Python) and the result.
Everything here comes from the model or a tool, so it is shown as text, never as markup.
"""

from __future__ import annotations

import time

from rich.syntax import Syntax
from textual.widgets import Collapsible, Static

from harmony_chat.chat.approval import pretty_arguments
from harmony_chat.tools.base import ToolResult
from harmony_chat.tui.literal import literal, visible

STATE_MARKS = {
    "asking": "?",
    "running": "…",
    "done": "✓",
    "denied": "✗",
    "failed": "⚠",
    "timeout": "⏱",
    "cancelled": "■",
}
"""The mark in front of each state in the row's title."""
HOW_APPROVED = {
    "approved": "approved",
    "always": "always allowed",
    "auto": "approve = all",
    "denied": "",
    "not-run": "",
}


CODE_LABEL = "code the model wants to run (written in its hidden reasoning)"


def is_code_call(name: str) -> bool:
    """Whether a call to ``name`` is code for the ``python`` tool (``python``, ``python.<verb>``)."""
    first = name.strip().split(" ", 1)[0]
    return first == "python" or first.startswith("python.")


class ToolRow(Collapsible):
    """A collapsed row: a tool call or a stored tool result; title and body are shown as text."""

    def __init__(self, title: str, body: str) -> None:
        # Textual shows Content titles as they are (CollapsibleTitle.label takes Content); a str is markup.
        super().__init__(Static(literal(body), markup=False), title=literal(title), collapsed=True)  # type: ignore[arg-type]


class ToolCallRow(Collapsible):
    """One tool call of the model, followed through approval, running and its result."""

    DEFAULT_CSS = """
    ToolCallRow CollapsibleTitle { width: 1fr; }  /* a new heading needs no layout (none is done under a modal) */
    ToolCallRow .tool-label { color: $text-muted; }
    ToolCallRow .tool-result { margin: 0 0 0 2; }
    ToolCallRow.-failed CollapsibleTitle, ToolCallRow.-timeout CollapsibleTitle { color: $error; }
    ToolCallRow.-denied CollapsibleTitle, ToolCallRow.-cancelled CollapsibleTitle { color: $warning; }
    ToolCallRow.-done CollapsibleTitle { color: $success; }
    """

    def __init__(self, name: str, arguments: str, runnable: bool = True) -> None:
        self.tool_name = name
        """The name the model called, e.g. ``functions.get_weather``."""
        self.server = ""
        self.state: str | None = None
        """``asking``, ``running``, a result status, or None (the call was not taken up)."""
        self.malformed = not runnable
        self.note = ""
        self.result: ToolResult | None = None
        self._running_since = 0.0
        self._result = Static("", classes="tool-result", markup=False)
        self._result_label = Static("result", classes="tool-label", markup=False)
        self._result_label.display = self._result.display = False
        code = is_code_call(name)
        shown = visible(arguments if code else pretty_arguments(arguments)) or ("" if code else "{}")
        arguments_view = Static(
            Syntax(shown, "python" if code else "json", word_wrap=True, theme="ansi_dark"), classes="tool-arguments"
        )
        super().__init__(
            Static(CODE_LABEL if code else "arguments", classes="tool-label", markup=False),
            arguments_view,
            self._result_label,
            self._result,
            title=literal(self._heading()),  # type: ignore[arg-type]
            collapsed=True,
        )

    def _heading(self) -> str:
        parts = [
            f"Tool call → {self.tool_name}" + (" (malformed, not run)" if self.malformed and not self.state else "")
        ]
        if self.server:
            parts.append(self.server)
        if self.state == "running":
            parts.append(f"running {time.monotonic() - self._running_since:.1f}s")
        elif self.state is not None:
            timed = self.result is not None and self.result.elapsed_s > 0 and self.state != "denied"
            parts.append(self.state + (f" in {self.result.elapsed_s:.1f}s" if timed and self.result else ""))
        if self.note:
            parts.append(self.note)
        title = " · ".join(parts)
        return f"{STATE_MARKS[self.state]} {title}" if self.state in STATE_MARKS else title

    def _show(self) -> None:
        self.title = literal(self._heading())  # type: ignore[assignment]
        self._title.refresh(layout=True)  # the title sizes to its text; a longer one must not be clipped
        for state in STATE_MARKS:
            self.set_class(state == self.state, f"-{state}")

    def asking(self) -> None:
        """The user is being asked whether the call may run."""
        self.state = "asking"
        self._show()

    def running(self, server: str) -> None:
        """The call was approved and runs now."""
        self.server, self.state, self._running_since = server, "running", time.monotonic()
        self._show()

    def tick(self) -> None:
        """Refresh the elapsed time of a running call."""
        if self.state == "running":
            self._show()

    def finished(self, server: str, result: ToolResult, approval: str) -> None:
        """The call ended: show how, and the text the model gets."""
        self.server, self.state, self.result = server or self.server, result.status, result
        how = HOW_APPROVED.get(approval, approval)
        self.note = ", ".join(part for part in (how, "output cut" if result.truncated else "") if part)
        self._result_label.display = self._result.display = True
        self._result.update(literal(result.text))
        self._show()

    def restored(self, text: str) -> None:
        """Show a result read back from the history."""
        self.state, self.note = None, "result from history"
        self._result_label.display = self._result.display = True
        self._result.update(literal(text))
        self._show()
