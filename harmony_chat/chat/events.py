"""Events of the conversation core, on top of the turn's own (decoder events, prompt, stats).

The UIs render these and nothing else: a tool call's review, its start and its result, the
steps of a tool loop, and notices about the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harmony_chat.harmony.turn import TurnEvent

if TYPE_CHECKING:
    from harmony_chat.tools.base import ToolResult


@dataclass(frozen=True, slots=True)
class StepStarted:
    """A generation call of the turn begins (step 1, then one more after each tool result)."""

    step: int


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


ChatEvent = TurnEvent | StepStarted | ToolStarted | ToolFinished | ToolLoopLimit | Notice
"""Everything the conversation core yields."""
