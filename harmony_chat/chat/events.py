"""Events of the conversation core, on top of the turn's own (decoder events, prompt, stats).

The UIs render these and nothing else: a tool call's review, its start and its result, the
steps of a tool loop, reasoning summaries, and notices about the history. One of them asks back:
:class:`ApprovalRequested` carries the future its reader answers (the turn waits for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harmony_chat.backends.base import GenerationStats
from harmony_chat.generation.turn import TurnEvent

if TYPE_CHECKING:
    from harmony_chat.chat.approval import ApprovalAnswer, ToolReview
    from harmony_chat.tools.base import ToolResult


@dataclass(frozen=True, slots=True)
class StepStarted:
    """A generation call of the turn begins (step 1, then one more after each tool result)."""

    step: int


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """A tool call waits for the user: show ``review`` and complete ``answer`` (the turn waits for it).

    Whoever reads the turn's events answers, from any thread, with
    :func:`~harmony_chat.chat.approval.give`; a reader that stops the turn meanwhile answers with
    a denial. Nobody else can: the turn blocks until the answer comes.
    """

    call_id: int
    name: str
    """The name the model called, e.g. ``functions.get_weather``."""
    review: ToolReview
    """What the user is shown (``savable`` says whether "always" may be saved)."""
    answer: ApprovalAnswer


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """An approved tool call starts running."""

    call_id: int
    name: str
    """The name the model called, e.g. ``functions.get_weather``."""
    server: str
    """Where the tool lives (an MCP server's name, ``builtin``), or ``""`` when unknown."""
    arguments: str
    """The arguments as the model wrote them (or as repaired)."""


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call ended: ran, failed, timed out, was cancelled, denied or could not run."""

    call_id: int
    name: str
    server: str
    result: ToolResult
    approval: str
    """How it was decided: ``approved``, ``always``, ``auto``, ``denied`` or ``not-run``."""


@dataclass(frozen=True, slots=True)
class ToolLoopLimit:
    """The turn reached ``max_steps`` generation calls; the last call was not run."""

    max_steps: int


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should know that is not part of the answer (history trouble...)."""

    text: str
    severity: str = "warning"


@dataclass(frozen=True, slots=True)
class SummaryStarted:
    """The model starts summarising the reasoning so far; the turn waits for it (a UI may say so)."""

    part: int
    live: bool
    analysis_tokens: int


@dataclass(frozen=True, slots=True)
class ReasoningSummary:
    """A short account of the turn's reasoning, written by the model for the user: never the raw chain of thought.

    It is written by a separate generation that never enters the conversation or a later prompt.
    ``text`` is None when the summarizer failed (an error, nothing written, markup, cut off):
    show nothing then, never raw text. The figures say what the summary cost, also on failure.
    """

    text: str | None
    part: int
    """The turn's first summary is 1, the next 2 (live ones, and one after each analysis)."""
    live: bool
    """Written while the reasoning went on; a later summary covers more of it."""
    analysis_tokens: int
    """Analysis tokens the summary covers."""
    stats: GenerationStats
    """The summary generation's figures (prompt evaluated and reused, tokens, time to first token)."""
    seconds: float
    """Wall time the summary took (the turn waited this long)."""
    failure: str | None = None
    """Why there is no text (None when there is)."""

    def as_dict(self) -> dict[str, object]:
        """The summary and its cost as flat data (an ``ask --json`` event)."""
        return {"type": "summary", "text": self.text, **self.figures()}

    def figures(self) -> dict[str, object]:
        """What the summary cost, and why it failed, as flat data (the history keeps these beside the text)."""
        return {
            "part": self.part,
            "live": self.live,
            "analysis_tokens": self.analysis_tokens,
            **self.stats.as_dict(),
            "seconds": round(self.seconds, 6),
            "error": self.failure,
        }


ChatEvent = (
    TurnEvent
    | StepStarted
    | ApprovalRequested
    | ToolStarted
    | ToolFinished
    | ToolLoopLimit
    | Notice
    | SummaryStarted
    | ReasoningSummary
)
"""Everything the conversation core yields."""
