"""Reading a message header as gpt-oss really writes it: channel, recipient, content type.

The decoder reads every header itself instead of trusting openai-harmony 0.0.8, which reports
``<|constrain|>json`` on a final message as the recipient, and whatever follows ``to=`` up to the
next space (``assistant<|channel|>analysis``) as a tool name. The rules:

* a recipient is a tool only when it is a clean tool name (``functions.x``, ``browser.x``,
  ``python``, ``namespace.x`` or a bare function name); ``assistant``, ``user``, ``all``, an empty
  name or anything holding markup is not;
* a bare channel name where a recipient would be (``assistant analysis``) is the channel;
* ``<|constrain|>X`` is always the content type, on any channel;
* a header that names no channel at all is *headerless* (channel None): never an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KNOWN_CHANNELS = ("analysis", "commentary", "final")
"""The channels gpt-oss is told about in its system message."""
UNKNOWN_CHANNEL = "analysis"
"""Where content goes when a ``<|channel|>`` marker names no channel: hidden, never an answer."""
NOT_TOOLS = frozenset({"assistant", "all", "user", "system", "developer"})
"""Recipients that do not address a tool."""

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*\Z")
_ROLE = re.compile(r"^\s*(?:assistant)+(?![A-Za-z0-9_])\s*")
_RECIPIENT = re.compile(r"\s*to=([^\s<]*)")
_CONSTRAIN = re.compile(r"\s*<\|constrain\|>\s*([A-Za-z0-9_.\-/+]*)")
_CHANNEL = re.compile(r"<\|channel\|>\s*([A-Za-z_]*)")
_WORD = re.compile(r"^\s*([A-Za-z_]+)(?![A-Za-z0-9_])")
_CONTENT_TYPE = re.compile(r"^\s*([A-Za-z0-9_.\-/+]+)\s*$")
_SPECIAL = re.compile(r"<\|[a-z_0-9]+\|>")


def is_tool_recipient(recipient: str | None) -> bool:
    """Return whether ``recipient`` is a clean tool name (never a role, a channel or markup)."""
    if not recipient or not _TOOL_NAME.match(recipient):
        return False
    return recipient not in NOT_TOOLS and recipient not in KNOWN_CHANNELS


@dataclass(frozen=True, slots=True)
class Header:
    """What a header says, plus any text that belongs to the content and the repairs made."""

    channel: str | None
    """None when no channel was named at all: headerless text, hidden like analysis."""
    recipient: str | None
    """A clean tool name, or None."""
    content_type: str | None
    leftover: str = ""
    """Text that followed the header words when the header never closed; it starts the content."""
    repairs: tuple[tuple[str, str], ...] = ()
    """(kind, detail) of each thing that was not well formed; plain words, no model text."""


def read_header(text: str, *, closed: bool = True) -> Header:
    """Read channel, recipient and content type from a header's text.

    Args:
        text: the header as decoded text, special tokens spelled out, without ``<|start|>``.
        closed: True when the header ended with ``<|message|>``; False when the stream cut it
            (a stop token, another header, an overflow): then words the header does not account
            for are content (``leftover``), and a header with no channel is headerless text.
    """
    repairs: list[tuple[str, str]] = []
    text = text.replace("<|start|>", "")
    if (role := _ROLE.match(text)) and role.group().count("assistant") > 1:
        repairs.append(("duplicate-role", "a header named its role twice"))
    text = _ROLE.sub("", text, count=1)
    found = _RECIPIENT.search(text)
    recipient = found.group(1) if found else None
    text = _RECIPIENT.sub(" ", text)
    content_type = None
    if constrain := _CONSTRAIN.search(text):
        content_type = f"<|constrain|>{constrain.group(1)}" if constrain.group(1) else None
    text = _CONSTRAIN.sub(" ", text)
    channel: str | None = None
    if match := _CHANNEL.search(text):
        word = match.group(1)
        if word in KNOWN_CHANNELS or (closed and word):
            channel, text = word, text[match.end() :]
        else:
            channel, text = UNKNOWN_CHANNEL, text[match.end() - len(word) :]
            kind = "unknown-channel" if word else "bad-header"
            repairs.append((kind, "a header named no known channel; its text is kept hidden"))
    elif (bare := _WORD.match(text)) and bare.group(1) in KNOWN_CHANNELS and (closed or not text[bare.end() :]):
        channel, text = bare.group(1), text[bare.end() :]
        repairs.append(("bare-channel", "a channel name came without its channel token"))
    if recipient is not None and recipient in KNOWN_CHANNELS:
        if channel is None:
            channel = recipient
            repairs.append(("channel-as-recipient", "a channel name stood where a recipient goes"))
        recipient = None
    elif recipient is not None and not is_tool_recipient(recipient):
        if recipient not in NOT_TOOLS:
            repairs.append(("not-a-tool", "ignored a recipient that is not a tool name"))
        recipient = None
    rest = _SPECIAL.sub(" ", text).strip()
    leftover = ""
    if closed:
        if content_type is None and (word_type := _CONTENT_TYPE.match(rest)):
            content_type = word_type.group(1)
        elif rest and content_type is None:
            repairs.append(("stray-header-words", "dropped stray words from a header"))
    else:
        leftover = rest
    return Header(channel, recipient, content_type, leftover, tuple(repairs))


def plain_content_type(content_type: str | None) -> str | None:
    """A content type without harmony's ``<|constrain|>`` marker (``<|constrain|>json`` -> ``json``)."""
    return content_type.replace("<|constrain|>", "").strip() or None if content_type else None


def tool_name(recipient: str, functions: frozenset[str]) -> str:
    """Normalise a tool-call recipient: a bare declared function name gains ``functions.``."""
    if recipient in functions:
        return f"functions.{recipient}"
    return recipient
