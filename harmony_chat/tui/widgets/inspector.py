"""The debug token inspector: every generated token live, the last prompt, KV reuse, recoveries.

Tokens always go into a bounded ring buffer (cheap), and are written to the log in one batch per
UI update while the pane is visible, so the pane keeps up with full generation speed.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from typing import assert_never

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, RichLog, Static

from harmony_chat.chat.events import (
    ApprovalRequested,
    ChatEvent,
    Notice,
    ReasoningSummary,
    StepStarted,
    SummaryStarted,
    ToolFinished,
    ToolLoopLimit,
    ToolStarted,
)
from harmony_chat.generation.turn import PromptReady, TurnStats
from harmony_chat.harmony.events import (
    ContentDelta,
    MessageFinished,
    MessageStarted,
    NoAnswer,
    RawToken,
    Recovery,
    ToolCall,
    TurnFinished,
)
from harmony_chat.tui.literal import literal, visible

TEXT_WIDTH = 18
"""Columns for a token's text in the inspector (longer texts are cut)."""
MAX_ROWS = 4000
"""Rows the inspector keeps; older ones scroll away."""
_SPECIAL = re.compile(r"(<\|[a-z_0-9]+\|>)")


def _colour(variables: dict[str, str], channel: str | None) -> str:
    return variables.get(f"channel-{channel}", "") if channel else ""


def spelled_prompt(text: str, special_style: str) -> Text:
    """Return prompt text with every special token highlighted."""
    rendered = Text()
    for piece in _SPECIAL.split(text):
        rendered.append(visible(piece), style=f"bold {special_style}" if _SPECIAL.fullmatch(piece) else "")
    return rendered


class TokenInspector(Vertical):
    """Raw tokens and prompt facts, shown in debug mode."""

    DEFAULT_CSS = """
    TokenInspector { width: 48; border-left: solid $panel; display: none; }
    TokenInspector #inspector-facts { height: auto; padding: 0 1; color: $text-muted; }
    TokenInspector RichLog { height: 1fr; }
    TokenInspector Collapsible { height: auto; max-height: 50%; }
    """

    def __init__(self) -> None:
        super().__init__(id="inspector")
        self.buffer: deque[RawToken] = deque(maxlen=MAX_ROWS)
        self._unwritten: list[RawToken] = []
        self.prompt_tokens = 0
        self.reused = 0
        self.recoveries: list[str] = []
        self.prompt_text = ""

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        yield Static("No generation yet.", id="inspector-facts", markup=False)
        with Collapsible(title="Last rendered prompt", collapsed=True, id="inspector-prompt"):
            yield Static("", id="inspector-prompt-text", markup=False)
        yield RichLog(max_lines=MAX_ROWS, wrap=False, markup=False, highlight=False, id="inspector-log")

    def record(self, events: Sequence[ChatEvent]) -> None:
        """Take in a batch of events (called for every batch, visible or not)."""
        for event in events:
            match event:
                case RawToken():
                    self.buffer.append(event)
                    self._unwritten.append(event)
                case PromptReady():
                    self.prompt_tokens = len(event.prompt.tokens)
                    self.recoveries = []
                case Recovery():
                    self.recoveries.append(f"{event.kind}: {event.detail}")
                case TurnStats():
                    self.reused = event.stats.prompt_tokens_reused
                case (
                    ContentDelta()
                    | MessageStarted()
                    | MessageFinished()
                    | ToolCall()
                    | NoAnswer()
                    | TurnFinished()
                    | StepStarted()
                    | ApprovalRequested()
                    | ToolStarted()
                    | ToolFinished()
                    | ToolLoopLimit()
                    | Notice()
                    | SummaryStarted()
                    | ReasoningSummary()
                ):
                    pass  # the inspector shows tokens and prompt facts only
                case _:
                    assert_never(event)
        if len(self._unwritten) > MAX_ROWS:
            del self._unwritten[:-MAX_ROWS]
        if self.display:
            self.flush()

    def set_prompt(self, text: str) -> None:
        """Show the last rendered prompt, special tokens spelled out and highlighted."""
        self.prompt_text = text
        if self.display:
            self._show_prompt()

    def _show_prompt(self) -> None:
        special = self.app.current_theme.variables.get("special-token", "yellow")
        self.query_one("#inspector-prompt-text", Static).update(spelled_prompt(self.prompt_text, special))

    def flush(self) -> None:
        """Write pending rows and refresh the facts (when the pane is visible)."""
        variables = self.app.current_theme.variables
        special = variables.get("special-token", "yellow")
        if self._unwritten:
            block = Text()
            for token in self._unwritten:
                colour = _colour(variables, token.channel)
                shown = visible(token.text) if token.special else repr(token.text)
                block.append(f"{token.token_id:>7} ", style="dim")
                block.append(
                    f"{shown[:TEXT_WIDTH]:<{TEXT_WIDTH}}", style=f"bold {special}" if token.special else colour
                )
                block.append(f" {token.channel or '-'}\n", style=colour or "dim")
            block.rstrip()
            self.query_one(RichLog).write(block)
            self._unwritten = []
        facts = f"prompt {self.prompt_tokens} tokens · {self.reused} reused from KV cache"
        if self.recoveries:
            facts += "\nrecoveries: " + "; ".join(self.recoveries[-3:])
        self.query_one("#inspector-facts", Static).update(literal(facts))

    def shown(self) -> None:
        """Called when debug mode reveals the pane: write what the ring buffer holds."""
        self._unwritten = list(self.buffer)
        self.query_one(RichLog).clear()
        self.flush()
        if self.prompt_text:
            self._show_prompt()

    def clear(self) -> None:
        """Forget everything (new chat)."""
        self.buffer.clear()
        self._unwritten = []
        self.prompt_tokens = self.reused = 0
        self.recoveries = []
        self.prompt_text = ""
        self.query_one(RichLog).clear()
        self.query_one("#inspector-facts", Static).update("No generation yet.")
