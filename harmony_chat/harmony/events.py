"""Typed events the stream decoder emits, one small frozen object each.

Consumers (the ``ask`` command, the TUI) pattern-match on these; they never see raw harmony
markup. What each kind of message shows the user is decided by
:mod:`~harmony_chat.harmony.visibility`, never by the consumers themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from harmony_chat.harmony.messages import message_text

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
        return message_text(self.message)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asked for a tool; only emitted for complete (never truncated) calls."""

    recipient: str
    """The recipient exactly as the model wrote it, e.g. ``functions.get_weather``."""
    name: str
    """The normalised tool name: ``functions.X`` for a declared function, else the recipient."""
    arguments: str
    """The arguments exactly as the model wrote them."""
    channel: str | None
    content_type: str | None
    parsed_arguments: Any = None
    """The arguments as JSON values (repaired when ``repaired``), for tools that take JSON."""
    repaired: bool = False
    """The JSON arguments were cut short and were completed (a Recovery event says so)."""
    error: str | None = None
    """Why the call is malformed; a malformed call is never executed (see ``runnable``)."""

    @property
    def runnable(self) -> bool:
        """Whether the call may be executed (its arguments are usable)."""
        return self.error is None


@dataclass(frozen=True, slots=True)
class RawToken:
    """One generated token, for inspectors and ``--raw``."""

    token_id: int
    text: str
    """Decoded text, with special tokens spelled out (``<|channel|>``)."""
    special: bool
    channel: str | None
    recipient: str | None = None


@dataclass(frozen=True, slots=True)
class Recovery:
    """The decoder repaired a malformed stream; ``kind`` names the repair."""

    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class NoAnswer:
    """The turn ended without an answer (only reasoning, or only a call that will not run)."""

    detail: str = "the model gave no answer"


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The turn is over; ``messages`` are what goes into the history."""

    reason: StopReason
    messages: tuple[Message, ...]
    truncated: bool = False


DecoderEvent = (
    MessageStarted | ContentDelta | MessageFinished | ToolCall | RawToken | Recovery | NoAnswer | TurnFinished
)
"""Every event the decoder can emit."""
