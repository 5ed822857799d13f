"""``McpToolbox``: the tools of the configured MCP servers, as one thread-safe ``ToolProvider``.

The toolbox runs its own asyncio loop in a daemon thread, so a Textual app and the blocking
``ask`` command use it the same way. ``start`` returns at once and servers connect in the
background; ``wait_ready`` blocks until none is still starting. A server that fails becomes one
notice (``notices`` or the ``on_notice`` callback), never an exception.
``call`` blocks its caller (a worker thread, never the loop's), polls ``should_stop`` every
50 ms, and turns every failure into a ``ToolResult``. ``close`` stops every server and the loop.
Callbacks run on the toolbox's thread: a UI must hand them over to its own thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from harmony_chat.tools.base import ToolResult, ToolSpec, ToolStatus
from harmony_chat.tools.mcp_config import McpServerConfig
from harmony_chat.tools.mcp_connection import ServerConnection, ServerStatus, ToolCallError, describe_error
from harmony_chat.tools.mcp_content import result_text
from harmony_chat.tools.naming import ToolNames
from harmony_chat.tools.output import OUTPUT_LIMIT_BYTES, cap_output
from harmony_chat.tools.schema import to_harmony_parameters

POLL_S = 0.05
"""How often a blocked ``call`` checks ``should_stop`` and its deadline."""
CONNECT_TIMEOUT_S = 30.0
"""How long a server may take to start and list its tools."""
CLOSE_TIMEOUT_S = 10.0
"""How long ``close`` waits for the servers to stop (the SDK kills stdio servers after ~4 s)."""

for _library in ("mcp", "httpx2"):
    # Keep the SDK's log records off stderr (Python's last-resort handler) where they would tear the TUI.
    logging.getLogger(_library).addHandler(logging.NullHandler())


class McpToolbox:
    """The tools of a set of MCP servers, listed and called from any thread."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        output_limit_bytes: int = OUTPUT_LIMIT_BYTES,
        on_notice: Callable[[str], None] | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self._lock = threading.Condition()
        self._output_limit = output_limit_bytes
        self._on_notice = on_notice
        self._on_change = on_change
        self._notices: list[str] = []
        self._connections = {
            name: ServerConnection(
                name,
                config,
                lock=self._lock,
                connect_timeout_s=connect_timeout_s,
                on_change=self._changed,
                on_notice=self._notice,
            )
            for name, config in servers.items()
        }
        self._parameters: dict[tuple[str, str], dict[str, Any] | None] = {}
        """Converted schemas by (server, tool), dropped when the server changes."""
        self._names = ToolNames()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._closed = False

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Start connecting every enabled server in the background; returns at once (idempotent)."""
        with self._lock:
            if self._loop is not None or self._closed:
                return
            loop = self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._run_loop, args=(loop, started), name="mcp-toolbox", daemon=True)
        self._thread.start()
        started.wait()
        for connection in self._connections.values():
            if connection.state == "starting":
                loop.call_soon_threadsafe(self._launch, connection)

    def _run_loop(self, loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(started.set)
        try:
            loop.run_forever()
        finally:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def _launch(self, connection: ServerConnection) -> None:
        """(Loop thread) run the connection once its previous run, if any, has finished."""
        previous = self._tasks.get(connection.name)

        async def run_after_previous() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            if not self._closed and connection.state == "starting":
                await connection.run()

        self._tasks[connection.name] = asyncio.ensure_future(run_after_previous())

    def wait_ready(self, timeout_s: float) -> bool:
        """Block until no server is starting (True), or ``timeout_s`` passes (False; at once before ``start``)."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            if self._loop is None:
                return not any(connection.state == "starting" for connection in self._connections.values())
            while any(connection.state == "starting" for connection in self._connections.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self) -> None:
        """Stop every server and the loop thread; no child process outlives this (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            for connection in self._connections.values():
                connection.disable()
            return

        async def shutdown() -> None:
            for connection in self._connections.values():
                connection.disable()
                connection.cancel()
            tasks = list(self._tasks.values())
            if tasks:
                await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT_S)

        if loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(shutdown(), loop).result(CLOSE_TIMEOUT_S + 2)
            except Exception as error:  # closing must finish even if a server misbehaves
                self._notice(f"MCP servers did not all stop cleanly: {describe_error(error)}")
            loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_TIMEOUT_S)

    def __enter__(self) -> McpToolbox:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- state ------------------------------------------------------------------------------

    def _changed(self, connection: ServerConnection) -> None:
        with self._lock:
            self._parameters = {key: value for key, value in self._parameters.items() if key[0] != connection.name}
            self._lock.notify_all()
        if self._on_change is not None:
            self._on_change()

    def _notice(self, text: str) -> None:
        with self._lock:
            self._notices.append(text)
        if self._on_notice is not None:
            self._on_notice(text)

    def notices(self) -> list[str]:
        """Every notice so far (servers that failed to start or stopped), oldest first."""
        with self._lock:
            return list(self._notices)

    def servers_status(self) -> list[ServerStatus]:
        """Each configured server's state, tool count and error, in config order."""
        with self._lock:
            return [connection.status() for connection in self._connections.values()]

    def set_enabled(self, server: str, enabled: bool) -> None:
        """Switch a server on (it connects again, also after a failure) or off (its tools leave ``specs`` at once).

        Raises:
            KeyError: when no server has that name.
        """
        connection = self._connections[server]
        with self._lock:
            loop = None if self._closed else self._loop
        if enabled and connection.enable() and loop is not None:
            loop.call_soon_threadsafe(self._launch, connection)
        elif not enabled and connection.disable() and loop is not None:
            loop.call_soon_threadsafe(connection.cancel)

    def specs(self) -> list[ToolSpec]:
        """The tools of every ready server, in config order, with unique names.

        Names are given in config order among the servers ready when first listed (so call
        ``wait_ready`` first for the config order to decide collisions) and never change meaning.
        """
        with self._lock:
            specs = []
            for connection in self._connections.values():
                if connection.state != "ready":
                    continue
                for tool in connection.tools:
                    specs.append(
                        ToolSpec(
                            name=self._names.name_for(connection.name, tool.name),
                            server=connection.name,
                            remote_name=tool.name,
                            description=tool.description or "",
                            parameters=self._converted(connection.name, tool.name, tool.input_schema),
                            input_schema=tool.input_schema,
                        )
                    )
            return specs

    def _converted(self, server: str, tool: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        key = (server, tool)
        if key not in self._parameters:
            self._parameters[key] = to_harmony_parameters(schema)
        return self._parameters[key]

    # -- calls ------------------------------------------------------------------------------

    def call(
        self,
        name: str,
        arguments: dict[str, object],
        *,
        timeout_s: float,
        should_stop: Callable[[], bool],
    ) -> ToolResult:
        """Run tool ``name`` (``functions.`` prefix optional) until it ends, is stopped or times out; never raises."""
        started = time.monotonic()

        def ended(text: str, status: ToolStatus, truncated: bool = False) -> ToolResult:
            return ToolResult(text, status, truncated, time.monotonic() - started)

        name = name.removeprefix("functions.")
        try:
            if threading.current_thread() is self._thread:
                return ended(f"{name} cannot be called from the toolbox's own thread.", "failed")
            if should_stop():
                return ended(f"The user stopped {name} before it started.", "cancelled")
            spec = next((spec for spec in self.specs() if spec.name == name), None)
            loop = self._loop
            if spec is None or loop is None or self._closed:
                return ended(self._unknown_tool(name), "failed")
            connection = self._connections[spec.server]
            future = asyncio.run_coroutine_threadsafe(connection.call(spec.remote_name, dict(arguments)), loop)
            deadline = started + timeout_s
            while True:
                try:
                    result = future.result(timeout=max(0.0, min(POLL_S, deadline - time.monotonic())))
                    break
                except concurrent.futures.TimeoutError:
                    if should_stop():
                        future.cancel()
                        return ended(f"The user stopped {name} before it finished.", "cancelled")
                    if time.monotonic() >= deadline:
                        future.cancel()
                        return ended(f"{name} did not finish within {timeout_s:g} s and was stopped.", "timeout")
            capped = cap_output(result_text(result), self._output_limit)
            return ended(capped.text, "failed" if result.is_error else "done", capped.truncated)
        except ToolCallError as error:
            return ended(str(error), "failed")
        except concurrent.futures.CancelledError:
            return ended(f"{name} was stopped because the tools shut down.", "cancelled")
        except Exception as error:  # the model must get a result whatever happens
            return ended(f"{name} failed: {describe_error(error)}", "failed")

    def _unknown_tool(self, name: str) -> str:
        with self._lock:
            owner = self._names.owner(name)
            connection = self._connections.get(owner[0]) if owner else None
            state = connection.status() if connection else None
        if self._closed:
            return f"{name} is not available: the tools have been shut down."
        if state is not None and state.state != "ready":
            why = {"failed": f"has stopped ({state.error})", "disabled": "is switched off"}.get(state.state)
            return f"{name} is not available now: its MCP server {state.name!r} {why or 'is still starting'}."
        available = ", ".join(spec.name for spec in self.specs())
        return f"There is no tool named {name}." + (f" Available tools: {available}." if available else "")
