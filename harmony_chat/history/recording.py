"""Bridges between sessions and the history: settings, resuming, and recording a turn as it runs."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from openai_harmony import HarmonyEncoding

from harmony_chat.generation.turn import TurnEvent, TurnStats
from harmony_chat.harmony.effort import parse_effort
from harmony_chat.harmony.events import ContentDelta, MessageFinished, StopReason
from harmony_chat.harmony.header import is_tool_recipient
from harmony_chat.harmony.session import ChatSession
from harmony_chat.harmony.visibility import Display, display_of
from harmony_chat.history.store import HistoryStore, StoredConversation

PARTIAL_EVERY_S = 1.0
"""How often a streaming answer is saved, so a killed process loses at most this much."""


def session_settings(session: ChatSession) -> dict[str, Any]:
    """What must be kept to rebuild the session's system and developer messages."""
    return {
        "effort": session.effort,
        "instructions": session.instructions,
        "functions": [tool.model_dump() for tool in session.functions],
        "start_date": session.start_date,
        "builtin": list(session.builtin),
    }


def resume_session(encoding: HarmonyEncoding, stored: StoredConversation, context_size: int | None) -> ChatSession:
    """A session that continues a stored conversation.

    It keeps the date the conversation started on, so the prompt prefix (and the KV cache) match.
    """
    settings = stored.settings
    session = ChatSession(
        encoding,
        effort=parse_effort(settings.get("effort", "medium")),
        instructions=settings.get("instructions"),
        functions=stored.functions,
        start_date=settings.get("start_date"),
        builtin=settings.get("builtin", []),
        context_size=context_size,
    )
    session.history = list(stored.messages)
    return session


def status_of(stats: TurnStats | None, error: str | None) -> str:
    """The stored status of a turn that ended like this."""
    if error is not None or stats is None or stats.reason is StopReason.ERROR:
        return "error"
    if stats.reason is StopReason.CANCELLED:
        return "stopped"
    if stats.truncated or stats.reason is StopReason.LENGTH:
        return "truncated"
    return "complete"


class TurnRecorder:
    """Writes one assistant turn to the history while it is generated (runs in the worker thread)."""

    def __init__(self, store: HistoryStore, conversation_id: int, model: str, effort: str) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.turn = store.begin_turn(conversation_id, model, effort)
        self._partial: list[str] = []
        self._saved_at = time.monotonic()

    def on_event(self, event: TurnEvent) -> None:
        """Store finished messages; save the streaming answer now and then."""
        if isinstance(event, MessageFinished):
            self._partial = []
            if not (event.truncated and is_tool_recipient(event.message.recipient)):
                self.store.add_message(self.conversation_id, event.message, self.turn)
        elif isinstance(event, ContentDelta) and display_of(event.channel, event.recipient) is Display.ANSWER:
            self._partial.append(event.text)
            if time.monotonic() - self._saved_at >= PARTIAL_EVERY_S:
                self.store.save_partial(self.turn, "".join(self._partial))
                self._saved_at = time.monotonic()

    def add_summary(self, text: str, figures: Mapping[str, Any]) -> None:
        """Store a reasoning summary the user was shown, with what it cost (searchable, never a message)."""
        self.store.add_summary(self.conversation_id, self.turn, text, dict(figures))

    def finish(self, stats: TurnStats | None, error: str | None = None) -> None:
        """Record how the turn ended."""
        figures: dict[str, Any] = stats.stats.as_dict() if stats is not None else {}
        if error:
            figures["error"] = error
        reason = stats.reason.value if stats is not None else None
        self.store.finish_turn(self.turn, status_of(stats, error), reason, figures)
