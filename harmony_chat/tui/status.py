"""What the chat's status bar shows, as one value.

:class:`StatusState` is frozen: the chat screen changes it with :func:`dataclasses.replace` and
holds it in one reactive, bound to the status bar (``data_bind``), which renders from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.visibility import ReasoningMode


@dataclass(frozen=True, slots=True)
class StatusState:
    """The facts of the status line: model, device, effort, context, speed, tools, reasoning, servers, state."""

    model: str = "no model"
    device: str = ""
    effort: Effort = "medium"
    """The reasoning effort of the next turn (the conversation's; shown, never kept here)."""
    context_used: int = 0
    context_size: int = 0
    ttft: float = 0.0
    speed: float = 0.0
    cached: int | None = None
    """Prompt tokens a remote engine served from its prefix cache in the last call (None: not reported)."""
    state: str = "idle"
    """What the chat is doing (``idle``, ``loading``, ``thinking``, ``answering``, ``error``, ...)."""
    debug: bool = False
    """Debug mode: the raw analysis and the token inspector shown, whatever the reasoning mode."""
    history_off: bool = False
    tools_state: str = ""
    """``""`` (no tools configured), ``starting`` or ``ready``."""
    tool_count: int = 0
    servers_failed: int = 0
    reasoning: ReasoningMode = "hidden"
    """What the chat shows of the reasoning: ``hidden``, ``summary`` or ``raw``."""
    summary_tokens: int = 0
    """Tokens the last turn's reasoning summaries wrote (their cost)."""
    summary_seconds: float = 0.0
    """Seconds the last turn waited for its reasoning summaries."""
    serving: str = ""
    """The ``harmony-chat serve`` processes running on this machine (``:8000``, ``0.0.0.0:8080``), or ``""``."""
