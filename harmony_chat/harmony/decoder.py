"""The resilient stream decoder: generated token ids in, typed channel events out.

One :class:`StreamDecoder` per generation. Headers are read by
:func:`~harmony_chat.harmony.header.read_header` (openai-harmony 0.0.8 misreads some that gpt-oss
really writes); message content goes through openai-harmony's ``StreamableParser``, opened with a
well-formed header for every message, so the parser only ever sees well-formed input and each
token costs a constant amount of work (it never polls ``state``, ``messages`` or
``current_content``, which re-serialise everything). Malformed streams are repaired rather than
raised, and every repair is reported as a :class:`~harmony_chat.harmony.events.Recovery` event.
A special token or analysis text never ends up as answer text; text without a header is kept
hidden and never ends the turn; a turn without an answer ends with a
:class:`~harmony_chat.harmony.events.NoAnswer` event.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import Enum

from openai_harmony import HarmonyEncoding, HarmonyError, Message, Role, StreamableParser

from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.arguments import check_arguments
from harmony_chat.harmony.events import (
    ContentDelta,
    DecoderEvent,
    MessageFinished,
    MessageStarted,
    NoAnswer,
    RawToken,
    Recovery,
    StopReason,
    ToolCall,
    TurnFinished,
)
from harmony_chat.harmony.header import Header, is_tool_recipient, read_header, tool_name
from harmony_chat.harmony.messages import message_text
from harmony_chat.harmony.visibility import is_answer

MAX_HEADER_TOKENS = 64
"""A header longer than this never closes; the decoder salvages it as content."""

_TEXT_CACHE: dict[int, str] = {}
_OPEN_CONTENT = "<|start|>assistant<|channel|>final<|message|>"
"""A well-formed header the content parser is opened with; the real header is read separately."""
_OPEN_TOKENS: dict[int, tuple[int, ...]] = {}
""":data:`_OPEN_CONTENT`'s tokens by encoding (encoding it costs as much as a whole message's content)."""


def _open_tokens(encoding: HarmonyEncoding) -> tuple[int, ...]:
    tokens = _OPEN_TOKENS.get(id(encoding))
    if tokens is None:
        tokens = _OPEN_TOKENS[id(encoding)] = tuple(encoding.encode(_OPEN_CONTENT, allowed_special="all"))
    return tokens


class _State(Enum):
    EXPECT_START = "expect-start"
    HEADER = "header"
    CONTENT = "content"


def token_text(encoding: HarmonyEncoding, token: int) -> str:
    """Return a token's text with special tokens spelled out (memoised; invalid ids too)."""
    text = _TEXT_CACHE.get(token)
    if text is None:
        if tk.is_special(token) or not tk.is_valid(token):
            text = tk.special_name(token) if tk.is_valid(token) else f"<|invalid_{token}|>"
        else:
            text = encoding.decode([token])
        _TEXT_CACHE[token] = text
    return text


class StreamDecoder:
    """Turns the token ids of one assistant completion into :mod:`events`.

    The prompt is expected to end with ``<|start|>assistant``, so decoding starts in a header.

    Args:
        encoding: the harmony encoding.
        functions: names of the declared function tools (to recognise bare recipients).
        stop_on_final: end the turn as soon as a ``final`` message completes with ``<|end|>``.
        raw_tokens: emit a :class:`RawToken` for every token.
        max_header_tokens: bound on header length before it is salvaged.
    """

    def __init__(
        self,
        encoding: HarmonyEncoding,
        *,
        functions: Collection[str] = (),
        stop_on_final: bool = True,
        raw_tokens: bool = True,
        max_header_tokens: int = MAX_HEADER_TOKENS,
    ) -> None:
        self._encoding = encoding
        self._functions = frozenset(functions)
        self._stop_on_final = stop_on_final
        self._raw_tokens = raw_tokens
        self._max_header = max_header_tokens
        self._open_content = _open_tokens(encoding)
        self._parser: StreamableParser | None = None
        """The content parser of the message being generated (one per message, opened by :meth:`_start_content`)."""
        self._state = _State.HEADER
        self._header: list[int] = []
        self._channel: str | None = None
        self._recipient: str | None = None
        self._content_type: str | None = None
        self._streamed: list[str] = []
        self._messages: list[Message] = []
        self._last_call: ToolCall | None = None
        self.finished: TurnFinished | None = None
        """The end of the turn, once reached; later tokens are ignored."""

    @property
    def messages(self) -> list[Message]:
        """The messages completed so far."""
        return list(self._messages)

    @property
    def channel(self) -> str | None:
        """The channel of the message being generated, if inside one."""
        return self._channel if self._state is _State.CONTENT else None

    @property
    def recipient(self) -> str | None:
        """The (tool) recipient of the message being generated, if inside one."""
        return self._recipient if self._state is _State.CONTENT else None

    def feed(self, token: int) -> list[DecoderEvent]:
        """Decode one generated token and return the events it produces."""
        events: list[DecoderEvent] = []
        if self.finished is not None:
            return events
        if self._raw_tokens:
            text = token_text(self._encoding, token)
            events.append(RawToken(token, text, tk.is_special(token), self.channel, self.recipient))
        if not tk.is_valid(token) or tk.is_reserved(token) or token == tk.STARTOFTEXT:
            events.append(Recovery("unknown-token", "dropped a token that is not in the vocabulary"))
        elif self._state is _State.CONTENT:
            self._content_token(token, events)
        elif self._state is _State.HEADER:
            self._header_token(token, events)
        else:
            self._start_token(token, events)
        return events

    def finish(self, reason: StopReason) -> list[DecoderEvent]:
        """End the turn from outside (token limit, cancellation, error, end of stream)."""
        events: list[DecoderEvent] = []
        if self.finished is not None:
            return events
        truncated = False
        if self._state is _State.HEADER and self._header:
            header = read_header(self._header_text(), closed=False)
            if header.channel is None and header.leftover:
                events.append(Recovery("missing-message", "the stream ended inside text without a header"))
                self._salvage(events)
            else:
                events.append(Recovery("partial-header", "discarded a header the stream cut off"))
        if self._state is _State.CONTENT:
            truncated = reason is not StopReason.RETURN
            self._close_message(None, events, truncated=truncated)
        self._end_turn(reason, events, truncated=truncated)
        return events

    # -- per state -------------------------------------------------------------------------

    def _content_token(self, token: int, events: list[DecoderEvent]) -> None:
        if token in tk.MESSAGE_STOPS:
            self._close_message(token, events)
        elif token == tk.ENDOFTEXT:
            events.append(Recovery("endoftext", "the end-of-text token ended the message"))
            self._close_message(None, events)
            self._end_turn(StopReason.RETURN, events)
        elif token == tk.START:
            events.append(Recovery("implicit-end", "a new message began without an end token"))
            self._close_message(tk.END, events)
            if self.finished is None:
                self._start_token(token, events)
        elif token == tk.CHANNEL:
            events.append(Recovery("implicit-end", "the channel switched without an end token"))
            self._close_message(tk.END, events)
            if self.finished is None:
                self._begin_header([tk.CHANNEL])
        elif tk.is_special(token):
            events.append(Recovery("stray-special", f"dropped a stray {_plain(token)} token inside content"))
        else:
            parser = self._parser
            assert parser is not None  # opened with the message's header
            parser.process(token)
            delta = parser.last_content_delta
            if delta:
                self._streamed.append(delta)
                events.append(ContentDelta(self._channel, delta, self._recipient))

    def _header_token(self, token: int, events: list[DecoderEvent]) -> None:
        if token == tk.MESSAGE:
            self._open_message(events)
        elif token == tk.START:
            if self._header and read_header(self._header_text(), closed=False).leftover:
                events.append(Recovery("missing-message", "text without a header was cut by a new message"))
                self._salvage(events)
                self._close_message(tk.END, events)
                if self.finished is None:
                    self._begin_header([])
            else:
                events.append(Recovery("duplicate-start", "a header restarted with a start token"))
                self._begin_header([])
        elif token == tk.CHANNEL and tk.CHANNEL in self._header:
            events.append(Recovery("restarted-header", "a header was cut by another channel token"))
            self._begin_header([tk.CHANNEL])
        elif token in tk.MESSAGE_STOPS:
            if self._header:
                events.append(Recovery("missing-message", "a header ended without its message token"))
                self._salvage(events)
                self._content_token(token, events)
            else:
                self._state = _State.EXPECT_START
                self._start_token(token, events)
        elif token == tk.ENDOFTEXT:
            if self._header:
                events.append(Recovery("partial-header", "discarded a header cut by the end-of-text token"))
            self._end_turn(StopReason.RETURN, events)
        else:
            self._header.append(token)
            if len(self._header) > self._max_header:
                events.append(Recovery("header-overflow", f"a header ran past {self._max_header} tokens"))
                self._salvage(events)

    def _start_token(self, token: int, events: list[DecoderEvent]) -> None:
        if token == tk.START:
            self._begin_header([])
        elif token == tk.RETURN or token == tk.CALL:
            events.append(Recovery("stray-stop", f"a stray {_plain(token)} token after a finished message"))
            last = self._messages[-1] if self._messages else None
            is_call = token == tk.CALL and last is not None and is_tool_recipient(last.recipient)
            self._end_turn(StopReason.CALL if is_call else StopReason.RETURN, events)
        elif token == tk.ENDOFTEXT:
            self._end_turn(StopReason.RETURN, events)
        elif token == tk.CHANNEL:
            events.append(Recovery("missing-start", "a message began without its start token"))
            self._begin_header([tk.CHANNEL])
        elif token == tk.ASSISTANT:
            events.append(Recovery("missing-start", "a message began without its start token"))
            self._begin_header([tk.ASSISTANT])
        elif tk.is_special(token):
            events.append(Recovery("stray-special", f"dropped a stray {_plain(token)} token between messages"))
        else:
            events.append(Recovery("missing-start", "text followed a message without a header"))
            self._begin_header([])
            self._header_token(token, events)

    # -- message boundaries ------------------------------------------------------------------

    def _begin_header(self, header: list[int]) -> None:
        """Start a fresh message header holding ``header`` (the tokens after ``<|start|>``)."""
        self._state = _State.HEADER
        self._header = list(header)

    def _header_text(self) -> str:
        return str(self._encoding.decode(self._header))

    def _open_message(self, events: list[DecoderEvent]) -> None:
        header = read_header(self._header_text(), closed=True)
        self._start_content(header, events)

    def _salvage(self, events: list[DecoderEvent]) -> None:
        """Open a message from a header that never closed; words it does not account for are content."""
        header = read_header(self._header_text(), closed=False)
        if header.channel is None:
            events.append(Recovery("headerless", "text without a header is kept hidden, like reasoning"))
        parser = self._start_content(header, events)
        if header.leftover:
            for token in self._encoding.encode(header.leftover, disallowed_special=()):
                parser.process(token)
            self._streamed.append(header.leftover)
            events.append(ContentDelta(self._channel, header.leftover, self._recipient))

    def _start_content(self, header: Header, events: list[DecoderEvent]) -> StreamableParser:
        """Report the header's repairs and open a well-formed content parser for its message (returned)."""
        events.extend(Recovery(kind, detail) for kind, detail in header.repairs)
        parser = self._parser = StreamableParser(self._encoding, None, strict=True)
        for token in self._open_content:
            parser.process(token)
        self._state = _State.CONTENT
        self._header = []
        self._channel = header.channel
        self._recipient = header.recipient
        self._content_type = header.content_type
        self._streamed = []
        events.append(MessageStarted(self._channel, self._recipient, self._content_type))
        return parser

    def _close_message(self, end_token: int | None, events: list[DecoderEvent], truncated: bool = False) -> None:
        """Finish the current message with ``end_token`` (None: flush it as the stream ended)."""
        streamed = "".join(self._streamed)
        try:
            parser = self._parser
            assert parser is not None  # opened with the message's header
            if end_token is None:
                parser.process_eos()
            else:
                parser.process(end_token)
            full = message_text(parser.messages[-1])
        except (HarmonyError, IndexError):
            events.append(Recovery("rebuilt-message", "rebuilt a message the parser lost from its streamed text"))
            full = streamed
        if full != streamed and full.startswith(streamed):
            events.append(ContentDelta(self._channel, full[len(streamed) :], self._recipient))
        message = self._build_message(full)
        self._state = _State.EXPECT_START
        is_tool_call = is_tool_recipient(self._recipient)
        if truncated and is_tool_call:
            events.append(Recovery("truncated-tool-call", "a tool call was cut off; it will not run"))
        else:
            self._messages.append(message)
        events.append(MessageFinished(message, end_token, truncated))
        if is_tool_call and not truncated:
            assert self._recipient is not None
            self._tool_call(full, events)
        elif end_token == tk.RETURN:
            self._end_turn(StopReason.RETURN, events)
        elif end_token == tk.CALL:
            events.append(Recovery("call-without-tool", "a message that addresses no tool ended with a call token"))
            self._end_turn(StopReason.RETURN, events)
        elif end_token == tk.END and self._channel == "final" and self._stop_on_final:
            self._end_turn(StopReason.FINAL, events)

    def _tool_call(self, arguments: str, events: list[DecoderEvent]) -> None:
        """Check a complete call's arguments, report it and end the turn for the tool."""
        assert self._recipient is not None
        name = tool_name(self._recipient, self._functions)
        checked = check_arguments(arguments, name, self._content_type)
        if checked.repaired:
            events.append(Recovery("repaired-arguments", f"completed the cut-off JSON arguments of {name}"))
        if checked.error is not None:
            events.append(Recovery("malformed-arguments", f"the call to {name} will not run: {checked.error}"))
        call = ToolCall(
            self._recipient,
            name,
            arguments,
            self._channel,
            self._content_type,
            checked.parsed,
            checked.repaired,
            checked.error,
        )
        self._last_call = call
        events.append(call)
        self._end_turn(StopReason.CALL, events)

    def _build_message(self, text: str) -> Message:
        message = Message.from_role_and_content(Role.ASSISTANT, text)
        if self._channel:
            message = message.with_channel(self._channel)
        if self._recipient:
            message = message.with_recipient(self._recipient)
        if self._content_type:
            message = message.with_content_type(self._content_type)
        return message

    def _end_turn(self, reason: StopReason, events: list[DecoderEvent], truncated: bool = False) -> None:
        if self.finished is not None:
            return
        if reason in (StopReason.RETURN, StopReason.CALL, StopReason.FINAL):
            answered = any(is_answer(m) and message_text(m).strip() for m in self._messages)
            waiting = reason is StopReason.CALL and self._last_call is not None and self._last_call.runnable
            if not answered and not waiting:
                refused = self._last_call is not None and not self._last_call.runnable
                detail = "the model gave no answer"
                events.append(NoAnswer(detail + ": its tool call was malformed and was not run" if refused else detail))
        self.finished = TurnFinished(reason, tuple(self._messages), truncated)
        events.append(self.finished)


def _plain(token: int) -> str:
    """A special token's name without markup, for notices (``<|end|>`` -> ``end``)."""
    return tk.special_name(token).strip("<|>") if tk.is_valid(token) else "unknown"
