"""Running a turn for a request: collected whole, or streamed as Server-Sent Events.

The model is held (the gate) from the moment a request gets it until its worker thread has
stopped, also when the client goes away mid-stream: :class:`GatedResponse` cancels the turn and
waits for the thread before it gives the model back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from harmony_chat.server.chat_completions import ChatFormatter
from harmony_chat.server.errors import ApiError
from harmony_chat.server.generation import ServedEvent, TurnRun
from harmony_chat.server.responses_output import ResponseBuilder
from harmony_chat.server.turn_output import TurnReader

DISCONNECT_POLL_S = 0.25
"""How often a non-streaming request checks whether its client is still there."""


class GatedResponse(Response):
    """A response that, however it ends, stops its turn and gives the model back."""

    def __init__(self, inner: Response, run: TurnRun, release: Callable[[], None]) -> None:
        super().__init__(status_code=inner.status_code)
        self.inner = inner
        self.run = run
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the inner response; then stop the turn, wait for its thread, release the model."""
        try:
            await self.inner(scope, receive, send)
        finally:
            self.run.cancel()  # a no-op when the turn is over; stops it when the client left
            await self.run.wait_ended()
            self.release()


async def first_event(run: TurnRun) -> tuple[ServedEvent, AsyncIterator[ServedEvent]]:
    """Start the turn and wait for its first event, so a prompt that cannot run is an HTTP error.

    Raises:
        ApiError: when the turn cannot start (the prompt does not fit, the model fails).
    """
    events = run.events()
    try:
        first = await anext(events)
    except StopAsyncIteration:
        raise ApiError(500, "the model produced nothing") from None
    return first, events


async def collect(run: TurnRun, consume: Callable[[ServedEvent], object], gone: Callable[[], Awaitable[bool]]) -> None:
    """Run the turn to its end, passing each event to ``consume``; cancel it if the client disconnects meanwhile."""

    async def watch() -> None:
        while True:
            await asyncio.sleep(DISCONNECT_POLL_S)
            if await gone():
                run.cancel()
                return

    watcher = asyncio.create_task(watch())
    try:
        async for event in run.events():
            consume(event)
    finally:
        watcher.cancel()


def _data(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def chat_stream(
    first: ServedEvent, events: AsyncIterator[ServedEvent], reader: TurnReader, formatter: ChatFormatter
) -> EventSourceResponse:
    """The ``chat.completion.chunk`` stream, ending with ``data: [DONE]``."""

    async def chunks() -> AsyncIterator[ServerSentEvent]:
        yield ServerSentEvent(_data(formatter.first_chunk()))
        for chunk in formatter.chunks(reader.feed(first)):
            yield ServerSentEvent(_data(chunk))
        async for event in events:
            for chunk in formatter.chunks(reader.feed(event)):
                yield ServerSentEvent(_data(chunk))
        if reader.error is not None:
            failure = ApiError(500, f"the model failed: {reader.error}")
            yield ServerSentEvent(_data(failure.body()))
        else:
            for chunk in formatter.last_chunks(reader):
                yield ServerSentEvent(_data(chunk))
        yield ServerSentEvent("[DONE]")

    return EventSourceResponse(chunks(), ping=15)


def responses_stream(
    first: ServedEvent,
    events: AsyncIterator[ServedEvent],
    reader: TurnReader,
    builder: ResponseBuilder,
    on_done: Callable[[], None],
) -> EventSourceResponse:
    """The Responses event stream (``event:`` names the type; every event has a ``sequence_number``)."""

    def sse(payloads: list[dict[str, Any]]) -> list[ServerSentEvent]:
        return [ServerSentEvent(_data(payload), event=payload["type"]) for payload in payloads]

    async def stream() -> AsyncIterator[ServerSentEvent]:
        for item in sse(builder.start_events()):
            yield item
        for item in sse(builder.events(reader.feed(first))):
            yield item
        async for event in events:
            for item in sse(builder.events(reader.feed(event))):
                yield item
        for item in sse(builder.end_events(reader)):
            yield item
        on_done()

    return EventSourceResponse(stream(), ping=15)
