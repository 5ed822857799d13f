"""Typed events the stream decoder emits, one small frozen object each.

Consumers (the ``ask`` command, the TUI) pattern-match on these; they never see raw harmony
markup. Only ``ContentDelta`` on the ``final`` channel, and on ``commentary`` without a
recipient (a preamble), is meant for the user; ``analysis`` is raw chain of thought.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai_harmony import Message


class StopReason(StrEnum):
    """Why a turn ended."""

    RETURN = "return"
    """The model emitted ``<|return|>`` (or ``<|endoftext|>``): it is done."""
    CALL = "call"
    """The model emitted ``<|call|>``: a tool call waits to be executed."""
    FINAL = "final"
    """A ``final`` message completed with ``<|end|>`` and generation was ended there."""
    LENGTH = "length"
    """The token limit was reached mid-turn."""
    CANCELLED = "cancelled"
    """The user stopped generation."""
    ERROR = "error"
    """The backend failed."""


@dataclass(frozen=True, slots=True)
class MessageStarted:
    """A message header was read: content for this channel follows."""

    channel: str | None
    recipient: str | None
    content_type: str | None


@dataclass(frozen=True, slots=True)
class ContentDelta:
    """A piece of content text of the current message (complete UTF-8 only)."""

    channel: str | None
    text: str
    recipient: str | None = None


@dataclass(frozen=True, slots=True)
class MessageFinished:
    """A message is complete (or was cut off, when ``truncated``)."""

    message: Message
    end_token: int | None
    """The token that ended it (``<|end|>``, ``<|return|>``, ``<|call|>``), or None if cut off."""
    truncated: bool = False

    @property
    def channel(self) -> str | None:
        """The channel of the finished message."""
        channel: str | None = self.message.channel
        return channel

    @property
    def text(self) -> str:
        """The whole text content of the finished message."""
        return "".join(getattr(part, "text", "") for part in self.message.content)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asked for a tool; only emitted for complete (never truncated) calls."""

    recipient: str
    """The recipient exactly as the model wrote it, e.g. ``functions.get_weather``."""
    name: str
    """The normalised tool name: ``functions.X`` for a declared function, else the recipient."""
    arguments: str
    channel: str | None
    content_type: str | None


@dataclass(frozen=True, slots=True)
class RawToken:
    """One generated token, for inspectors and ``--raw``."""

    token_id: int
    text: str
    """Decoded text, with special tokens spelled out (``<|channel|>``)."""
    special: bool
    channel: str | None


@dataclass(frozen=True, slots=True)
class Recovery:
    """The decoder repaired a malformed stream; ``kind`` names the repair."""

    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The turn is over; ``messages`` are what goes into the history."""

    reason: StopReason
    messages: tuple[Message, ...]
    truncated: bool = False


DecoderEvent = MessageStarted | ContentDelta | MessageFinished | ToolCall | RawToken | Recovery | TurnFinished
"""Every event the decoder can emit."""
