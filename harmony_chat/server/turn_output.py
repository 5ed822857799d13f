"""A turn's events read as API output: items (reasoning, content, tool calls), text deltas, usage.

Both APIs consume the same :class:`TurnReader`: each harmony message becomes one output item
(a ``reasoning`` item, an assistant ``message`` or a ``function_call``), and the turn's end gives
a finish reason and token usage with the reasoning tokens counted. A reasoning summary (when the
request asks for them) belongs to the reasoning item it follows, as :class:`SummaryWritten`; the
log probabilities of content tokens (when asked for) come as :class:`TokenScored`.

Stop sequences (Chat Completions ``stop``) cut the answer, the ``final`` channel's text: never the
reasoning, a preamble or a tool call's arguments. Its text is held back while its tail could be
the start of one; once one is found the answer ends before it, the turn is cancelled
(:meth:`TurnReader.attach`), and nothing the turn makes after it is reported.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, assert_never

from harmony_chat.chat.events import ReasoningSummary, SummaryStarted
from harmony_chat.generation.turn import PromptReady, TurnStats
from harmony_chat.harmony.events import (
    ContentDelta,
    MessageFinished,
    MessageStarted,
    NoAnswer,
    RawToken,
    Recovery,
    StopReason,
    ToolCall,
    TurnFinished,
)
from harmony_chat.server.channels import Part, output_part
from harmony_chat.server.generation import ScoredToken
from harmony_chat.server.stop_sequences import StopMatcher

if TYPE_CHECKING:
    from harmony_chat.server.generation import ServedEvent, TurnRun

log = logging.getLogger("harmony_chat.server")
FUNCTIONS = "functions."
FINAL = "final"
"""The phase of the answer's content (a preamble's is ``commentary``)."""
"""The namespace of the functions a client declares (harmony's ``functions.x`` recipients)."""


def new_id(prefix: str, separator: str = "_") -> str:
    """A fresh id such as ``call_3f9a...`` (OpenAI's completions use ``chatcmpl-...``)."""
    return f"{prefix}{separator}{secrets.token_hex(12)}"


@dataclass(slots=True)
class Usage:
    """Token counts of one turn."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    """Generated tokens inside messages the app shows only in debug views (their content and closing token)."""
    summary_tokens: int = 0
    """Tokens the reasoning summaries generated (separate generations; counted in :attr:`output_tokens`)."""

    @property
    def output_tokens(self) -> int:
        """Every token generated for the request: the turn's and its summaries'."""
        return self.completion_tokens + self.summary_tokens

    @property
    def total_tokens(self) -> int:
        """Prompt and output together."""
        return self.prompt_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class ItemStarted:
    """An output item begins: reasoning or content (tool calls arrive whole, as :class:`CallMade`)."""

    index: int
    part: Part
    phase: str
    """``final`` for the answer, ``commentary`` for a preamble, ``analysis`` (or other) for reasoning."""


@dataclass(frozen=True, slots=True)
class TextAdded:
    """More text of the current item."""

    index: int
    part: Part
    text: str


@dataclass(frozen=True, slots=True)
class ItemDone:
    """An item is complete (``truncated`` when the turn ended inside it)."""

    index: int
    part: Part
    phase: str
    text: str
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class CallMade:
    """The model called a function; the client runs it."""

    index: int
    call_id: str
    name: str
    """The function's name without the ``functions.`` namespace."""
    arguments: str


@dataclass(frozen=True, slots=True)
class SummaryWritten:
    """A summary of the reasoning item at ``index`` (written after the item was done)."""

    index: int
    summary_index: int
    """Its place among that item's summaries (0 first)."""
    ordinal: int
    """Its place among the turn's summaries (0 first)."""
    text: str


@dataclass(frozen=True, slots=True)
class TokenScored:
    """The log probabilities of a token of the content item at ``index`` (before its text arrives)."""

    index: int
    token: ScoredToken


OutputEvent = ItemStarted | TextAdded | ItemDone | CallMade | SummaryWritten | TokenScored


@dataclass(slots=True)
class _Open:
    index: int
    part: Part
    phase: str
    chunks: list[str] = field(default_factory=list)
    matcher: StopMatcher | None = None
    """Holds back and cuts the text at the stop sequences (the answer's, when the request has any)."""


def function_name(recipient: str) -> str:
    """The client's name for a tool call's recipient (``functions.x`` is ``x``)."""
    return recipient.removeprefix(FUNCTIONS)


class TurnReader:
    """Turns a turn's events into :data:`OutputEvent` objects and keeps the totals.

    Args:
        functions: the names of the functions the request declared (``tool_choice: none`` declares
            none). A call to any other tool is left out like a malformed one: a client can only run
            the functions it declared (OpenAI's API never answers with a call to another), and
            frameworks fail on one (openai-agents raises, instructor and pydantic-ai retry).
        stops: the stop sequences that end the answer (Chat Completions ``stop``; each non-empty).
    """

    def __init__(self, functions: Collection[str] = (), stops: Sequence[str] = ()) -> None:
        self.functions = frozenset(functions)
        self.stops = tuple(stops)
        self.stopped = False
        """Whether a stop sequence ended the answer (the turn's output after it is left out)."""
        self._stop_turn: Callable[[], None] | None = None
        self.usage = Usage()
        self.items = 0
        self.reasoning: list[str] = []
        self.summaries: list[SummaryWritten] = []
        """The turn's reasoning summaries that have text (failed ones are left out)."""
        self.content: list[str] = []
        """Each content item's text (preambles and the answer), in order."""
        self.answers: list[str] = []
        """The text of each content item in the ``final`` channel (the answer without the preambles)."""
        self.preambles: set[int] = set()
        """The indices of the content items that are preambles (not in the ``final`` channel)."""
        self.calls: list[CallMade] = []
        """The calls reported (a malformed call, or one to a tool the request did not declare, is left out)."""
        self.scored: list[TokenScored] = []
        """The log probabilities of the content tokens (when the request asked for them), in order."""
        self.reason: StopReason | None = None
        self.error: str | None = None
        self._open: _Open | None = None
        self._last_reasoning: int | None = None

    def attach(self, run: TurnRun) -> None:
        """The turn this reader reads: it is stopped once a stop sequence ends the answer."""
        self._stop_turn = run.stop

    def feed(self, event: ServedEvent) -> list[OutputEvent]:
        """Read one event; return the output events it makes."""
        out: list[OutputEvent] = []
        if self.stopped and not isinstance(event, PromptReady | RawToken | TurnStats):
            return out  # the answer ended at a stop sequence: what the turn makes until it stops is not output
        match event:
            case RawToken():
                self._token(event)
            case ContentDelta():
                self._delta(out, event)
            case ScoredToken():
                self._scored(out, event)
            case MessageStarted():
                self._close(out, truncated=False)
                self._start(out, event.channel, event.recipient)
            case MessageFinished():
                self._close(out, truncated=event.truncated)
            case ToolCall():
                self._call(out, event)
            case PromptReady():
                self.usage.prompt_tokens = len(event.prompt.tokens)
            case TurnStats():
                self._finish(out, event)
            case ReasoningSummary():
                self._summary(out, event)
            case Recovery() | NoAnswer() | TurnFinished() | SummaryStarted():
                pass  # nothing of the API's output: the turn's end comes with its TurnStats
            case _:
                assert_never(event)
        return out

    def _token(self, token: RawToken) -> None:
        """Count a generated token that belongs to the reasoning."""
        if token.channel is not None and output_part(token.channel, token.recipient) is Part.REASONING:
            self.usage.reasoning_tokens += 1

    def _finish(self, out: list[OutputEvent], stats: TurnStats) -> None:
        """The turn ended: close the item it ended inside, keep why it ended and what it generated."""
        self._close(out, truncated=True)
        self.reason = stats.reason
        self.error = None if self.stopped else stats.error  # after a stop sequence the answer is whole
        self.usage.completion_tokens = stats.stats.generated_tokens
        self.usage.cached_tokens = stats.stats.prompt_tokens_reused

    def _scored(self, out: list[OutputEvent], token: ScoredToken) -> None:
        """Keep a token's log probabilities when it is content text (not reasoning, a header or a call)."""
        item = self._open
        if token.special or item is None or item.part is not Part.CONTENT:
            return
        scored = TokenScored(item.index, token)
        self.scored.append(scored)
        out.append(scored)

    def _summary(self, out: list[OutputEvent], event: ReasoningSummary) -> None:
        """A summary of the reasoning item just done: reported if it has text, counted either way."""
        self.usage.summary_tokens += event.stats.generated_tokens
        if event.text is None or self._last_reasoning is None:
            log.info("a reasoning summary is left out: %s", event.failure or "no reasoning item to summarise")
            return
        index = self._last_reasoning
        within = sum(1 for summary in self.summaries if summary.index == index)
        summary = SummaryWritten(index, within, len(self.summaries), event.text)
        self.summaries.append(summary)
        out.append(summary)

    def _call(self, out: list[OutputEvent], event: ToolCall) -> None:
        """Report a call the client can run: malformed ones are left out (the app never runs them either)."""
        if not event.runnable:
            return
        if not event.name.startswith(FUNCTIONS) or function_name(event.name) not in self.functions:
            log.warning("the model called %s, which the request did not declare; the call is left out", event.name)
            return
        arguments = event.arguments
        if event.repaired and event.parsed_arguments is not None:
            arguments = json.dumps(event.parsed_arguments, ensure_ascii=False)
        call = CallMade(self.items, new_id("call"), function_name(event.name), arguments)
        self.items += 1
        self.calls.append(call)
        out.append(call)

    def _start(self, out: list[OutputEvent], channel: str | None, recipient: str | None) -> None:
        self._last_reasoning = None  # a summary is only ever about the item right before it
        part = output_part(channel, recipient)
        if part is Part.TOOL_CALL:
            return  # the call is reported whole, once it is complete
        self._open = _Open(self.items, part, channel or "analysis")
        if part is Part.CONTENT and self._open.phase != FINAL:
            self.preambles.add(self.items)
        elif part is Part.CONTENT and self.stops:
            self._open.matcher = StopMatcher(self.stops)
        self.items += 1
        out.append(ItemStarted(self._open.index, part, self._open.phase))

    def _delta(self, out: list[OutputEvent], event: ContentDelta) -> None:
        part = output_part(event.channel, event.recipient)
        if part is Part.TOOL_CALL or not event.text:
            return
        if self._open is None or self._open.part is not part:
            self._close(out, truncated=False)
            self._start(out, event.channel, event.recipient)
        assert self._open is not None
        if self._open.matcher is None:
            self._add(out, self._open, event.text)
            return
        matched = self._open.matcher.feed(event.text)
        self._add(out, self._open, matched.text)
        if matched.stopped:
            self._close(out, truncated=False)

    def _add(self, out: list[OutputEvent], item: _Open, text: str) -> None:
        if text:
            item.chunks.append(text)
            out.append(TextAdded(item.index, item.part, text))

    def _close(self, out: list[OutputEvent], truncated: bool) -> None:
        item, self._open = self._open, None
        if item is None:
            return
        if item.matcher is not None:
            self._add(out, item, item.matcher.flush().text)  # the tail held back (nothing once it stopped)
            if item.matcher.stopped and not self.stopped:
                self._stop()
                truncated = False
        text = "".join(item.chunks)
        (self.reasoning if item.part is Part.REASONING else self.content).append(text)
        if item.part is Part.CONTENT and item.phase == FINAL:
            self.answers.append(text)
        if item.part is Part.REASONING:
            self._last_reasoning = item.index
        out.append(ItemDone(item.index, item.part, item.phase, text, truncated))

    def _stop(self) -> None:
        """A stop sequence ended the answer: the turn need go no further."""
        self.stopped = True
        if self._stop_turn is not None:
            self._stop_turn()

    @property
    def finish_reason(self) -> str:
        """``tool_calls``, ``length`` or ``stop`` (always ``stop`` once a stop sequence ended the answer)."""
        if self.stopped:
            return "stop"
        if self.calls and self.reason is StopReason.CALL:
            return "tool_calls"
        if self.reason is StopReason.LENGTH:
            return "length"
        return "stop"
