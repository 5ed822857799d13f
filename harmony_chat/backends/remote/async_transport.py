"""The engine's token stream read on the event loop: one pooled aiohttp session per engine, many streams.

``serve`` in front of an engine runs every generation's stream on its event loop: no thread and no
HTTP client per stream. aiohttp's session keeps keep-alive connections to the engine (a request
costs no new connection once the pool is warm) and its C parser reads the chunked body; the
server-sent events are split from the bytes of each read and handed on together, so a read that
brought several events costs one hand-over. A stream that is closed before its end (the request was
cancelled, the turn is over) closes its connection, which tells the engine to stop generating.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import aiohttp

from harmony_chat.backends.remote.transport import parse_body
from harmony_chat.errors import EngineError, EngineStreamError

if TYPE_CHECKING:
    from harmony_chat.backends.remote.transport import EngineClient

DONE = b"[DONE]"
POOL_LIMIT = 0
"""Connections per engine the session may open (0: no limit; the server's gate bounds the streams)."""
SEND_TRIES = 3
"""Tries to send a request while kept-alive connections turn out closed (each failed one leaves the pool)."""
KEEPALIVE_S = 3.0
"""How long an idle connection is kept for the next stream: under the engines' own idle limits (about 5 s)."""


class SseSplitter:
    """Split a byte stream into the ``data`` payloads of its server-sent events (comments skipped)."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The payloads of the events ``chunk`` completes (what is left waits for the next chunk)."""
        data = self._rest + chunk if self._rest else chunk
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        blocks = data.split(b"\n\n")
        self._rest = blocks.pop()
        payloads: list[bytes] = []
        for block in blocks:
            if block.startswith(b"data: ") and b"\n" not in block:  # the common case: one data line
                payloads.append(block[6:])
                continue
            lines = [line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
            if lines:
                payloads.append(b"\n".join(lines))
        return payloads

    def finish(self) -> list[bytes]:
        """The payload of an event the stream ended without its blank line (none usually)."""
        rest, self._rest = self._rest, b""
        return self.feed(rest + b"\n\n") if rest.strip() else []


class AsyncEngineSession:
    """The pooled aiohttp session of one engine on one event loop (made at the first stream).

    Args:
        client: the engine's client (URL, key, timeouts and error wording).
    """

    def __init__(self, client: EngineClient) -> None:
        self._client = client
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: dict[_Stream, None] = {}
        """The open streams, for the watch."""
        self._watch: asyncio.Task[None] | None = None

    def session(self) -> aiohttp.ClientSession:
        """The session of the running loop (a new one when the loop changed, the old one dropped)."""
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            client = self._client
            connector = aiohttp.TCPConnector(limit=POOL_LIMIT, ssl=client.tls_context, keepalive_timeout=KEEPALIVE_S)
            # no per-read timer (one per event costs more than the rest of the read): the watch below
            timeout = aiohttp.ClientTimeout(total=None, connect=client.connect_timeout)
            self._session = aiohttp.ClientSession(
                base_url=client.url + "/",
                connector=connector,
                timeout=timeout,
                headers=client.auth_headers(),
                trust_env=False,
                auto_decompress=False,
            )
            self._loop = loop
        return self._session

    async def close(self) -> None:
        """Close the pooled connections (on the loop that made them)."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    async def events(self, path: str, body: Any) -> AsyncGenerator[tuple[list[dict[str, Any]], float], None]:
        """POST ``body`` to ``path`` and yield the JSON events of each read with its arrival time.

        Ends after ``[DONE]`` or when the engine closes the stream; closing the generator early
        closes the connection. An engine that sends nothing for the client's ``timeout`` (no
        headers, no next event) is given up on (the headers under a timer, the events by the
        session's watch: a timer per read would cost more than the rest of the read).

        Raises:
            EngineError: the request failed, the stream broke, timed out, or an event is not a JSON object.
        """
        client = self._client
        label = client.label
        try:
            async with asyncio.timeout(client.timeout):  # the engine may take a while over a long prompt: not forever
                response = await self._send(path, body)
        except aiohttp.ClientConnectorError as error:
            raise client.unreachable_error(str(error)) from None
        except TimeoutError:
            raise client.timeout_error("waiting for the answer") from None
        except aiohttp.ClientError as error:
            raise client.broken_error(f"sending the request ({client.scrub(str(error))})") from None
        stream = _Stream(response)
        self._watching(stream)
        try:
            if response.status >= 400:
                raise client.status_error(response.status, parse_body(await response.read()), "generating")
            splitter = SseSplitter()
            content = response.content
            while chunk := await content.readany():
                arrived = stream.last = time.perf_counter()
                batch: list[dict[str, Any]] = []
                for payload in splitter.feed(chunk):
                    if payload == DONE:
                        if batch:
                            yield batch, arrived
                        return
                    batch.append(_event(payload, label))
                if batch:
                    yield batch, arrived
            if stream.timed_out:
                raise TimeoutError
            tail = [_event(payload, label) for payload in splitter.finish() if payload != DONE]
            if tail:
                yield tail, time.perf_counter()
        except EngineError:
            raise
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            if stream.timed_out or isinstance(error, TimeoutError):
                raise client.timeout_error("streaming the answer") from None
            if isinstance(error, aiohttp.ClientPayloadError | aiohttp.ServerDisconnectedError | OSError):
                raise client.broken_error("streaming the answer") from None
            raise EngineError(f"{label} failed while streaming the answer: {client.scrub(str(error))}") from None
        finally:
            self._waiting.pop(stream, None)
            response.release()  # the connection goes back to the pool, or is closed when the answer was cut short

    async def _send(self, path: str, body: Any) -> aiohttp.ClientResponse:
        """POST the request; once more on a new connection when a kept-alive one was closed under it.

        An engine closes idle connections on its own schedule (llama-server and uvicorn after about
        5 s), so a pooled connection may be gone by the time it is used: the request never reached
        the engine, and sending it again on a fresh connection is what a new client would do.
        """
        for _ in range(SEND_TRIES - 1):
            try:
                return await self.session().post(path.lstrip("/"), json=body)
            except aiohttp.ClientConnectorError:
                raise
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                continue  # that connection is dropped from the pool; the next try takes another or a new one
        return await self.session().post(path.lstrip("/"), json=body)

    def _watching(self, stream: _Stream) -> None:
        """Watch ``stream`` (the watch starts with the first stream, ends when none is left)."""
        self._waiting[stream] = None
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(self._watch_streams())

    async def _watch_streams(self) -> None:
        """Close every stream that has waited longer than the client's timeout for its next event."""
        limit = self._client.timeout
        every = min(1.0, limit / 4)
        while self._waiting:
            await asyncio.sleep(every)
            now = time.perf_counter()
            for stream in list(self._waiting):
                if now - stream.last > limit and not stream.timed_out:
                    stream.timed_out = True
                    stream.response.close()  # the reader wakes up to the closed connection


class _Stream:
    """One open stream as the watch sees it: when its last event came, and how to end it."""

    __slots__ = ("last", "response", "timed_out")

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.last = time.perf_counter()
        self.response = response
        self.timed_out = False


def _event(payload: bytes, label: str) -> dict[str, Any]:
    try:
        event = json.loads(payload)
    except ValueError:
        raise EngineStreamError(f"{label} sent a malformed event") from None
    if not isinstance(event, dict):
        raise EngineStreamError(f"{label} sent an event that is not a JSON object")
    return event
