"""The event stream ``serve`` answers with: keep-alive comments in a silence, and a client that leaves noticed at once.

A real uvicorn server on loopback (the configuration ``serve`` uses) sends an :class:`EventStream`;
httpx reads the raw bytes. The whole app's cases (a turn stopped, a response not stored) are in
test_engine_path.py, in front of the fake engine.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from harmony_chat.server.app import ServerLimits, uvicorn_config
from harmony_chat.server.streaming import PING, EventStream

FIRST = b"data: 1\r\n\r\n"
LAST = b"data: 2\r\n\r\n"


@contextmanager
def _serving(make: Callable[[], EventStream]) -> Iterator[str]:
    async def endpoint(request: Request) -> EventStream:
        return make()

    app = Starlette(routes=[Route("/events", endpoint, methods=["POST"])])
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", 0, ServerLimits(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/events"
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_silent_stream_sends_keep_alive_comments_between_its_events_and_none_after() -> None:
    async def chunks() -> AsyncGenerator[bytes, None]:
        yield FIRST
        await asyncio.sleep(1.0)  # the model is silent for ten ping intervals
        yield LAST

    with _serving(lambda: EventStream(chunks(), ping_s=0.1)) as url:
        response = httpx.post(url, timeout=10)
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    body = response.content
    assert body.startswith(FIRST) and body.endswith(LAST)
    pings = body[len(FIRST) : -len(LAST)]
    assert pings and pings == PING * (len(pings) // len(PING))  # only whole comments in between
    assert 3 <= len(pings) // len(PING) <= 11


def test_a_client_that_leaves_a_silent_stream_stops_it_at_once() -> None:
    closed = threading.Event()

    async def chunks() -> AsyncGenerator[bytes, None]:
        try:
            yield FIRST
            await asyncio.sleep(3600)  # silent until the client has gone
            yield LAST
        finally:
            closed.set()

    with _serving(lambda: EventStream(chunks())) as url, httpx.Client(timeout=10) as client:
        with client.stream("POST", url) as response:
            assert next(response.iter_raw()) == FIRST
        assert closed.wait(5), "the stream did not stop when its client left"
