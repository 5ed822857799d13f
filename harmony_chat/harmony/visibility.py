"""The one visibility policy: what the user sees, the history stores and the next prompt keeps.

For each kind of message the table below decides. Every place that shows, stores, exports or
re-sends messages asks this module (``ask``, the TUI, the history store and export, the session's
chain-of-thought rule). Raw chain of thought and everything that might be (headerless text,
unknown channels) is shown only in debug views (``--show-reasoning``, ``--raw``, the TUI's debug
mode), stored only when ``store_analysis`` is on, and dropped from prompts once its turn has an
answer. A reasoning summary is what summary mode shows instead: user-facing text the model wrote
about its reasoning in a separate generation, stored and searchable, never sent to the model again.

=================  ==========  =====================  ====================
kind               user sees   history stores         next prompt keeps
=================  ==========  =====================  ====================
final              answer      always                 always
constrained final  answer      always                 always
preamble           preamble    always                 always
tool call          tool row    always                 always
tool result        tool row    always                 always
analysis           debug only  with store_analysis    until the answer
headerless         debug only  with store_analysis    until the answer
unknown channel    debug only  with store_analysis    until the answer
user               user        always                 always
system             debug only  always                 always
summary            summary     always                 never
=================  ==========  =====================  ====================

The decoder never produces a summary (no channel is one): :func:`kind_of` cannot return it, so a
model writing on a channel named ``summary`` stays hidden like any unknown channel.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from harmony_chat.harmony.header import is_tool_recipient

if TYPE_CHECKING:
    from openai_harmony import Message

ReasoningMode = Literal["hidden", "summary", "raw"]
"""What the user sees of the reasoning: nothing, a model-written summary, or the raw chain of thought."""
REASONING_MODES: tuple[ReasoningMode, ...] = ("hidden", "summary", "raw")


class MessageKind(StrEnum):
    """What a message is, for the purpose of showing, storing and re-sending it."""

    FINAL = "final"
    CONSTRAINED_FINAL = "constrained final"
    """A final answer in a structured format (``<|constrain|>json``)."""
    PREAMBLE = "preamble"
    """Commentary to the user (no tool recipient), e.g. before tool calls."""
    TOOL_CALL = "tool call"
    TOOL_RESULT = "tool result"
    ANALYSIS = "analysis"
    HEADERLESS = "headerless"
    """Text the model wrote without a channel: not an answer, possibly reasoning."""
    UNKNOWN_CHANNEL = "unknown channel"
    USER = "user"
    SYSTEM = "system"
    SUMMARY = "summary"
    """A reasoning summary (summary mode): written for the user by a separate generation."""


class Display(StrEnum):
    """How a message reaches the user."""

    ANSWER = "answer"
    PREAMBLE = "preamble"
    TOOL = "tool"
    USER = "user"
    SUMMARY = "summary"
    """Above the answer, labelled as the model's account of its reasoning (summary mode only)."""
    DEBUG = "debug"
    """Only in debug views; never on stdout, in JSON text fields, copies or default exports."""


class Storage(StrEnum):
    """Whether the history keeps a message."""

    ALWAYS = "always"
    WITH_ANALYSIS = "with store_analysis"
    """Only when the user turned ``store_analysis`` on, and then flagged as analysis."""


class PromptKeep(StrEnum):
    """Whether later prompts still carry a message."""

    ALWAYS = "always"
    UNTIL_ANSWER = "until the answer"
    """Dropped from every prompt after its turn's final answer (or the next user message)."""
    NEVER = "never"
    """Never in a prompt (it is not part of the conversation)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """The policy for one kind of message."""

    display: Display
    storage: Storage
    prompt: PromptKeep


_HIDDEN = Rule(Display.DEBUG, Storage.WITH_ANALYSIS, PromptKeep.UNTIL_ANSWER)

POLICY = MappingProxyType(
    {
        MessageKind.FINAL: Rule(Display.ANSWER, Storage.ALWAYS, PromptKeep.ALWAYS),
        MessageKind.CONSTRAINED_FINAL: Rule(Display.ANSWER, Storage.ALWAYS, PromptKeep.ALWAYS),
        MessageKind.PREAMBLE: Rule(Display.PREAMBLE, Storage.ALWAYS, PromptKeep.ALWAYS),
        MessageKind.TOOL_CALL: Rule(Display.TOOL, Storage.ALWAYS, PromptKeep.ALWAYS),
        MessageKind.TOOL_RESULT: Rule(Display.TOOL, Storage.ALWAYS, PromptKeep.ALWAYS),
        MessageKind.ANALYSIS: _HIDDEN,
        MessageKind.HEADERLESS: _HIDDEN,
        MessageKind.UNKNOWN_CHANNEL: _HIDDEN,
        MessageKind.USER: Rule(Display.USER, Storage.ALWAYS, PromptKeep.ALWAYS),
        MessageKind.SYSTEM: Rule(Display.DEBUG, Storage.ALWAYS, PromptKeep.ALWAYS),
        MessageKind.SUMMARY: Rule(Display.SUMMARY, Storage.ALWAYS, PromptKeep.NEVER),
    }
)
"""The table: every :class:`MessageKind` has exactly one :class:`Rule`."""


def kind_of(
    channel: str | None, recipient: str | None, content_type: str | None = None, role: str = "assistant"
) -> MessageKind:
    """Classify a message (or a streaming event) by its role, channel, recipient and content type."""
    if role == "user":
        return MessageKind.USER
    if role == "tool":
        return MessageKind.TOOL_RESULT
    if role in ("system", "developer"):
        return MessageKind.SYSTEM
    if is_tool_recipient(recipient):
        return MessageKind.TOOL_CALL
    if channel == "final":
        constrained = bool(content_type) or "<|constrain|>" in (recipient or "")  # rows stored by older versions
        return MessageKind.CONSTRAINED_FINAL if constrained else MessageKind.FINAL
    if "<|" in (recipient or ""):  # a header cut by another one, stored before the decoder repaired it
        return MessageKind.HEADERLESS
    if channel == "commentary":
        return MessageKind.PREAMBLE
    if channel == "analysis":
        return MessageKind.ANALYSIS
    if channel is None:
        return MessageKind.HEADERLESS
    return MessageKind.UNKNOWN_CHANNEL


def message_kind(message: Message) -> MessageKind:
    """Classify a harmony message."""
    role = message.author.role
    return kind_of(message.channel, message.recipient, message.content_type, getattr(role, "value", str(role)))


def rule_of(message: Message) -> Rule:
    """The policy for a harmony message."""
    return POLICY[message_kind(message)]


def display_of(channel: str | None, recipient: str | None, content_type: str | None = None) -> Display:
    """How assistant content on ``channel`` to ``recipient`` reaches the user (for stream events)."""
    return POLICY[kind_of(channel, recipient, content_type)].display


def is_answer(message: Message) -> bool:
    """Whether a message is an answer the user sees as such (a final, constrained or not)."""
    return rule_of(message).display is Display.ANSWER


def shown_in_view(display: Display, debug: bool) -> bool:
    """Whether something shown as ``display`` appears in a view (``debug``: a debug view).

    Not :func:`harmony_chat.text_safety.visible`, which makes a text's control characters visible.
    """
    return debug or display is not Display.DEBUG
