"""Running a turn for a request: collected whole, or streamed as Server-Sent Events.

A request holds its place on the model (the gate) and its handle (the pool) from the moment it
gets them until its worker thread has stopped, also when the client goes away mid-stream:
:class:`GatedResponse` cancels the turn and waits for the thread before it gives both back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from harmony_chat.server.chat_completions import ChatFormatter
from harmony_chat.server.errors import ApiError
from harmony_chat.server.generation import ServedEvent, TurnRun
from harmony_chat.server.responses_output import ResponseBuilder
from harmony_chat.server.turn_output import OutputEvent, TextAdded, TurnReader

DISCONNECT_POLL_S = 0.25
"""How often a non-streaming request checks whether its client is still there."""
SEP = "\r\n"
"""The line separator of the event streams (sse-starlette's)."""


class GatedResponse(Response):
    """A response that, however it ends, stops its turn and gives its place on the model back."""

    def __init__(self, inner: Response, run: TurnRun, release: Callable[[], None]) -> None:
        super().__init__(status_code=inner.status_code)
        self.inner = inner
        self.run = run
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the inner response; then stop the turn, wait for its thread, give its place back."""
        try:
            await self.inner(scope, receive, send)
        finally:
            self.run.cancel()  # a no-op when the turn is over; stops it when the client left
            await self.run.wait_ended()
            self.release()


async def first_event(run: TurnRun) -> tuple[list[ServedEvent], AsyncIterator[list[ServedEvent]]]:
    """Start the turn and wait for its first events, so a prompt that cannot run is an HTTP error.

    Returns the first batch of events and the iterator of the batches after it.

    Raises:
        ApiError: when the turn cannot start (the prompt does not fit, the model fails).
    """
    batches = run.batches()
    try:
        first = await anext(batches)
    except StopAsyncIteration:
        raise ApiError(500, "the model produced nothing") from None
    return first, batches


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


def sse_bytes(payloads: Iterable[dict[str, Any]], *, named: bool = False) -> bytes:
    """Server-sent events, one per payload, as the bytes sse-starlette would write for each.

    ``named`` gives each an ``event:`` line with the payload's ``type`` (the Responses API). JSON
    holds no line break, so each payload is one ``data:`` line.
    """
    parts: list[str] = []
    for payload in payloads:
        if named:
            parts.append(f"event: {payload['type']}{SEP}")
        parts.append(f"data: {_data(payload)}{SEP}{SEP}")
    return "".join(parts).encode("utf-8")


def merged(outputs: list[OutputEvent]) -> list[OutputEvent]:
    """``outputs`` with each run of text added to the same item joined into one (one chunk instead of several)."""
    joined: list[OutputEvent] = []
    for output in outputs:
        last = joined[-1] if joined else None
        if isinstance(output, TextAdded) and isinstance(last, TextAdded) and last.index == output.index:
            joined[-1] = TextAdded(last.index, last.part, last.text + output.text)
        else:
            joined.append(output)
    return joined


def _outputs(reader: TurnReader, batch: list[ServedEvent]) -> list[OutputEvent]:
    """What a batch of the turn's events makes, text runs joined."""
    return merged([output for event in batch for output in reader.feed(event)])


def chat_stream(
    first: list[ServedEvent],
    batches: AsyncIterator[list[ServedEvent]],
    reader: TurnReader,
    formatter: ChatFormatter,
) -> EventSourceResponse:
    """The ``chat.completion.chunk`` stream, ending with ``data: [DONE]``.

    Each batch of the turn's events is written at once (see :meth:`TurnRun.batches`), its text
    in one delta per item.
    """

    def encoded(batch: list[ServedEvent]) -> bytes:
        return sse_bytes(formatter.chunks(_outputs(reader, batch), reader))

    async def chunks() -> AsyncIterator[bytes]:
        yield sse_bytes([formatter.first_chunk()]) + encoded(first)
        async for batch in batches:
            data = encoded(batch)
            if data:
                yield data
        if reader.error is not None:
            failure = ApiError(500, f"the model failed: {reader.error}")
            yield sse_bytes([failure.body()])
        else:
            yield sse_bytes(formatter.last_chunks(reader))
        yield f"data: [DONE]{SEP}{SEP}".encode()

    return EventSourceResponse(chunks(), ping=15, sep=SEP)


def responses_stream(
    first: list[ServedEvent],
    batches: AsyncIterator[list[ServedEvent]],
    reader: TurnReader,
    builder: ResponseBuilder,
    on_done: Callable[[], None] | None,
) -> EventSourceResponse:
    """The Responses event stream (``event:`` names the type; every event has a ``sequence_number``).

    ``on_done`` is the store's work once the response ended (None: nothing to store).
    """

    def encoded(batch: list[ServedEvent]) -> bytes:
        return sse_bytes(builder.events(_outputs(reader, batch)), named=True)

    async def stream() -> AsyncIterator[bytes]:
        yield sse_bytes(builder.start_events(), named=True) + encoded(first)
        async for batch in batches:
            data = encoded(batch)
            if data:
                yield data
        yield sse_bytes(builder.end_events(reader), named=True)
        if on_done is not None:
            await run_in_threadpool(on_done)  # the store's work, off the event loop

    return EventSourceResponse(stream(), ping=15, sep=SEP)
