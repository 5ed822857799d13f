"""Reading what a server sent: messages, streams, usage, reasoning wherever it was put, leaks.

Everything here takes raw JSON (whatever the server sent, however malformed) and returns plain
values or None; nothing raises on a strange reply. Text quoted into evidence goes through
:func:`quote`, which clips it and escapes control characters (server text is never printed raw).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harmony_chat.conform.probes import REASONING_FIELDS
from harmony_chat.conform.transport import Reply

HARMONY_TOKEN = re.compile(r"<\|[a-z_]{2,24}\|>")
"""A harmony special token spelled out as text (``<|channel|>``, ``<|message|>``, ``<|constrain|>``...)."""
CHANNEL_RESIDUE = re.compile(
    r"assistant(?:final|analysis|commentary)|\bto=functions\.|^(?:analysis|commentary|final)(?=[A-Z\"{<])|"
    r"\bcommentary\s+to="
)
"""What is left of harmony headers when the special tokens are stripped but the words are not."""
LEAK_PROBE_CHARS = 40
"""How much of the reasoning's start must reappear in the answer to count as leaked analysis."""


def quote(text: object, limit: int = 60) -> str:
    """``text`` as evidence: JSON-quoted (control characters escaped), clipped to ``limit`` characters."""
    value = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    clipped = value if len(value) <= limit else value[: limit - 1] + "…"
    return json.dumps(clipped, ensure_ascii=False)


def get(data: object, *path: str | int) -> Any:
    """``data[path[0]][path[1]]...`` or None where any step is missing or of the wrong kind."""
    for key in path:
        if isinstance(key, int):
            if not isinstance(data, list) or not -len(data) <= key < len(data):
                return None
            data = data[key]
        else:
            if not isinstance(data, Mapping):
                return None
            data = data.get(key)
    return data


def text_of(value: object) -> str:
    """A string field's value, '' for anything else."""
    return value if isinstance(value, str) else ""


# -- Chat Completions ------------------------------------------------------------------------------


def chat_message(reply: Reply) -> dict[str, Any] | None:
    """The first choice's message of a non-streamed completion."""
    message = get(reply.data, "choices", 0, "message")
    return message if isinstance(message, dict) else None


def chat_finish(reply: Reply) -> object:
    """The first choice's ``finish_reason``."""
    return get(reply.data, "choices", 0, "finish_reason")


def reasoning_by_field(message: Mapping[str, Any]) -> dict[str, str]:
    """The non-empty reasoning a message (or delta) carries, by field name (``reasoning`` first)."""
    return {name: message[name] for name in REASONING_FIELDS if isinstance(message.get(name), str) and message[name]}


@dataclass(slots=True)
class StreamedChat:
    """A streamed completion put back together."""

    content: str = ""
    reasoning: dict[str, str] = field(default_factory=dict)
    """Reasoning text by the delta field it came in."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: object = None
    usage: dict[str, Any] | None = None
    chunks: int = 0
    error: str | None = None
    """An error event in the stream."""


def assemble_chat_stream(events: list[Any]) -> StreamedChat:
    """Join a stream's deltas: content, reasoning by field, tool calls by index, finish reason, usage."""
    out = StreamedChat()
    calls: dict[int, dict[str, Any]] = {}
    for event in events:
        if not isinstance(event, Mapping):
            continue
        out.chunks += 1
        if "error" in event:
            out.error = quote(event["error"], 160)
        if isinstance(event.get("usage"), dict):
            out.usage = event["usage"]
        choice = get(event, "choices", 0)
        if not isinstance(choice, Mapping):
            continue
        if choice.get("finish_reason") is not None:
            out.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            continue
        out.content += text_of(delta.get("content"))
        for name, text in reasoning_by_field(delta).items():
            out.reasoning[name] = out.reasoning.get(name, "") + text
        for position, call in enumerate(delta.get("tool_calls") or []):
            if not isinstance(call, Mapping):
                continue
            raw_index, function = call.get("index"), call.get("function")
            index = raw_index if isinstance(raw_index, int) else position
            merged = calls.setdefault(index, {"id": "", "type": "", "function": {"name": "", "arguments": ""}})
            merged["id"] = merged["id"] or text_of(call.get("id"))
            merged["type"] = merged["type"] or text_of(call.get("type"))
            if not isinstance(function, Mapping):
                function = {}
            merged["function"]["name"] += text_of(function.get("name"))
            arguments = function.get("arguments")
            merged["function"]["arguments"] += arguments if isinstance(arguments, str) else ""
    out.tool_calls = [calls[index] for index in sorted(calls)]
    return out


def prompt_tokens(reply: Reply) -> int | None:
    """``usage.prompt_tokens`` (Chat) or ``usage.input_tokens`` (Responses), streamed or not."""
    usage: object = get(reply.data, "usage")
    if reply.events is not None:
        usage = assemble_chat_stream(reply.events).usage
    for key in ("prompt_tokens", "input_tokens"):
        value = get(usage, key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def reasoning_tokens(reply: Reply) -> int | None:
    """``usage.completion_tokens_details.reasoning_tokens`` or ``output_tokens_details.reasoning_tokens``."""
    for path in (("completion_tokens_details", "reasoning_tokens"), ("output_tokens_details", "reasoning_tokens")):
        value = get(reply.data, "usage", *path)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


# -- Responses -------------------------------------------------------------------------------------


def output_items(reply: Reply) -> list[dict[str, Any]]:
    """A response's ``output`` items (the dict ones)."""
    items = get(reply.data, "output")
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def output_text(items: list[dict[str, Any]]) -> str:
    """The text of the assistant message items' ``output_text`` parts, joined."""
    texts: list[str] = []
    for item in items:
        if item.get("type") != "message":
            continue
        for part in item.get("content") or []:
            if isinstance(part, Mapping) and part.get("type") in ("output_text", "text"):
                texts.append(text_of(part.get("text")))
    return "".join(texts)


def reasoning_text(items: list[dict[str, Any]]) -> str:
    """The raw CoT of the reasoning items: their ``reasoning_text`` parts, joined."""
    texts: list[str] = []
    for item in items:
        if item.get("type") != "reasoning":
            continue
        for part in item.get("content") or []:
            if isinstance(part, Mapping) and part.get("type") == "reasoning_text":
                texts.append(text_of(part.get("text")))
    return "".join(texts)


def any_reasoning_text(items: list[dict[str, Any]]) -> str:
    """Reasoning wherever a reasoning item put it: content, summary, or ``encrypted_content`` sent as text."""
    found = reasoning_text(items)
    for item in items:
        if item.get("type") != "reasoning":
            continue
        for part in item.get("summary") or []:
            found += text_of(get(part, "text"))
        found += text_of(item.get("encrypted_content"))
    return found


# -- leaks -----------------------------------------------------------------------------------------


def markup_in(text: str) -> list[str]:
    """Harmony tokens and header residue found in user-facing text (distinct, in order)."""
    found: list[str] = []
    for pattern in (HARMONY_TOKEN, CHANNEL_RESIDUE):
        for match in pattern.finditer(text):
            if match.group(0) not in found:
                found.append(match.group(0))
    return found


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def analysis_in_answer(answer: str, reasoning: str) -> bool:
    """Whether the answer repeats the start of the reasoning (the analysis leaked into it)."""
    head = _squeeze(reasoning)[:LEAK_PROBE_CHARS]
    return len(head) >= 12 and head in _squeeze(answer)
