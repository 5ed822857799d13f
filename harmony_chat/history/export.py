"""Export a stored conversation: Markdown, JSON (harmony Conversation plus metadata), raw harmony.

In Markdown, the answers' citations of the browser's pages (``【3†L10-L15】``) become footnotes
``[^1]`` with the page's title and URL, rebuilt from the browser's tool messages before each answer
(numbered on through the document, so two answers never share a label). Every export keeps the
model's text as it was; JSON escapes each control character in it (``\u001b``), Markdown and
harmony text hold them raw, so the command line shows those through
:func:`~harmony_chat.text_safety.visible` when it writes them to stdout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from openai_harmony import Conversation, HarmonyEncoding, Message, RenderConversationConfig

from harmony_chat.harmony.messages import message_text
from harmony_chat.harmony.visibility import POLICY, Display, MessageKind, message_kind, rule_of, shown_in_view
from harmony_chat.history.store import StoredConversation, StoredSummary
from harmony_chat.history.text import local_time
from harmony_chat.text_safety import terminal_json

FORMATS = ("md", "json", "harmony")


def _system_messages(stored: StoredConversation, encoding: HarmonyEncoding) -> list[Message]:
    from harmony_chat.history.recording import resume_session

    session = resume_session(encoding, stored, None)
    prefix = [session.system_message()]
    if (developer := session.developer_message()) is not None:
        prefix.append(developer)
    return prefix


def _exported(stored: StoredConversation, with_reasoning: bool) -> list[tuple[Message, int | None]]:
    """The messages an export shows, with their turn ids: hidden kinds only ``with_reasoning``."""
    turns = stored.message_turns or [None] * len(stored.messages)
    return [
        (message, turn)
        for message, turn in zip(stored.messages, turns, strict=False)
        if shown_in_view(rule_of(message).display, with_reasoning)
    ]


@dataclass
class _Footnotes:
    """Turns the answers' citations into footnotes, from the browser pages seen so far."""

    views: list[str] = field(default_factory=list)
    """The texts of the ``browser.*`` tool messages so far, in order."""
    used: int = 0
    """Footnote numbers given out so far."""

    def saw(self, message: Message, text: str) -> None:
        """Note a tool message (a browser view is a page citations can name)."""
        if (message.author.name or "").startswith("browser."):
            self.views.append(text)

    def cite(self, text: str) -> str:
        """``text`` with its citations as footnotes ``[^n]`` and their definitions after it."""
        if "【" not in text:
            return text
        from harmony_chat.tools.browser import find_citations, sources_from_transcript
        from harmony_chat.tools.browser import to_markdown as footnoted

        found = find_citations(text, sources_from_transcript(self.views))
        shifted = [item if item.number is None else replace(item, number=item.number + self.used) for item in found]
        self.used = max([self.used, *(item.number for item in shifted if item.number is not None)])
        return footnoted(text, shifted).rstrip()


def _summary_lines(summary: StoredSummary) -> list[str]:
    quoted = [f"> {line}" for line in summary.text.splitlines()]
    return ["> **Reasoning summary (written by the model):**", ">", *quoted, ""]


TURN_MARKERS = {
    "stopped": "■ stopped",
    "truncated": "✂ cut off at the token limit",
    "error": "⚠ ended with an error",
    "interrupted": "⚠ interrupted (harmony-chat ended while it ran); kept as far as it got",
}
"""How an export marks a turn that did not end on its own, as the app's turn footer does."""


def turn_markers(stored: StoredConversation) -> dict[int, list[str]]:
    """The marker lines of unfinished turns, by the index of the message they follow (-1: before any).

    A turn's marker follows its last message; a turn with none stored (stopped while it thought)
    follows the last message stored before it ended.
    """
    markers: dict[int, list[str]] = {}
    for turn in stored.turns:
        marker = TURN_MARKERS.get(turn.status)
        if marker is None:
            continue
        own = [index for index, turn_id in enumerate(stored.message_turns) if turn_id == turn.id]
        if own:
            after = own[-1]
        else:
            ended = turn.finished_at or turn.started_at
            times = stored.message_times or [0.0] * len(stored.messages)
            after = max((index for index, at in enumerate(times) if at <= ended), default=-1)
        markers.setdefault(after, []).append(marker)
    return markers


def to_markdown(stored: StoredConversation, with_reasoning: bool = False) -> str:
    """Answers (citations as footnotes), preambles, reasoning summaries (and, asked, analysis) as Markdown."""
    when = local_time(stored.updated_at or stored.created_at)
    lines = [f"# {stored.title or 'Conversation'}", "", f"*{when} · {stored.model}*", ""]
    footnotes = _Footnotes()
    summaries = list(stored.summaries)
    ids = stored.message_ids if len(stored.message_ids) == len(stored.messages) else [0] * len(stored.messages)
    markers = turn_markers(stored)
    lines += [f"*{marker}*\n" for marker in markers.get(-1, [])]
    for index, (message, message_id) in enumerate(zip(stored.messages, ids, strict=True)):
        lines += _message_lines(message, message_id, with_reasoning, footnotes, summaries)
        lines += [f"*{marker}*\n" for marker in markers.get(index, [])]
    for summary in summaries:
        lines += _summary_lines(summary)
    return "\n".join(lines).rstrip() + "\n"


def _message_lines(
    message: Message, message_id: int, with_reasoning: bool, footnotes: _Footnotes, summaries: list[StoredSummary]
) -> list[str]:
    """One message's Markdown (nothing for a hidden kind), after the summaries that come before it."""
    lines: list[str] = []
    if not shown_in_view(rule_of(message).display, with_reasoning):
        return lines
    while summaries and summaries[0].id < message_id:  # a summary comes before the answer it is about
        lines += _summary_lines(summaries.pop(0))
    text, kind = message_text(message), message_kind(message)
    if kind is MessageKind.USER:
        lines += ["## You", "", text, ""]
    elif kind is MessageKind.TOOL_RESULT:
        footnotes.saw(message, text)
        lines += [f"**Tool result from {message.author.name}:**", "", "```", text, "```", ""]
    elif kind is MessageKind.TOOL_CALL:
        lines += [f"**Tool call → {message.recipient}:**", "", "```", text, "```", ""]
    elif POLICY[kind].display is Display.ANSWER:
        lines += ["## Assistant", "", footnotes.cite(text) if kind is MessageKind.FINAL else text, ""]
    elif kind is MessageKind.PREAMBLE:
        lines += [f"*{text}*", ""]
    elif kind is not MessageKind.SYSTEM:
        lines += ["> **Reasoning (raw chain of thought, not reviewed for safety):**", ">"]
        lines += [f"> {line}" for line in text.splitlines()] + [""]
    return lines


def to_json(stored: StoredConversation, encoding: HarmonyEncoding, with_reasoning: bool = False) -> str:
    """openai-harmony's Conversation JSON plus the per-turn metadata (stored analysis when asked)."""
    exported = _exported(stored, with_reasoning)
    messages = [message for message, _turn in exported]
    conversation = Conversation.from_messages([*_system_messages(stored, encoding), *messages])
    data: dict[str, Any] = json.loads(conversation.to_json())
    data["harmony_chat"] = {
        "id": stored.id,
        "title": stored.title,
        "model": stored.model,
        "created_at": stored.created_at,
        "settings": stored.settings,
        "message_turns": [turn for _message, turn in exported],
        "summaries": [{"id": s.id, "turn": s.turn, "text": s.text, **s.figures} for s in stored.summaries],
        "turns": [
            {
                "id": t.id,
                "model": t.model,
                "effort": t.effort,
                "status": t.status,
                "stop_reason": t.stop_reason,
                "stats": t.stats,
                "started_at": t.started_at,
                "finished_at": t.finished_at,
            }
            for t in stored.turns
        ],
    }
    return terminal_json(data, indent=2) + "\n"


def to_harmony(stored: StoredConversation, encoding: HarmonyEncoding, with_reasoning: bool = False) -> str:
    """The conversation as harmony text, special tokens written out (stored analysis when asked)."""
    messages = [message for message, _turn in _exported(stored, with_reasoning)]
    conversation = Conversation.from_messages([*_system_messages(stored, encoding), *messages])
    config = RenderConversationConfig(auto_drop_analysis=not with_reasoning)
    return str(encoding.decode(encoding.render_conversation(conversation, config))) + "\n"
