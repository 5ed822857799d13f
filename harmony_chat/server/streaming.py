"""Running a turn for a request: collected whole, or streamed as Server-Sent Events.

A request holds its place on the model (the gate) and its handle (the pool) from the moment it
gets them until its worker thread has stopped, also when the client goes away mid-stream:
:class:`GatedResponse` cancels the turn and waits for the thread before it gives both back.

:class:`EventStream` sends the events on Starlette's streaming response, the way vLLM's own
server does, with one watcher task per stream for the client leaving and for keep-alive comments.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from harmony_chat.server.chat_completions import ChatFormatter
from harmony_chat.server.errors import ApiError
from harmony_chat.server.generation import ServedEvent, TurnRun
from harmony_chat.server.responses_output import ResponseBuilder
from harmony_chat.server.turn_output import OutputEvent, TextAdded, TurnReader

DISCONNECT_POLL_S = 0.25
"""How often a non-streaming request checks whether its client is still there."""
SEP = "\r\n"
"""The line separator of the event streams."""
PING_S = 15.0
"""Seconds of silence after which a stream sends a comment line, so that proxies keep it open."""
PING = f": ping{SEP}{SEP}".encode()
"""The keep-alive comment (clients skip lines that start with a colon)."""


class EventStream(StreamingResponse):
    """A ``text/event-stream`` response of the encoded ``chunks``, each sent as it comes.

    One watcher task per stream waits for the client to leave: then the stream stops at once (also
    while the chunks are silent), as if its chunks had ended, and the chunks are closed. After
    :data:`PING_S` without a chunk it sends :data:`PING`. :meth:`cut` stops it the same way from
    outside (the server is shutting down), its response left unfinished so the client sees the cut.
    """

    def __init__(self, chunks: AsyncGenerator[bytes, None], *, ping_s: float = PING_S) -> None:
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        super().__init__(chunks, media_type="text/event-stream", headers=headers)
        self.chunks = chunks
        self.ping_s = ping_s
        self._quiet_since = 0.0
        self._ended = False
        self._stopped = False
        """Set when the client left or the stream was cut: the stream task's cancel is its end."""
        self._streaming: asyncio.Task[Any] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the headers, then every chunk until the chunks end or the client leaves."""
        loop = asyncio.get_running_loop()
        streaming = self._streaming = asyncio.current_task()
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        self._quiet_since = loop.time()
        watcher = loop.create_task(self._watch(receive, send))
        try:
            async for chunk in self.chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self._quiet_since = loop.time()
            self._ended = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            # the cancel of a client that left or of a cut is the stream's end; any other is passed on
            if not (self._stopped and streaming is not None and streaming.uncancel() == 0):
                raise
        finally:
            self._ended = True
            self._streaming = None
            watcher.cancel()
            await self.chunks.aclose()

    def cut(self) -> None:
        """Stop the stream now, leaving its response unfinished (a no-op once it has ended)."""
        if not self._ended and not self._stopped and self._streaming is not None:
            self._stopped = True
            self._streaming.cancel()

    async def _watch(self, receive: Receive, send: Send) -> None:
        """Until cancelled: stop the stream when the client leaves; send :data:`PING` after a silence."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                async with asyncio.timeout_at(self._quiet_since + self.ping_s):
                    message = await receive()
            except TimeoutError:
                if not self._ended and loop.time() >= self._quiet_since + self.ping_s:
                    self._quiet_since = loop.time()
                    await send({"type": "http.response.body", "body": PING, "more_body": True})
                continue
            if message["type"] == "http.disconnect":
                self.cut()
                return


class OpenStreams:
    """The event streams a server is sending, so that a shutdown can cut them all at once."""

    def __init__(self) -> None:
        self.streams: set[EventStream] = set()

    def cut_all(self) -> None:
        """Cut every open stream (see :meth:`EventStream.cut`)."""
        for stream in list(self.streams):
            stream.cut()


class GatedResponse(Response):
    """A response that, however it ends, stops its turn and gives its place on the model back.

    While it streams it is one of ``open_streams``.
    """

    def __init__(
        self, inner: EventStream, run: TurnRun, release: Callable[[], None], open_streams: OpenStreams
    ) -> None:
        super().__init__(status_code=inner.status_code)
        self.inner = inner
        self.run = run
        self.release = release
        self.open_streams = open_streams

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the inner response; then stop the turn, wait for its thread, give its place back."""
        self.open_streams.streams.add(self.inner)
        try:
            await self.inner(scope, receive, send)
        finally:
            self.open_streams.streams.discard(self.inner)
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
    """Server-sent events, one per payload, as the bytes of the stream.

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
) -> EventStream:
    """The ``chat.completion.chunk`` stream, ending with ``data: [DONE]``.

    Each batch of the turn's events is written at once (see :meth:`TurnRun.batches`), its text
    in one delta per item.
    """

    def encoded(batch: list[ServedEvent]) -> bytes:
        return sse_bytes(formatter.chunks(_outputs(reader, batch), reader))

    async def chunks() -> AsyncGenerator[bytes, None]:
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

    return EventStream(chunks())


def responses_stream(
    first: list[ServedEvent],
    batches: AsyncIterator[list[ServedEvent]],
    reader: TurnReader,
    builder: ResponseBuilder,
    on_done: Callable[[], None] | None,
) -> EventStream:
    """The Responses event stream (``event:`` names the type; every event has a ``sequence_number``).

    ``on_done`` is the store's work once the response ended (None: nothing to store).
    """

    def encoded(batch: list[ServedEvent]) -> bytes:
        return sse_bytes(builder.events(_outputs(reader, batch)), named=True)

    async def stream() -> AsyncGenerator[bytes, None]:
        yield sse_bytes(builder.start_events(), named=True) + encoded(first)
        async for batch in batches:
            data = encoded(batch)
            if data:
                yield data
        yield sse_bytes(builder.end_events(reader), named=True)
        if on_done is not None:
            await run_in_threadpool(on_done)  # the store's work, off the event loop

    return EventStream(stream())
