"""Chat Completions output: the completion object and its stream of chunks.

Reasoning travels as OpenRouter does it (the raw-CoT guide's rule): ``message.reasoning`` and
``delta.reasoning``, left out when the request says ``reasoning: {exclude: true}``. Preambles and
the answer are ``content``; two content (or reasoning) messages of one turn are joined by a blank line.

Reasoning summaries, when the request asks with ``reasoning: {summary: auto|concise|detailed}``,
follow OpenRouter's convention too: ``reasoning_details`` entries of type ``reasoning.summary`` on
the message, and on the delta that carries each summary (one delta per summary, sent whole once
written; ``index`` tells the summaries apart). They come whatever ``exclude`` says: ``exclude``
governs the raw chain of thought only.

With a response format (``json_object`` or ``json_schema``) ``content`` is the answer alone, the JSON
the grammar held to the format, so it parses: preambles are left out of it (the Responses API keeps
them, as ``commentary`` messages).

Log probabilities (``logprobs: true``) cover the content tokens (preambles and the answer, not the
reasoning or tool calls), as ``choices[0].logprobs.content``; streamed, each chunk carries those of
the tokens whose text it brings (a token that is part of a character waits for the rest).
"""

from __future__ import annotations

import time
from typing import Any

from harmony_chat.server.channels import Part
from harmony_chat.server.generation import ScoredToken
from harmony_chat.server.turn_output import (
    CallMade,
    OutputEvent,
    SummaryWritten,
    TextAdded,
    TokenScored,
    TurnReader,
    Usage,
    new_id,
)

CONTENT_SEPARATOR = "\n\n"
"""Between a preamble and the next content message of the same turn (and between reasoning messages)."""
SUMMARY_FORMAT = "unknown"
"""``reasoning_details[].format``: OpenRouter's value for reasoning in no provider's own format."""


def usage_object(usage: Usage, summaries: bool = False) -> dict[str, Any]:
    """``usage`` as Chat Completions reports it, reasoning tokens (and, when asked for, summary tokens) included."""
    details: dict[str, int] = {"reasoning_tokens": usage.reasoning_tokens}
    if summaries:
        details["summary_tokens"] = usage.summary_tokens
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": details,
    }


def summary_detail(summary: SummaryWritten) -> dict[str, Any]:
    """A summary as a ``reasoning_details`` entry (OpenRouter's ``reasoning.summary`` type)."""
    return {"type": "reasoning.summary", "summary": summary.text, "format": SUMMARY_FORMAT, "index": summary.ordinal}


def logprob_object(token: ScoredToken) -> dict[str, Any]:
    """A token's log probabilities as OpenAI reports them (``bytes`` for text that is part of a character)."""
    return {
        "token": token.text,
        "logprob": token.logprob,
        "bytes": list(token.raw),
        "top_logprobs": [{"token": text, "logprob": logprob, "bytes": list(raw)} for text, raw, logprob in token.top],
    }


def tool_call_object(call: CallMade) -> dict[str, Any]:
    """A tool call as an assistant message carries it."""
    return {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


class ChatFormatter:
    """Builds one request's completion (or chunks) from a :class:`TurnReader`.

    Args:
        model: the model name to report.
        exclude_reasoning: leave the raw reasoning out.
        include_usage: send a last chunk with the usage (``stream_options.include_usage``).
        summaries: the request asked for reasoning summaries (``reasoning_details``).
        logprobs: the request asked for the content tokens' log probabilities.
        answer_only: the request has a response format: ``content`` is the answer without the preambles.
    """

    def __init__(
        self,
        model: str,
        *,
        exclude_reasoning: bool,
        include_usage: bool = False,
        summaries: bool = False,
        logprobs: bool = False,
        answer_only: bool = False,
    ) -> None:
        self.model = model
        self.answer_only = answer_only
        self.exclude_reasoning = exclude_reasoning
        self.include_usage = include_usage
        self.summaries = summaries
        self.logprobs = logprobs
        self._scored: list[dict[str, Any]] = []
        """Log probabilities of tokens whose text has not been sent yet."""
        self.id = new_id("chatcmpl", "-")
        self.created = int(time.time())
        self._last_item: dict[Part, int] = {}
        self._calls = 0

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        logprobs = None
        if self._scored and ("content" in delta or finish_reason is not None):
            logprobs = {"content": self._scored, "refusal": None}
            self._scored = []
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": logprobs}],
        }

    def first_chunk(self) -> dict[str, Any]:
        """The chunk that opens the assistant message."""
        return self._chunk({"role": "assistant", "content": ""})

    def _left_out(self, reader: TurnReader, index: int) -> bool:
        """Whether the content item at ``index`` stays out of ``content`` (a preamble, with ``answer_only``)."""
        return self.answer_only and index in reader.preambles

    def chunks(self, events: list[OutputEvent], reader: TurnReader) -> list[dict[str, Any]]:
        """The chunks for some output events (``reader`` has read them)."""
        out: list[dict[str, Any]] = []
        for event in events:
            if isinstance(event, TextAdded | TokenScored) and self._left_out(reader, event.index):
                continue
            if isinstance(event, TextAdded):
                field = "content" if event.part is Part.CONTENT else "reasoning"
                if field == "reasoning" and self.exclude_reasoning:
                    continue
                last = self._last_item.get(event.part)
                self._last_item[event.part] = event.index
                separator = CONTENT_SEPARATOR if last is not None and last != event.index else ""
                out.append(self._chunk({field: separator + event.text}))
            elif isinstance(event, SummaryWritten):
                if self.summaries:
                    out.append(self._chunk({"reasoning_details": [summary_detail(event)]}))
            elif isinstance(event, CallMade):
                call = {"index": self._calls, **tool_call_object(event)}
                self._calls += 1
                out.append(self._chunk({"tool_calls": [call]}))
            elif isinstance(event, TokenScored) and self.logprobs:
                self._scored.append(logprob_object(event.token))  # sent with the text it makes
        return out

    def last_chunks(self, reader: TurnReader) -> list[dict[str, Any]]:
        """The chunk with the finish reason, then the usage chunk if asked for."""
        out = [self._chunk({}, reader.finish_reason)]
        if self.include_usage:
            out.append({**self._chunk({}), "choices": [], "usage": usage_object(reader.usage, self.summaries)})
        return out

    def completion(self, reader: TurnReader) -> dict[str, Any]:
        """The whole ``chat.completion`` object of a finished turn."""
        content = CONTENT_SEPARATOR.join(
            text for text in (reader.answers if self.answer_only else reader.content) if text
        )
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if not self.exclude_reasoning:
            message["reasoning"] = CONTENT_SEPARATOR.join(text for text in reader.reasoning if text) or None
        if self.summaries:
            message["reasoning_details"] = [summary_detail(summary) for summary in reader.summaries]
        if reader.calls:
            message["tool_calls"] = [tool_call_object(call) for call in reader.calls]
        logprobs = None
        if self.logprobs:
            scored = [token for token in reader.scored if not self._left_out(reader, token.index)]
            logprobs = {"content": [logprob_object(token.token) for token in scored], "refusal": None}
        choice = {"index": 0, "message": message, "finish_reason": reader.finish_reason, "logprobs": logprobs}
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [choice],
            "usage": usage_object(reader.usage, self.summaries),
        }
