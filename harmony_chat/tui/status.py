"""What the chat's status bar shows, as one value.

:class:`StatusState` is frozen: the chat screen changes it with :func:`dataclasses.replace` and
holds it in one reactive, bound to the status bar (``data_bind``), which renders from it. What a
turn's events tell of its figures is :func:`with_figures`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from harmony_chat.chat.events import ChatEvent, ReasoningSummary
from harmony_chat.generation.turn import PromptReady, TurnStats
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


def with_figures(state: StatusState, event: ChatEvent) -> StatusState:
    """``state`` with what ``event`` tells of the turn's figures: the context used, speed, the summaries' cost."""
    match event:
        case PromptReady():
            return replace(state, context_used=len(event.prompt.tokens))
        case TurnStats():
            figures = event.stats
            return replace(
                state,
                ttft=figures.ttft_s,
                speed=figures.decode_tokens_per_s,
                cached=figures.prompt_tokens_cached,
                context_used=figures.prompt_tokens + figures.generated_tokens,
            )
        case ReasoningSummary():
            return replace(
                state,
                summary_tokens=state.summary_tokens + event.stats.generated_tokens,
                summary_seconds=state.summary_seconds + event.seconds,
            )
        case _:
            return state
