"""A stored conversation laid out as the chat shows it: exchanges, their reasoning summaries and cited pages.

Each user message starts an exchange; the messages after it (up to the next one) are its answer.
A reasoning summary is stored beside the messages, its id just after those it follows, so it is
placed before the first message of the answer stored after it. Live summaries of one analysis
that a later summary of it covers are left out (the chat showed only the latest). The pages the
answer's citations name are rebuilt from the browser views stored up to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harmony_chat.tui.browsing import browser_views

if TYPE_CHECKING:
    from openai_harmony import Message

    from harmony_chat.history.store import StoredConversation, StoredSummary
    from harmony_chat.tools.browser import PageRecord


@dataclass(slots=True)
class StoredExchange:
    """One user message and the answer stored after it."""

    user: Message
    answers: list[Message] = field(default_factory=list)
    turn: int | None = None
    """The turn row of the answer (its effort and status), if known."""
    summaries: list[tuple[int, str]] = field(default_factory=list)
    """(index in ``answers``, text): each summary is shown before that message (past the end: after the last)."""
    sources: dict[int, PageRecord] = field(default_factory=dict)
    """Cursor → page, for the answer's citations."""


def _latest_of_each_run(run: list[StoredSummary]) -> list[StoredSummary]:
    """Drop live summaries that a later summary in the same place covers."""
    return [summary for index, summary in enumerate(run) if not summary.figures.get("live") or index == len(run) - 1]


def stored_exchanges(stored: StoredConversation) -> list[StoredExchange]:
    """The exchanges of ``stored``, in order (messages before the first user message are left out)."""
    from harmony_chat.tools.browser import sources_from_transcript

    ids = stored.message_ids if len(stored.message_ids) == len(stored.messages) else [0] * len(stored.messages)
    waiting = sorted(stored.summaries, key=lambda summary: summary.id)
    exchanges: list[StoredExchange] = []
    sources: dict[int, PageRecord] = {}
    for message, turn, message_id in zip(stored.messages, stored.message_turns, ids, strict=True):
        run: list[StoredSummary] = []
        while waiting and message_id and waiting[0].id < message_id:
            run.append(waiting.pop(0))
        if exchanges:
            last = exchanges[-1]
            last.summaries += [(len(last.answers), summary.text) for summary in _latest_of_each_run(run)]
        if message.author.role.value == "user":
            exchanges.append(StoredExchange(message))
        elif exchanges:
            exchange = exchanges[-1]
            exchange.answers.append(message)
            exchange.turn = turn if turn is not None else exchange.turn
            sources.update(sources_from_transcript(browser_views([message])))
            exchange.sources = dict(sources)
    if exchanges and waiting:
        last = exchanges[-1]
        last.summaries += [(len(last.answers), summary.text) for summary in _latest_of_each_run(waiting)]
    return exchanges
