"""Responses API output: the response object, its output items, and the streamed events.

Reasoning is a ``reasoning`` item whose ``content`` holds one ``reasoning_text`` part, streamed
as ``response.reasoning_text.delta`` and ``.done`` (the raw-CoT guide's extension). When the
request asks for ``reasoning.summary``, the item's ``summary`` gets a ``summary_text`` part
written by the model once the reasoning is done, streamed as OpenAI streams one:
``response.reasoning_summary_part.added``, ``response.reasoning_summary_text.delta`` (the whole
summary in one delta), ``.done``, ``response.reasoning_summary_part.done``; the item's
``response.output_item.done`` waits for it. Preambles are assistant messages with ``phase:
commentary``, the answer one with ``phase: final_answer``. Every event carries a
``sequence_number`` counting from 0. With ``include: ["message.output_text.logprobs"]`` (or
``top_logprobs``) each ``output_text`` part and text event carries its tokens' ``logprobs``.

With ``include: ["reasoning.encrypted_content"]`` a reasoning item carries its text sealed in
``encrypted_content`` (:mod:`~harmony_chat.server.reasoning_seal`) and nowhere in plain text: it has
no ``content``, and its stream is ``response.output_item.added``, the summary's events if one was
asked for, and ``response.output_item.done`` with the blob (no content part, no
``reasoning_text`` events). The text stays with the builder for the store (:meth:`ResponseBuilder.as_input`).
"""

from __future__ import annotations

import time
from typing import Any

from harmony_chat.server.channels import Part
from harmony_chat.server.chat_completions import logprob_object
from harmony_chat.server.reasoning_seal import ReasoningSeal
from harmony_chat.server.responses_request import Item, ResponsesRequest, output_as_input
from harmony_chat.server.turn_output import (
    CallMade,
    ItemDone,
    ItemStarted,
    OutputEvent,
    SummaryWritten,
    TextAdded,
    TokenScored,
    TurnReader,
    new_id,
)

Event = dict[str, Any]


def usage_object(reader: TurnReader) -> dict[str, Any]:
    """``usage`` as the Responses API reports it, reasoning tokens included."""
    usage = reader.usage
    return {
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens, "summary_tokens": usage.summary_tokens},
        "total_tokens": usage.total_tokens,
    }


def _part(part: Part, text: str, logprobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if part is Part.REASONING:
        return {"type": "reasoning_text", "text": text}
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": logprobs or []}


class ResponseBuilder:
    """Builds one request's response object and, when streaming, its events.

    Args:
        request: the request (echoed settings).
        model: the model name to report.
        seal: the server's reasoning seal; used when the request asks for sealed reasoning.
    """

    def __init__(self, request: ResponsesRequest, model: str, seal: ReasoningSeal | None = None) -> None:
        self.request = request
        self.model = model
        if request.seals_reasoning and seal is None:
            raise ValueError("the request asks for sealed reasoning: a seal is needed")
        self.seal = seal if request.seals_reasoning else None
        """What seals reasoning items (None: their text goes out in ``content``)."""
        self._sealed_texts: dict[str, str] = {}
        """The text of each sealed reasoning item, by id (for the store, never sent)."""
        self.logprobs = request.logprobs_asked
        """Whether output text carries its tokens' log probabilities."""
        self._item_logprobs: dict[int, list[dict[str, Any]]] = {}
        self._unsent_logprobs: list[dict[str, Any]] = []
        self.id = new_id("resp")
        self.created_at = int(time.time())
        self.output: list[dict[str, Any]] = []
        self.summary = request.reasoning.summary_asked if request.reasoning else None
        """The summary the request asked for (None: none)."""
        self._ids: dict[int, str] = {}
        self._sequence = 0
        self._held_done: Event | None = None
        """A reasoning item's ``output_item.done``, held until its summary is written."""

    # -- the response object ---------------------------------------------------------------------

    def response(self, status: str, reader: TurnReader | None = None) -> dict[str, Any]:
        """The response object with the output so far."""
        request = self.request
        fmt = request.text.format if request.text and request.text.format else None
        text_format: dict[str, Any] = {"type": "text"}
        if fmt is not None and fmt.type != "text":
            text_format = {"type": fmt.type, "name": fmt.name, "schema": fmt.schema_, "strict": fmt.strict}
        incomplete = None
        if status == "incomplete":
            incomplete = {"reason": "max_output_tokens"}
        error = None
        if status == "failed" and reader is not None:
            error = {"code": "server_error", "message": reader.error or "the model failed"}
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.model,
            "output": [dict(item) for item in self.output],
            "instructions": request.instructions,
            "reasoning": {"effort": request.reasoning.effort if request.reasoning else None, "summary": self.summary},
            "tools": [tool.model_dump(exclude_none=True) for tool in request.tools or []],
            "tool_choice": request.tool_choice or "auto",
            "parallel_tool_calls": False,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_output_tokens": request.max_output_tokens,
            "previous_response_id": request.previous_response_id,
            "conversation": {"id": request.conversation_id} if request.conversation_id is not None else None,
            "store": request.store,
            "text": {"format": text_format},
            "metadata": request.metadata or {},
            "usage": usage_object(reader) if reader is not None and status != "in_progress" else None,
            "error": error,
            "incomplete_details": incomplete,
        }

    def as_input(self) -> list[Item]:
        """The output so far as canonical input items (sealed reasoning with its text), for the store."""
        return output_as_input(self.output, self._sealed_texts)

    @staticmethod
    def status_of(reader: TurnReader) -> str:
        """``completed``, ``incomplete`` (the token limit) or ``failed``."""
        if reader.error is not None:
            return "failed"
        return "incomplete" if reader.finish_reason == "length" else "completed"

    # -- events ----------------------------------------------------------------------------------

    def _event(self, kind: str, **fields: Any) -> Event:
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event

    def start_events(self) -> list[Event]:
        """``response.created`` and ``response.in_progress``."""
        snapshot = self.response("in_progress")
        return [
            self._event("response.created", response=snapshot),
            self._event("response.in_progress", response=snapshot),
        ]

    def end_events(self, reader: TurnReader) -> list[Event]:
        """``response.completed``, ``response.incomplete`` or ``response.failed`` (after a held item's done)."""
        status = self.status_of(reader)
        kind = {"completed": "response.completed", "incomplete": "response.incomplete"}.get(status, "response.failed")
        return [*self._release(), self._event(kind, response=self.response(status, reader))]

    def events(self, out: list[OutputEvent]) -> list[Event]:
        """Record output events in :attr:`output` and return the stream events for them."""
        events: list[Event] = []
        for event in out:
            if isinstance(event, SummaryWritten):
                events.extend(self._summary(event))
                continue
            events.extend(self._release())
            if isinstance(event, ItemStarted):
                events.extend(self._item_started(event))
            elif isinstance(event, TokenScored):
                if self.logprobs:
                    scored = logprob_object(event.token)
                    self._item_logprobs.setdefault(event.index, []).append(scored)
                    self._unsent_logprobs.append(scored)
            elif isinstance(event, TextAdded):
                if self.seal is not None and event.part is Part.REASONING:
                    continue  # sealed: the text goes out in the item's done event only, encrypted
                kind = "response.reasoning_text.delta" if event.part is Part.REASONING else "response.output_text.delta"
                extra: dict[str, Any] = {}
                if event.part is not Part.REASONING:
                    extra["logprobs"], self._unsent_logprobs = self._unsent_logprobs, []
                item_id = self._ids[event.index]
                events.append(
                    self._event(
                        kind, item_id=item_id, output_index=event.index, content_index=0, delta=event.text, **extra
                    )
                )
            elif isinstance(event, ItemDone):
                events.extend(self._item_done(event))
            else:
                events.extend(self._call(event))
        return events

    def _item_started(self, event: ItemStarted) -> list[Event]:
        reasoning = event.part is Part.REASONING
        item_id = new_id("rs" if reasoning else "msg")
        self._ids[event.index] = item_id
        item: dict[str, Any]
        if reasoning and self.seal is not None:
            item = {"id": item_id, "type": "reasoning", "summary": [], "encrypted_content": None}
            item["status"] = "in_progress"
            self.output.append(item)
            return [self._event("response.output_item.added", output_index=event.index, item=dict(item))]
        if reasoning:
            item = {"id": item_id, "type": "reasoning", "summary": [], "content": [], "status": "in_progress"}
        else:
            phase = "commentary" if event.phase == "commentary" else "final_answer"
            item = {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}
            item["phase"] = phase
        self.output.append(item)
        where = {"item_id": item_id, "output_index": event.index}
        return [
            self._event("response.output_item.added", output_index=event.index, item=dict(item)),
            self._event("response.content_part.added", **where, content_index=0, part=_part(event.part, "")),
        ]

    def _item_done(self, event: ItemDone) -> list[Event]:
        item_id = self._ids[event.index]
        item = next(entry for entry in self.output if entry["id"] == item_id)
        if self.seal is not None and event.part is Part.REASONING:
            return self._sealed_done(event, item)
        logprobs = self._item_logprobs.pop(event.index, [])
        self._unsent_logprobs = []
        part = _part(event.part, event.text, logprobs)
        item["content"] = [part]
        item["status"] = "incomplete" if event.truncated else "completed"
        where = {"item_id": item_id, "output_index": event.index, "content_index": 0}
        kind = "response.reasoning_text.done" if event.part is Part.REASONING else "response.output_text.done"
        extra: dict[str, Any] = {} if event.part is Part.REASONING else {"logprobs": logprobs}
        events = [
            self._event(kind, **where, text=event.text, **extra),
            self._event("response.content_part.done", **where, part=part),
        ]
        if self.summary and event.part is Part.REASONING:
            self._held_done = {"output_index": event.index, "item": item}  # numbered when it is sent
            return events
        return [*events, self._event("response.output_item.done", output_index=event.index, item=dict(item))]

    def _sealed_done(self, event: ItemDone, item: dict[str, Any]) -> list[Event]:
        """A sealed reasoning item is done: its blob, and its ``output_item.done`` (or held for a summary)."""
        assert self.seal is not None
        self._sealed_texts[item["id"]] = event.text
        item["encrypted_content"] = self.seal.seal(event.text)
        item["status"] = "incomplete" if event.truncated else "completed"
        if self.summary:
            self._held_done = {"output_index": event.index, "item": item}  # numbered when it is sent
            return []
        return [self._event("response.output_item.done", output_index=event.index, item=dict(item))]

    def _release(self) -> list[Event]:
        """The held ``output_item.done`` (no summary is coming for its item any more)."""
        held, self._held_done = self._held_done, None
        if held is None:
            return []
        return [self._event("response.output_item.done", output_index=held["output_index"], item=dict(held["item"]))]

    def _summary(self, event: SummaryWritten) -> list[Event]:
        """A summary part of a reasoning item, then the item's held ``output_item.done``."""
        item_id = self._ids[event.index]
        item = next(entry for entry in self.output if entry["id"] == item_id)
        part = {"type": "summary_text", "text": event.text}
        item["summary"] = [*item["summary"], part]
        where = {"item_id": item_id, "output_index": event.index, "summary_index": event.summary_index}
        events = [
            self._event("response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""}),
            self._event("response.reasoning_summary_text.delta", **where, delta=event.text),
            self._event("response.reasoning_summary_text.done", **where, text=event.text),
            self._event("response.reasoning_summary_part.done", **where, part=dict(part)),
        ]
        if self._held_done is not None and self._held_done["output_index"] == event.index:
            events.extend(self._release())
        return events

    def _call(self, event: CallMade) -> list[Event]:
        item_id = new_id("fc")
        self._ids[event.index] = item_id
        item = {
            "id": item_id,
            "type": "function_call",
            "call_id": event.call_id,
            "name": event.name,
            "arguments": event.arguments,
            "status": "completed",
        }
        self.output.append(item)
        where = {"item_id": item_id, "output_index": event.index}
        return [
            self._event(
                "response.output_item.added",
                output_index=event.index,
                item={**item, "arguments": "", "status": "in_progress"},
            ),
            self._event("response.function_call_arguments.delta", **where, delta=event.arguments),
            self._event("response.function_call_arguments.done", **where, name=event.name, arguments=event.arguments),
            self._event("response.output_item.done", output_index=event.index, item=dict(item)),
        ]
