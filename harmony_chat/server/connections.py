"""Connections before their request is whole: a bound on how many are held, and deadlines for headers and body.

Without both, thousands of connections that each send half a header, or a header and then one
byte of body every few seconds (nothing the API key can stop), hold every connection slot and
file descriptor; even ``/health`` then times out. So the server holds at most ``max_connections``.
A new connection beyond that closes the oldest one still *receiving* its request: first those with
half a header or part of a body, then those that never had a request answered, and an idle
keep-alive connection between two answered requests last; when every held connection is serving a
whole request, the newcomer is answered 503 and closed. A slow sender can always be pushed out by
an honest client, and an honest client's idle connection is the last to go. A connection
that has not sent a whole request header ``header_timeout_s`` after it opened (or after its last
response) is closed, and so is one whose body has not arrived ``header_timeout_s`` plus the time
its length takes at :data:`MIN_BODY_BYTES_PER_S` after its header did. :func:`fit_connections`
keeps the bound, and what asyncio may accept at once, below the process's descriptor limit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any

DEFAULT_MAX_CONNECTIONS = 256
"""Connections held at once."""
DEFAULT_HEADER_TIMEOUT_S = 10.0
"""Seconds a connection may take to send a request's headers."""
MIN_BODY_BYTES_PER_S = 16 * 1024
"""The slowest a request body may arrive on average: 8 MiB (the largest body) in about 8.5 minutes."""
CHUNKED_BODY_S = 60.0
"""How long a body of unstated length (chunked) may take, beyond the header deadline."""
DEFAULT_BACKLOG = 2048
"""Connections the kernel may queue, and asyncio may accept in one go, before the server sees them."""
DESCRIPTOR_RESERVE = 32
"""File descriptors kept free of connections (the model, the store, the event loop, logs)."""
_REFUSAL_BODY = json.dumps(
    {
        "error": {
            "message": "the server holds as many connections as it may; retry shortly",
            "type": "server_error",
            "param": None,
            "code": "too_many_connections",
        }
    }
).encode()
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
    b"connection: close\r\ncontent-length: " + str(len(_REFUSAL_BODY)).encode() + b"\r\n\r\n" + _REFUSAL_BODY
)
"""What a connection beyond the bound gets when no held one can be closed instead."""

log = logging.getLogger("harmony_chat.server")


def _open_descriptors() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return DESCRIPTOR_RESERVE


def fit_connections(wanted: int, backlog: int = DEFAULT_BACKLOG) -> tuple[int, int]:
    """The connection bound and listen backlog that fit the descriptor limit (the soft limit is raised first).

    asyncio accepts up to ``backlog`` connections in one go before the server sees any of them,
    and the connections closed to make room for them hold their descriptors until the loop's next
    turn, so the bound leaves twice that many free; a small limit gets a smaller backlog.
    """
    try:
        import resource
    except ImportError:  # not on Windows
        return wanted, backlog
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    room = soft - _open_descriptors() - DESCRIPTOR_RESERVE
    backlog = max(8, min(backlog, room // 4))
    fitted = max(1, min(wanted, room - 2 * backlog))
    if fitted < wanted:
        log.warning("holding at most %d connections: the process may open %d files", fitted, soft)
    return fitted, backlog


class ConnectionBudget:
    """The held connections, and which of them wait for a request's headers (oldest first).

    Args:
        limit: the most connections held at once.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.held: set[Any] = set()
        self.waiting: dict[Any, None] = {}
        """Connections still receiving a request (header or body), in the order they began to."""
        self.partial: dict[Any, None] = {}
        """Of those, the ones part of whose request has come (half a header, some of a body): closed first."""
        self.answered: set[Any] = set()
        """Connections that have had a request answered (kept-alive clients): closed last."""

    def admit(self, connection: Any) -> bool:
        """Hold ``connection``, closing the longest-waiting one when full; False when all are busy."""
        if len(self.held) >= self.limit:
            oldest = (
                next(iter(self.partial), None)
                or next((each for each in self.waiting if each not in self.answered), None)
                or next(iter(self.waiting), None)
            )
            if oldest is None:
                log.warning("connection limit (%d) reached and every connection is busy: refused one", self.limit)
                return False
            log.warning("connection limit (%d) reached: closed the connection that waited longest", self.limit)
            self.forget(oldest)
            oldest.transport.close()
        self.held.add(connection)
        return True

    def wait(self, connection: Any) -> None:
        """``connection`` waits for a request (again): it may be closed to make room."""
        if connection in self.held:
            self.waiting.pop(connection, None)
            self.partial.pop(connection, None)
            self.waiting[connection] = None

    def part_came(self, connection: Any) -> None:
        """Part of ``connection``'s request has come: it is among the first closed to make room.

        An idle keep-alive connection between two requests (an honest client's, typically) is
        closed only when no connection with a request half sent is left to close.
        """
        if connection in self.waiting and connection not in self.partial:
            self.partial[connection] = None

    def serve(self, connection: Any) -> None:
        """``connection`` has its whole request and is serving it."""
        self.waiting.pop(connection, None)
        self.partial.pop(connection, None)

    def forget(self, connection: Any) -> None:
        """``connection`` is gone."""
        self.held.discard(connection)
        self.waiting.pop(connection, None)
        self.partial.pop(connection, None)
        self.answered.discard(connection)


def guarded_protocol(max_connections: int, header_timeout_s: float) -> type[asyncio.Protocol]:
    """Uvicorn's h11 protocol under one shared :class:`ConnectionBudget` and the header and body deadlines."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    budget = ConnectionBudget(max_connections)

    class GuardedH11Protocol(H11Protocol):
        """h11 with a bound on held connections and deadlines for a request's header and body."""

        _deadline: asyncio.TimerHandle | None = None
        _phase = "serving"
        """``header`` (waiting for a request's header), ``body`` (for its body) or ``serving``."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if not budget.admit(self):
                self.connections.discard(self)
                transport.write(REFUSAL)
                transport.close()
                return
            self._enter("header")

        def connection_lost(self, exc: Exception | None) -> None:
            budget.forget(self)
            self._cancel_deadline()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow()
            if self._phase != "serving" and data:
                budget.part_came(self)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            budget.answered.add(self)
            self._follow()

        def _current_phase(self) -> str:
            if self.cycle is None or self.cycle.response_complete:
                return "header"
            return "body" if self.conn.their_state is h11.SEND_BODY else "serving"

        def _follow(self) -> None:
            """Where the request is decides which deadline runs and whether the connection may be closed for room."""
            if self.transport.is_closing():
                return
            phase = self._current_phase()
            if phase != self._phase:
                self._enter(phase)

        def _enter(self, phase: str) -> None:
            self._phase = phase
            self._cancel_deadline()
            if phase == "serving":
                budget.serve(self)
                return
            budget.wait(self)
            seconds = header_timeout_s + (self._body_seconds() if phase == "body" else 0.0)
            self._deadline = self.loop.call_later(seconds, self._late)

        def _body_seconds(self) -> float:
            """The time the body's stated length takes at the slowest rate allowed."""
            headers = dict(self.scope.get("headers", ())) if self.cycle is not None else {}
            try:
                length = int(headers.get(b"content-length", b""))
            except ValueError:
                return CHUNKED_BODY_S
            return max(length, 0) / MIN_BODY_BYTES_PER_S

        def _cancel_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _late(self) -> None:
            self._deadline = None
            if self._phase != "serving" and not self.transport.is_closing():
                log.info("closed a connection whose request %s did not arrive in time", self._phase)
                budget.forget(self)
                self.transport.close()

    return GuardedH11Protocol
