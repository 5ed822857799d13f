"""A real MCP server for the tool tests, written with the official SDK.

Run over stdio by default; ``--http`` serves streamable HTTP on 127.0.0.1 at a free port and
prints ``PORT <n>`` on stdout once it listens. ``--legacy`` refuses the 2026 protocol's
``server/discover`` as servers built with older SDKs do, so clients fall back to
``initialize`` and the 2025 protocol (whose HTTP responses stream as server-sent events).
``hang`` records that it started and that it was cancelled in the folder named by
``MCP_TEST_MARKERS`` (when set), so tests can see the cancellation reach the server.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, JSONRPCRequest
from mcp_types import METHOD_NOT_FOUND
from pydantic import BaseModel, Field

server = MCPServer("harmony-chat-test-server", log_level="WARNING")

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


BIG_LINE = "0123456789abcdefghijklmnopqrstuvwxyz" * 2 + "0123456789\n"
"""What ``big`` repeats."""


def forecast(location: str, unit: str = "celsius") -> str:
    """The deterministic forecast ``get_weather`` returns (tests compute it too)."""
    celsius = 5 + sum(location.encode("utf-8")) % 25
    if unit == "fahrenheit":
        return f"{location}: {celsius * 9 // 5 + 32} °F, sunny"
    return f"{location}: {celsius} °C, sunny"


@server.tool()
def get_weather(location: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the current weather in a location."""
    return forecast(location, unit)


@server.tool()
async def hang(tag: str = "hang") -> str:
    """Never return (until cancelled)."""
    markers = os.environ.get("MCP_TEST_MARKERS")
    if markers:
        Path(markers, f"{tag}.started").write_text("started")
    try:
        await anyio.sleep_forever()
    finally:
        if markers:
            Path(markers, f"{tag}.cancelled").write_text("cancelled")
    return "unreachable"


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


@server.tool()
def big(megabytes: int = 10) -> str:
    """Return about ``megabytes`` MB of text."""
    return BIG_LINE * (megabytes * 1024 * 1024 // len(BIG_LINE))


@server.tool()
def fail(reason: str = "the tool failed on purpose") -> str:
    """Report an error (the result has isError set)."""
    raise ToolError(reason)


@server.tool(structured_output=False)
def picture() -> list[str | Image]:
    """Return some text and a 1x1 PNG image."""
    return ["here is a picture", Image(data=PNG_1X1, format="png")]


@server.tool()
def read_env(name: str) -> str:
    """Return the value of an environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@server.tool()
def read_header(name: str, ctx: Context) -> str:
    """Return an HTTP request header the client sent (streamable HTTP only)."""
    headers = ctx.headers or {}
    return headers.get(name.lower(), "<unset>")


@server.tool()
def server_pid() -> int:
    """Return the server's process id."""
    return os.getpid()


class Stop(BaseModel):
    """A stop on the trip."""

    city: str = Field(description="The city")
    nights: int = 1


class Leg(BaseModel):
    """A leg between stops, which may hold a nested trip."""

    mode: Literal["train", "bus"]
    detour: Leg | None = None


@server.tool()
def plan_trip(
    start: Stop | str,
    stops: list[Stop],
    legs: list[Leg] | None = None,
    budget: int | float | None = None,
    notes: Any = None,
) -> str:
    """Plan a trip (its schema has unions, shared definitions, a recursive model and an untyped field)."""
    first = start.city if isinstance(start, Stop) else start
    return f"trip from {first} via {', '.join(stop.city for stop in stops)}; legs={len(legs or [])}; budget={budget}"


async def _run_legacy_stdio() -> None:
    """Serve stdio as a pre-2026 server: ``server/discover`` never reaches the SDK's era detection."""
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def filter_discover() -> None:
            async with send:
                async for item in read_stream:
                    message = getattr(item, "message", None)
                    if isinstance(message, JSONRPCRequest) and message.method == "server/discover":
                        refusal = ErrorData(code=METHOD_NOT_FOUND, message="Method not found")
                        await write_stream.send(
                            SessionMessage(JSONRPCError(jsonrpc="2.0", id=message.id, error=refusal))
                        )
                    else:
                        await send.send(item)

        lowlevel = server._lowlevel_server
        async with anyio.create_task_group() as group:
            group.start_soon(filter_discover)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()


async def _refuse_discover(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Answer ``server/discover`` as a server built before the 2026 protocol does: method not found."""
    if ctx.method == "server/discover":
        raise MCPError(code=METHOD_NOT_FOUND, message="Method not found")
    return await call_next(ctx)


def _serve_http() -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if "--legacy" in sys.argv[1:]:
        server.middleware.append(_refuse_discover)
    if "--http" in sys.argv[1:]:
        _serve_http()
    elif "--legacy" in sys.argv[1:]:
        anyio.run(_run_legacy_stdio)
    else:
        server.run("stdio")
