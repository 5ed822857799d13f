"""The resilient stream decoder: generated token ids in, typed channel events out.

One :class:`StreamDecoder` per generation. It wraps openai-harmony's ``StreamableParser`` but
keeps its own mirror of the parser state, so each token costs a constant amount of work (it never
polls ``state``, ``messages`` or ``current_content``, which re-serialise everything). Malformed
streams are repaired rather than raised: the parser only ever sees well-formed input, and every
repair is reported as a :class:`~harmony_chat.harmony.events.Recovery` event. A special token or
analysis text never ends up as answer text.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import Enum

from openai_harmony import HarmonyEncoding, HarmonyError, Message, Role, StreamableParser

from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import (
    ContentDelta,
    DecoderEvent,
    MessageFinished,
    MessageStarted,
    RawToken,
    Recovery,
    StopReason,
    ToolCall,
    TurnFinished,
)
from harmony_chat.harmony.header import addresses_tool, salvage_header, tool_name

MAX_HEADER_TOKENS = 64
"""A header longer than this never closes; the decoder salvages it as content."""

_TEXT_CACHE: dict[int, str] = {}


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
        self._parser = StreamableParser(encoding, Role.ASSISTANT, strict=True)
        self._state = _State.HEADER
        self._header: list[int] = []
        self._channel: str | None = None
        self._recipient: str | None = None
        self._content_type: str | None = None
        self._streamed: list[str] = []
        self._messages: list[Message] = []
        self._last_channel: str | None = None
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

    def feed(self, token: int) -> list[DecoderEvent]:
        """Decode one generated token and return the events it produces."""
        events: list[DecoderEvent] = []
        if self.finished is not None:
            return events
        if self._raw_tokens:
            events.append(RawToken(token, token_text(self._encoding, token), tk.is_special(token), self.channel))
        if not tk.is_valid(token) or tk.is_reserved(token) or token == tk.STARTOFTEXT:
            events.append(Recovery("unknown-token", f"dropped token {token_text(self._encoding, token)}"))
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
        if self._state is _State.CONTENT:
            truncated = reason is not StopReason.RETURN
            self._close_message(None, events, truncated=truncated)
        elif self._state is _State.HEADER and self._header:
            events.append(Recovery("partial-header", "discarded a header the stream cut off"))
        self._end_turn(reason, events, truncated=truncated)
        return events

    # -- per state -------------------------------------------------------------------------

    def _content_token(self, token: int, events: list[DecoderEvent]) -> None:
        if token in tk.MESSAGE_STOPS:
            self._close_message(token, events)
        elif token == tk.ENDOFTEXT:
            events.append(Recovery("endoftext", "<|endoftext|> ended the message"))
            self._close_message(None, events)
            self._end_turn(StopReason.RETURN, events)
        elif token == tk.START:
            events.append(Recovery("implicit-end", "a new message began without <|end|>"))
            self._close_message(tk.END, events)
            if self.finished is None:
                self._start_token(token, events)
        elif token == tk.CHANNEL:
            events.append(Recovery("implicit-end", "the channel switched without <|end|>"))
            self._close_message(tk.END, events)
            if self.finished is None:
                self._begin_header([tk.START, tk.ASSISTANT, tk.CHANNEL])
        elif tk.is_special(token):
            events.append(Recovery("stray-special", f"dropped {tk.special_name(token)} inside content"))
        else:
            self._parser.process(token)
            delta = self._parser.last_content_delta
            if delta:
                self._streamed.append(delta)
                events.append(ContentDelta(self._channel, delta, self._recipient))

    def _header_token(self, token: int, events: list[DecoderEvent]) -> None:
        if token == tk.MESSAGE:
            self._open_message(events)
        elif token == tk.START:
            events.append(Recovery("duplicate-start", "a header restarted with <|start|>"))
            self._begin_header([tk.START])
        elif token in tk.MESSAGE_STOPS:
            if self._header:
                events.append(Recovery("missing-message", "a header ended without <|message|>"))
                self._salvage(events)
                self._content_token(token, events)
            else:
                self._state = _State.EXPECT_START
                self._start_token(token, events)
        elif token == tk.ENDOFTEXT:
            if self._header:
                events.append(Recovery("partial-header", "discarded a header cut by <|endoftext|>"))
            self._end_turn(StopReason.RETURN, events)
        else:
            self._header.append(token)
            self._parser.process(token)
            if len(self._header) > self._max_header:
                events.append(Recovery("header-overflow", f"a header ran past {self._max_header} tokens"))
                self._salvage(events)

    def _start_token(self, token: int, events: list[DecoderEvent]) -> None:
        if token == tk.START:
            self._begin_header([tk.START])
        elif token == tk.RETURN or token == tk.CALL:
            events.append(Recovery("stray-stop", f"{tk.special_name(token)} after a finished message"))
            last = self._messages[-1] if self._messages else None
            is_call = token == tk.CALL and last is not None and addresses_tool(last.recipient)
            self._end_turn(StopReason.CALL if is_call else StopReason.RETURN, events)
        elif token == tk.ENDOFTEXT:
            self._end_turn(StopReason.RETURN, events)
        elif token == tk.CHANNEL:
            events.append(Recovery("missing-start", "a message began without <|start|>assistant"))
            self._begin_header([tk.START, tk.ASSISTANT, tk.CHANNEL])
        elif token == tk.ASSISTANT:
            events.append(Recovery("missing-start", "a message began without <|start|>"))
            self._begin_header([tk.START, tk.ASSISTANT])
        elif tk.is_special(token):
            events.append(Recovery("stray-special", f"dropped {tk.special_name(token)} between messages"))
        else:
            events.append(Recovery("missing-start", "text followed a message without a header"))
            self._begin_header([tk.START, tk.ASSISTANT, tk.CHANNEL])
            self._header_token(token, events)

    # -- message boundaries ------------------------------------------------------------------

    def _begin_header(self, prefix: list[int]) -> None:
        """Start a fresh message header, feeding ``prefix`` (which starts with ``<|start|>``)."""
        if self._state is not _State.EXPECT_START:
            self._parser = StreamableParser(self._encoding, None, strict=True)
        self._state = _State.HEADER
        self._header = list(prefix[1:])
        for token in prefix:
            self._parser.process(token)

    def _open_message(self, events: list[DecoderEvent]) -> None:
        try:
            self._parser.process(tk.MESSAGE)
        except HarmonyError as error:
            events.append(Recovery("bad-header", str(error)))
            self._salvage(events)
            return
        channel = self._parser.current_channel
        self._set_message(channel, self._parser.current_recipient, self._parser.current_content_type)
        events.append(MessageStarted(self._channel, self._recipient, self._content_type))

    def _salvage(self, events: list[DecoderEvent]) -> None:
        """Restart the parser inside a well-formed header rebuilt from the malformed one."""
        text = self._encoding.decode(self._header)
        salvaged = salvage_header(text, self._last_channel or "final")
        header = "assistant"
        if salvaged.recipient:
            header += f" to={salvaged.recipient}"
        header += f"<|channel|>{salvaged.channel}"
        if salvaged.content_type:
            header += f" {salvaged.content_type}"
        self._parser = StreamableParser(self._encoding, None, strict=True)
        rebuilt = self._encoding.encode(header, allowed_special={"<|channel|>", "<|constrain|>"})
        for token in [tk.START, *rebuilt, tk.MESSAGE]:
            self._parser.process(token)
        self._set_message(salvaged.channel, salvaged.recipient, salvaged.content_type)
        events.append(MessageStarted(self._channel, self._recipient, self._content_type))
        if salvaged.leftover:
            for token in self._encoding.encode(salvaged.leftover, disallowed_special=()):
                self._parser.process(token)
            self._streamed.append(salvaged.leftover)
            events.append(ContentDelta(self._channel, salvaged.leftover, self._recipient))

    def _set_message(self, channel: str | None, recipient: str | None, content_type: str | None) -> None:
        self._state = _State.CONTENT
        self._header = []
        self._channel = channel
        self._recipient = recipient
        self._content_type = content_type
        self._streamed = []

    def _close_message(self, end_token: int | None, events: list[DecoderEvent], truncated: bool = False) -> None:
        """Finish the current message with ``end_token`` (None: flush it as the stream ended)."""
        try:
            if end_token is None:
                self._parser.process_eos()
            else:
                self._parser.process(end_token)
            message = self._parser.messages[-1]
        except (HarmonyError, IndexError) as error:
            events.append(Recovery("rebuilt-message", str(error) or "parser lost the message"))
            message = self._build_message()
        streamed = "".join(self._streamed)
        full = "".join(getattr(part, "text", "") for part in message.content)
        if full != streamed and full.startswith(streamed):
            events.append(ContentDelta(self._channel, full[len(streamed) :], self._recipient))
        self._state = _State.EXPECT_START
        self._last_channel = self._channel
        is_tool_call = addresses_tool(self._recipient)
        if truncated and is_tool_call:
            events.append(Recovery("truncated-tool-call", "a tool call was cut off; it will not run"))
        else:
            self._messages.append(message)
        events.append(MessageFinished(message, end_token, truncated))
        if is_tool_call and not truncated:
            assert self._recipient is not None
            name = tool_name(self._recipient, self._functions)
            events.append(ToolCall(self._recipient, name, full, self._channel, self._content_type))
            self._end_turn(StopReason.CALL, events)
        elif end_token == tk.RETURN or end_token == tk.CALL:
            self._end_turn(StopReason.RETURN if end_token == tk.RETURN else StopReason.CALL, events)
        elif end_token == tk.END and self._channel == "final" and self._stop_on_final:
            self._end_turn(StopReason.FINAL, events)

    def _build_message(self) -> Message:
        message = Message.from_role_and_content(Role.ASSISTANT, "".join(self._streamed))
        if self._channel:
            message = message.with_channel(self._channel)
        if self._recipient:
            message = message.with_recipient(self._recipient)
        if self._content_type:
            message = message.with_content_type(self._content_type)
        return message

    def _end_turn(self, reason: StopReason, events: list[DecoderEvent], truncated: bool = False) -> None:
        if self.finished is None:
            self.finished = TurnFinished(reason, tuple(self._messages), truncated)
            events.append(self.finished)
