"""Export a stored conversation: Markdown, JSON (harmony Conversation plus metadata), raw harmony."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from openai_harmony import Conversation, HarmonyEncoding, Message, Role

from harmony_chat.history.store import StoredConversation, message_text

FORMATS = ("md", "json", "harmony")


def _system_messages(stored: StoredConversation, encoding: HarmonyEncoding) -> list[Message]:
    from harmony_chat.history.recording import resume_session

    session = resume_session(encoding, stored, None)
    prefix = [session.system_message()]
    if (developer := session.developer_message()) is not None:
        prefix.append(developer)
    return prefix


def to_markdown(stored: StoredConversation, with_reasoning: bool = False) -> str:
    """Final answers and preambles (and, when asked, labelled analysis) as Markdown."""
    when = dt.datetime.fromtimestamp(stored.created_at).strftime("%Y-%m-%d %H:%M")
    lines = [f"# {stored.title or 'Conversation'}", "", f"*{when} · {stored.model}*", ""]
    for message in stored.messages:
        text, role = message_text(message), message.author.role
        if role == Role.USER:
            lines += ["## You", "", text, ""]
        elif role == Role.TOOL:
            lines += [f"**Tool result from {message.author.name}:**", "", "```", text, "```", ""]
        elif message.recipient:
            lines += [f"**Tool call → {message.recipient}:**", "", "```", text, "```", ""]
        elif message.channel == "final":
            lines += ["## Assistant", "", text, ""]
        elif message.channel == "commentary":
            lines += [f"*{text}*", ""]
        elif with_reasoning:
            lines += ["> **Reasoning (raw chain of thought, not reviewed for safety):**", ">"]
            lines += [f"> {line}" for line in text.splitlines()] + [""]
    return "\n".join(lines).rstrip() + "\n"


def to_json(stored: StoredConversation, encoding: HarmonyEncoding) -> str:
    """openai-harmony's Conversation JSON plus the per-turn metadata."""
    conversation = Conversation.from_messages([*_system_messages(stored, encoding), *stored.messages])
    data: dict[str, Any] = json.loads(conversation.to_json())
    data["harmony_chat"] = {
        "id": stored.id,
        "title": stored.title,
        "model": stored.model,
        "created_at": stored.created_at,
        "settings": stored.settings,
        "message_turns": stored.message_turns,
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
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def to_harmony(stored: StoredConversation, encoding: HarmonyEncoding) -> str:
    """The whole conversation as harmony text, special tokens written out."""
    conversation = Conversation.from_messages([*_system_messages(stored, encoding), *stored.messages])
    return str(encoding.decode(encoding.render_conversation(conversation))) + "\n"
