"""HTTP plumbing shared by the remote engines: JSON calls, a cancellable SSE token stream, errors.

Every failure becomes one :class:`~harmony_chat.errors.EngineError` line that names the engine and
its host. The API key travels only in the ``Authorization: Bearer`` header: it is never part of a
message, a ``repr`` or the stats, and it is scrubbed from any text the server sends back.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from harmony_chat.errors import (
    EngineAuthError,
    EngineError,
    EngineStreamError,
    EngineTimeoutError,
    EngineUnreachableError,
)

API_KEY_ENV = "HARMONY_CHAT_API_KEY"
"""Environment variable the API key is read from when none is given."""
POLL_S = 0.05
"""How often an open stream's ``should_stop`` is checked while it waits for the engine."""
_MESSAGE_LIMIT = 240


def url_host(url: str) -> str:
    """Return ``host:port`` of ``url`` (what the status bar and stats show; never credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or url
    return f"{host}:{parts.port}" if parts.port else host


def error_message(body: Any) -> str:
    """Pull the human message out of an engine's error body (each engine nests it differently)."""
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            for key in ("message", "detail", "msg"):
                if isinstance(error.get(key), str):
                    return str(error[key])
        if isinstance(error, str):
            return error
        if isinstance(body.get("message"), str):
            return str(body["message"])
        if body.get("detail") is not None:
            return str(body["detail"])
    return "" if body is None else str(body)


class EngineClient:
    """Talks HTTP to one engine at ``url``, with an optional Bearer API key.

    Args:
        url: the engine's base URL, e.g. ``http://127.0.0.1:8080``.
        engine: the engine's name for messages (``llama-server``, ``vllm``, ``sglang``).
        api_key: sent as ``Authorization: Bearer``; never logged.
        timeout: seconds to wait for an answer or the next streamed token.
        connect_timeout: seconds to wait for the connection itself.
    """

    def __init__(
        self,
        url: str,
        engine: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        connect_timeout: float = 10.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.engine = engine
        self.host = url_host(self.url)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._secret = api_key or None
        self._timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self.tls_context = httpx.create_ssl_context(trust_env=False)
        """httpx's certificate check, made once: building it per client costs tens of milliseconds of CPU."""
        self._client = self.new_http_client()

    def new_http_client(self) -> httpx.Client:
        """An httpx client for this engine (its own connection pool; every stream opens one)."""
        return httpx.Client(
            base_url=self.url,
            headers=self.auth_headers(),
            timeout=self._timeout,
            verify=self.tls_context,
            trust_env=False,
        )

    def __repr__(self) -> str:
        return f"EngineClient({self.engine!r}, {self.url!r}, api_key={'set' if self._secret else 'none'})"

    def auth_headers(self) -> dict[str, str]:
        """The ``Authorization`` header to send (empty without a key)."""
        return {"Authorization": f"Bearer {self._secret}"} if self._secret else {}

    @property
    def label(self) -> str:
        """``<engine> at <host>``, the subject of every message."""
        return f"{self.engine} at {self.host}"

    def scrub(self, text: str) -> str:
        """Return ``text`` shortened to one line, with the API key blanked out."""
        if self._secret:
            text = text.replace(self._secret, "***")
        text = " ".join(text.split())
        return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"

    def failure(self, error: Exception, doing: str) -> EngineError:
        """Translate an httpx exception raised while ``doing`` into one clear engine error."""
        if isinstance(error, httpx.TimeoutException):
            return self.timeout_error(doing)
        if isinstance(error, httpx.ConnectError):
            return self.unreachable_error(str(error))
        if isinstance(error, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
            return self.broken_error(doing)
        return EngineError(f"{self.label} failed while {doing}: {self.scrub(str(error))}")

    def timeout_error(self, doing: str) -> EngineTimeoutError:
        """The engine did not answer in time while ``doing``."""
        return EngineTimeoutError(
            f"{self.label} did not answer within {self.timeout:g} s while {doing}; "
            "raise the timeout or check the server"
        )

    def unreachable_error(self, detail: str) -> EngineUnreachableError:
        """The engine could not be connected to (``detail``: what the connection attempt said)."""
        return EngineUnreachableError(
            f"cannot reach {self.label} ({self.scrub(detail) or 'connection refused'}); "
            "is the server running at that URL?"
        )

    def broken_error(self, doing: str) -> EngineStreamError:
        """The connection broke while ``doing``."""
        return EngineStreamError(f"the connection to {self.label} broke while {doing}")

    def status_error(self, status: int, body: Any, doing: str) -> EngineError:
        """Translate an HTTP error status (with its body) into one clear engine error."""
        detail = self.scrub(error_message(body))
        if status in (401, 403):
            return EngineAuthError(
                f"{self.label} refused the request (HTTP {status}: {detail or 'unauthorized'}); "
                f"give the right API key (--api-key or ${API_KEY_ENV})"
            )
        if status == 503:
            return EngineError(f"{self.label} is not ready (HTTP 503: {detail or 'loading'}); try again shortly")
        return EngineError(f"{self.label} answered HTTP {status} while {doing}: {detail or 'no details'}")

    def call(self, method: str, path: str, body: Any = None, *, doing: str, timeout: float | None = None) -> Any:
        """Send one request and return its JSON answer (or text when it is not JSON).

        Raises:
            EngineError: for every transport failure or HTTP error status.
        """
        try:
            response = self._client.request(
                method, path, json=body, timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT
            )
        except httpx.HTTPError as error:
            raise self.failure(error, doing) from None
        parsed = parse_body(response.content)
        if response.status_code >= 400:
            raise self.status_error(response.status_code, parsed, doing)
        return parsed

    def probe(self, path: str, *, timeout: float = 5.0) -> tuple[int, Any]:
        """GET ``path`` and return ``(status, body)`` without judging the status (for detection)."""
        try:
            response = self._client.get(path, timeout=timeout)
        except httpx.HTTPError as error:
            raise self.failure(error, f"probing {path}") from None
        return response.status_code, parse_body(response.content)

    def stream(self, path: str, body: Any, should_stop: Callable[[], bool]) -> EventStream:
        """POST ``body`` and stream the server-sent events of the answer (read in a worker thread)."""
        return EventStream(self, path, body, should_stop)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


def parse_body(content: bytes) -> Any:
    """Return a response body as JSON, or as text when it is not JSON."""
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return content.decode("utf-8", errors="replace").strip()


class EventStream:
    """The JSON events of one streamed answer, read in the thread that iterates :meth:`events`.

    :meth:`events` yields ``(event, arrival_time)`` as each comes off the socket, with no thread
    between the socket and the reader (a hand-over per token costs more CPU than the rest of the
    token's work). While a stream is open, :data:`STOP_WATCH` checks its ``should_stop()`` every
    :data:`POLL_S`; once it turns true the socket is shut down at once (also while the engine is
    still processing the prompt and has sent nothing), which ends the wait and tells the engine to
    stop generating.
    """

    def __init__(self, client: EngineClient, path: str, body: Any, should_stop: Callable[[], bool]) -> None:
        self._client = client
        self._path = path
        self._body = body
        self._should_stop = should_stop
        self._cancelled = threading.Event()
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._reader: Generator[tuple[dict[str, Any], float], None, None] | None = None

    @property
    def should_stop(self) -> bool:
        """Whether the stream's consumer wants it stopped."""
        return self._should_stop()

    def events(self) -> Iterator[tuple[dict[str, Any], float]]:
        """Yield each JSON event with its arrival time; stop early (without an error) when cancelled.

        Raises:
            EngineError: when the request fails, the stream breaks or the engine sends garbage.
        """
        if self._reader is None:
            self._reader = self._read()
        return self._reader

    def _read(self) -> Generator[tuple[dict[str, Any], float], None, None]:
        client = self._client
        # A connection of its own, so its socket is known from the moment it connects: cancelling
        # must also work while the engine is still processing the prompt and has sent no headers.
        http = client.new_http_client()
        STOP_WATCH.add(self)
        try:
            with http.stream("POST", self._path, json=self._body, extensions={"trace": self._trace}) as response:
                if response.status_code >= 400:
                    raise client.status_error(response.status_code, parse_body(response.read()), "generating")
                for payload in _sse_payloads(response.iter_lines()):
                    if self._cancelled.is_set() or payload == "[DONE]":
                        return
                    try:
                        event = json.loads(payload)
                    except ValueError:
                        raise EngineStreamError(f"{client.label} sent a malformed event") from None
                    if not isinstance(event, dict):
                        raise EngineStreamError(f"{client.label} sent an event that is not a JSON object")
                    yield event, time.perf_counter()
        except httpx.HTTPError as error:
            if not self._cancelled.is_set():
                raise client.failure(error, "streaming the answer") from None
        except OSError as error:  # the socket was shut down under the reader
            if not self._cancelled.is_set():
                raise EngineStreamError(f"the connection to {client.label} broke: {error}") from None
        finally:
            STOP_WATCH.discard(self)
            http.close()

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        """Trace hook of httpcore: remember the socket as soon as the connection is made."""
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._lock:
            self._socket = sock if isinstance(sock, socket.socket) else None
        if self._cancelled.is_set():
            self.cancel()

    def cancel(self) -> None:
        """Drop the connection now (the engine sees the client leave and stops generating); any thread may call it."""
        self._cancelled.set()
        with self._lock:
            sock = self._socket
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        """End the stream (from the thread that reads it): the connection closes unless the answer was complete."""
        if self._reader is not None:
            self._reader.close()


class StopWatch:
    """One daemon thread that, while streams are open, cancels those whose consumer wants them stopped."""

    def __init__(self, every_s: float = POLL_S) -> None:
        self.every_s = every_s
        self._streams: set[EventStream] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, stream: EventStream) -> None:
        """Watch ``stream`` until :meth:`discard`."""
        with self._lock:
            self._streams.add(stream)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True, name="engine-stop-watch")
                self._thread.start()

    def discard(self, stream: EventStream) -> None:
        """Stop watching ``stream``."""
        with self._lock:
            self._streams.discard(stream)

    def _watch(self) -> None:
        while True:
            time.sleep(self.every_s)
            with self._lock:
                streams = list(self._streams)
                if not streams:
                    self._thread = None
                    return
            for stream in streams:
                try:
                    stop = stream.should_stop
                except Exception:  # a consumer's check that fails means it cannot take more
                    stop = True
                if stop:
                    stream.cancel()


STOP_WATCH = StopWatch()
"""The watch every :class:`EventStream` registers with while it is open."""


def _sse_payloads(lines: Iterator[str]) -> Iterator[str]:
    """Yield the ``data`` of each server-sent event (comments and other fields skipped)."""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)
