"""Who may call and how much: the bind rule, the API key, the body size, the generation queue."""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable

from starlette.requests import Request

from harmony_chat.errors import HarmonyChatError
from harmony_chat.server import SERVE_API_KEY_ENV
from harmony_chat.server.errors import ApiError

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_QUEUE = 32
"""Requests that may wait for the model while every place on it is taken; more get 429."""
DISCONNECT_POLL_S = 0.5
"""How often a waiting request checks whether its client is still there."""


class UnsafeBind(HarmonyChatError):
    """A non-loopback bind without an API key."""

    exit_code = 2


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, api_key: str | None) -> None:
    """Refuse to listen beyond this machine without an API key.

    Raises:
        UnsafeBind: when ``host`` is not a loopback address and there is no key.
    """
    if not is_loopback(host) and not api_key:
        raise UnsafeBind(
            f"--host {host} would let other machines use the model: give --api-key (or set {SERVE_API_KEY_ENV}), "
            "or bind 127.0.0.1"
        )


def _bearer(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def has_api_key(request: Request, api_key: str | None) -> bool:
    """Whether the request may call (no key is set, or its bearer token is the key, compared in constant time)."""
    if not api_key:
        return True
    return hmac.compare_digest(_bearer(request).encode(), api_key.encode())


def check_api_key(request: Request, api_key: str | None) -> None:
    """Compare the request's bearer token with the key in constant time.

    Raises:
        ApiError: 401 when a key is required and the request lacks it or has another.
    """
    if not has_api_key(request, api_key):
        message = "missing API key (send Authorization: Bearer KEY)" if not _bearer(request) else "incorrect API key"
        raise ApiError(401, message, code="invalid_api_key")


async def read_body(request: Request, limit: int) -> bytes:
    """Read the body, refusing more than ``limit`` bytes without reading it all.

    Raises:
        ApiError: 413 when the body is larger than the limit.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, f"the request body is larger than {limit} bytes", code="request_too_large")


class GenerationGate:
    """Up to ``capacity`` generations at once on the model, with a bounded line of waiting requests.

    Requests are let in first come, first served: a place that frees goes straight to the
    request that has waited longest.

    Args:
        max_waiting: requests that may wait while every place is taken; one more gets 429.
        capacity: generations at once (the pool's handles: 1 for the in-process model).
    """

    def __init__(self, max_waiting: int = DEFAULT_MAX_QUEUE, capacity: int = 1) -> None:
        if capacity < 1:
            raise ValueError("the gate needs room for one generation at least")
        self.max_waiting = max_waiting
        self.capacity = capacity
        self._running = 0
        self._line: deque[asyncio.Future[None]] = deque()
        self._average_s = 5.0

    @property
    def waiting(self) -> int:
        """Requests waiting for the model now."""
        return len(self._line)

    @property
    def running(self) -> int:
        """Generations holding a place now."""
        return self._running

    @property
    def busy(self) -> bool:
        """Whether every place is taken (a new request would wait)."""
        return self._running >= self.capacity

    def retry_after_s(self) -> int:
        """Seconds a refused client should wait: the line ahead at the recent average pace, over the places."""
        return max(1, math.ceil(self._average_s * (self.waiting + 1) / self.capacity))

    async def acquire(self, gone: Callable[[], Awaitable[bool]]) -> Callable[[], None]:
        """Wait for a place; return the function that gives it back (call it exactly once).

        Args:
            gone: tells whether the client has disconnected (it stops waiting then).

        Raises:
            ApiError: 429 with ``Retry-After`` when the line is full; 400 when the client left
                while waiting (nobody reads that answer).
        """
        if self.busy or self._line:
            if self.waiting >= self.max_waiting:
                retry = str(self.retry_after_s())
                raise ApiError(
                    429,
                    f"the model is busy and {self.waiting} requests are waiting; retry in {retry} s",
                    code="queue_full",
                    headers={"Retry-After": retry},
                )
            await self._wait_in_line(gone)
        else:
            self._running += 1
        started = time.monotonic()
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._average_s = 0.7 * self._average_s + 0.3 * (time.monotonic() - started)
                self._hand_on()

        return release

    async def _wait_in_line(self, gone: Callable[[], Awaitable[bool]]) -> None:
        """Wait until a freed place is handed to this request (its place in the line is kept while it polls)."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._line.append(turn)
        try:
            while True:
                done, _ = await asyncio.wait({turn}, timeout=DISCONNECT_POLL_S)
                if done:
                    return
                if await gone():
                    raise ApiError(400, "the client disconnected while waiting", code="client_gone")
        except BaseException:
            if turn.done() and not turn.cancelled():
                self._hand_on()  # a place was handed over as this request left: pass it on
            else:
                turn.cancel()
                self._line.remove(turn)
            raise

    def _hand_on(self) -> None:
        """A place is free: hand it to the longest-waiting request, or count it free."""
        while self._line:
            turn = self._line.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self._running -= 1
