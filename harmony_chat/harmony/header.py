"""Lenient reading of a malformed harmony message header, for the decoder's recovery paths.

openai-harmony parses well-formed headers itself; this module only runs when it refuses one
(missing ``<|message|>``, an empty channel, a duplicated role, a header that never closes) and
salvages what the model evidently meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KNOWN_CHANNELS = ("analysis", "commentary", "final")
"""The channels gpt-oss is told about in its system message."""
UNKNOWN_CHANNEL = "analysis"
"""Where content goes when the model named no valid channel: hidden, never shown as an answer."""
_NO_RECIPIENT = frozenset({"assistant", "all", "user"})
"""Recipients that do not address a tool."""

_ROLE = re.compile(r"^\s*(?:assistant)+\s*")
_RECIPIENT = re.compile(r"\s*to=([^\s<]+)")
_CONSTRAIN = re.compile(r"\s*<\|constrain\|>\s*([A-Za-z0-9_.-]*)")
_CHANNEL = re.compile(r"<\|channel\|>\s*([A-Za-z_]*)")
_WORD = re.compile(r"^\s*([A-Za-z_]+)")
_SPECIAL = re.compile(r"<\|[a-z_0-9]+\|>")


@dataclass(frozen=True, slots=True)
class SalvagedHeader:
    """What could be read from a malformed header, plus any text that belongs to the content."""

    channel: str
    recipient: str | None
    content_type: str | None
    leftover: str
    """Text that followed the header words; it becomes the start of the message content."""


def salvage_header(text: str, fallback_channel: str) -> SalvagedHeader:
    """Read channel, recipient and content type from a header harmony refused.

    Args:
        text: the header as decoded text, special tokens spelled out, without ``<|start|>``.
        fallback_channel: the channel to use when the header names no channel at all (a bare
            reply such as a refusal); a ``<|channel|>`` marker with an empty or unknown value
            always yields :data:`UNKNOWN_CHANNEL`, so such text stays hidden.
    """
    text = text.replace("<|start|>", "")
    text = _ROLE.sub("", text, count=1)
    recipient = None
    if match := _RECIPIENT.search(text):
        recipient = match.group(1)
        text = text[: match.start()] + text[match.end() :]
    content_type = None
    if match := _CONSTRAIN.search(text):
        content_type = f"<|constrain|>{match.group(1)}" if match.group(1) else None
        text = text[: match.start()] + text[match.end() :]
    channel = fallback_channel
    if match := _CHANNEL.search(text):
        word = match.group(1)
        if word in KNOWN_CHANNELS:
            channel = word
            text = text[match.end() :]
        else:
            channel = UNKNOWN_CHANNEL
            text = text[match.end() - len(word) :]
    elif (match := _WORD.match(text)) and match.group(1) in KNOWN_CHANNELS:
        channel = match.group(1)
        text = text[match.end() :]
    if recipient in _NO_RECIPIENT:
        recipient = None
    leftover = _SPECIAL.sub("", text).strip()
    return SalvagedHeader(channel, recipient, content_type, leftover)


def tool_name(recipient: str, functions: frozenset[str]) -> str:
    """Normalise a tool-call recipient: a bare declared function name gains ``functions.``."""
    recipient = recipient.split("<|constrain|>", 1)[0].strip()
    if recipient in functions:
        return f"functions.{recipient}"
    return recipient


def addresses_tool(recipient: str | None) -> bool:
    """Return whether a recipient names a tool (not the assistant or everyone)."""
    return bool(recipient) and recipient not in _NO_RECIPIENT
