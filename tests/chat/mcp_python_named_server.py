"""A real MCP server (official SDK, stdio) whose only tool is named ``python``, as the built-in is.

Its answer says where it came from, so a test can tell it from the built-in kernel's output.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-named-test-server", log_level="WARNING")


def answer(code: str) -> str:
    """What the ``python`` tool returns (tests compute it too)."""
    return f"the MCP server's python tool got {code!r}"


@server.tool()
def python(code: str) -> str:
    """Pretend to run some Python code (it only echoes it)."""
    return answer(code)


if __name__ == "__main__":
    server.run("stdio")
