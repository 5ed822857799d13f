"""One MCP server's connection, run on the toolbox's event loop: connect, list tools, call, stop.

The whole life of a connection (the SDK ``Client`` context, and for stdio the child process)
lives in one task inside an anyio cancel scope: the scope's deadline bounds the start, and
cancelling it stops the server cleanly (the SDK closes stdin, then terminates the process
group). Every method here except ``status`` runs on the toolbox's loop thread.
"""

from __future__ import annotations

import math
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, TextIO, cast

import anyio
import httpx2
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation, Tool
from mcp_types import CONNECTION_CLOSED

from harmony_chat import __version__
from harmony_chat.tools.mcp_config import McpServerConfig

ConnectionState = Literal["starting", "ready", "failed", "disabled"]
"""Where a server connection stands (``disabled``: switched off in the configuration)."""

MAX_HTTP_EVENT_BYTES = 64 * 1024 * 1024
"""The largest single HTTP/SSE message accepted from a server (the SDK's default is 1 MiB)."""
_MAX_TOOL_PAGES = 50


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """A server's state for the ``/tools`` view."""

    name: str
    state: ConnectionState
    target: str
    """The command line or URL."""
    tool_count: int
    error: str | None = None
    """Why it failed (one line), when ``state`` is ``failed``."""
    protocol: str | None = None
    """The MCP protocol version agreed with the server, when ``ready``."""


class ToolCallError(Exception):
    """A call that could not produce a result; the message is meant for the model and the user."""


def describe_error(error: BaseException) -> str:
    """One line for an exception, looking inside exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    if isinstance(error, MCPError):
        return error.message
    text = " ".join(str(error).split())
    return text or type(error).__name__


def _last_line(log: TextIO | None) -> str | None:
    """The last non-empty line a stdio server wrote to stderr, shortened."""
    if log is None:
        return None
    try:
        log.flush()
        log.seek(0, 2)
        size = log.tell()
        log.seek(max(0, size - 4096))
        lines = [line.strip() for line in log.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return None
    if not lines:
        return None
    line = lines[-1]
    return line if len(line) <= 200 else line[:199] + "…"


class ServerConnection:
    """The connection to one configured MCP server.

    State changes go through the toolbox's lock. Each run gets a generation number: ``disable``
    moves the generation on, so whatever a stopping run reports afterwards is ignored.
    """

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        lock: threading.Condition,
        connect_timeout_s: float,
        on_change: Callable[[ServerConnection], None],
        on_notice: Callable[[str], None],
    ) -> None:
        self.name = name
        self.config = config
        self.state: ConnectionState = "starting" if config.enabled else "disabled"
        self.tools: tuple[Tool, ...] = ()
        self.error: str | None = None
        self.protocol: str | None = None
        self._lock = lock
        self._generation = 0
        self._connect_timeout_s = connect_timeout_s
        self._on_change = on_change
        self._on_notice = on_notice
        self._client: Client | None = None
        self._scope: anyio.CancelScope | None = None
        self._stderr: TextIO | None = None

    def status(self) -> ServerStatus:
        """A snapshot of the state."""
        with self._lock:
            protocol = self.protocol if self.state == "ready" else None
            return ServerStatus(self.name, self.state, self.config.describe(), len(self.tools), self.error, protocol)

    def enable(self) -> bool:
        """(Any thread) mark a disabled or failed server as starting; True when it must be launched."""
        with self._lock:
            if self.state not in ("disabled", "failed"):
                return False
            self.state, self.tools, self.error = "starting", (), None
        self._on_change(self)
        return True

    def disable(self) -> bool:
        """(Any thread) mark the server disabled at once; True when it was not. Then call ``cancel``."""
        with self._lock:
            if self.state == "disabled":
                return False
            self._generation += 1
            self.state, self.tools, self.error = "disabled", (), None
        self._on_change(self)
        return True

    def cancel(self) -> None:
        """(Loop thread) end the running connection, if any; the SDK stops the server process."""
        if self._scope is not None:
            self._scope.cancel()

    def _set(
        self, generation: int, state: ConnectionState, *, tools: tuple[Tool, ...] = (), error: str | None = None
    ) -> bool:
        with self._lock:
            if generation != self._generation or self.state in ("disabled", "failed"):
                return False
            self.state, self.tools, self.error = state, tools, error
        self._on_change(self)
        return True

    def _fail(self, generation: int, what: str, error: BaseException | str) -> None:
        """Mark the server failed (once per run) and send one notice naming its command or URL."""
        reason = error if isinstance(error, str) else describe_error(error)
        if stderr := _last_line(self._stderr):
            reason = f"{reason} (stderr: {stderr})"
        if self._set(generation, "failed", error=reason):
            self._on_notice(f"MCP server {self.name!r} ({self.config.describe()}) {what}: {reason}")

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[Client]:
        info = Implementation(name="harmony-chat", version=__version__)
        config = self.config
        if config.command is not None:
            params = StdioServerParameters(command=config.command, args=config.args, env=config.env, cwd=config.cwd)
            errlog = self._stderr if self._stderr is not None else sys.stderr
            async with Client(stdio_client(params, errlog=errlog), client_info=info) as client:
                yield client
            return
        assert config.url is not None
        http = httpx2.AsyncClient(headers=config.headers, timeout=httpx2.Timeout(30.0, read=300.0))
        async with http:
            transport = streamable_http_client(config.url, http_client=http, max_sse_event_size=MAX_HTTP_EVENT_BYTES)
            async with Client(transport, client_info=info) as client:
                yield client

    async def _list_tools(self, client: Client) -> tuple[Tool, ...]:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tuple(tools)

    async def run(self) -> None:
        """(Loop thread) connect, list the tools, hold the connection until cancelled; failures become a notice."""
        with self._lock:
            generation = self._generation
        if self.config.command is not None:
            self._stderr = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
        started = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self._connect_timeout_s) as scope:
                self._scope = scope
                async with self._open() as client:
                    tools = await self._list_tools(client)
                    scope.deadline = math.inf
                    self._client, started, self.protocol = client, True, client.protocol_version
                    self._set(generation, "ready", tools=tools)
                    await anyio.sleep_forever()
            if scope.cancelled_caught and not started:
                self._fail(generation, "did not start", f"no answer within {self._connect_timeout_s:g} s")
        except Exception as error:  # a server that cannot start must never take the app down
            self._fail(generation, "stopped" if started else "did not start", error)
        finally:
            self._client = None
            self._scope = None
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None

    async def call(self, remote_name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call a tool on this server.

        Raises:
            ToolCallError: when the server is not ready, fails the request or stops mid-call.
        """
        client = self._client
        with self._lock:
            generation, state = self._generation, self.state
        if client is None or state != "ready":
            raise ToolCallError(f"The MCP server {self.name!r} is not running ({self.state}).")
        try:
            return await client.call_tool(remote_name, arguments)
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                with self._lock:
                    switched_off = generation != self._generation
                if switched_off:
                    raise ToolCallError(
                        f"The MCP server {self.name!r} was switched off while running {remote_name}."
                    ) from None
                reason = "the connection closed during a tool call (did the server crash?)"
                self._fail(generation, "stopped", reason)
                self.cancel()
                raise ToolCallError(
                    f"The MCP server {self.name!r} stopped while running {remote_name}: {self.error or reason}"
                ) from None
            raise ToolCallError(f"The MCP server {self.name!r} refused the call: {error.message}") from None
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as error:
            raise ToolCallError(f"The call to {remote_name} on {self.name!r} failed: {describe_error(error)}") from None
