"""The demo's weather tool as a real MCP server (stdio), for the pocket gpt-oss's tool loop.

``python -m harmony_chat.demo.weather_server`` serves one tool, ``get_weather``, with the name,
description and parameters the pocket model was trained on. The weather is made up: fixed for
the cities the pocket model knows, derived from the name for any other city.
"""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer

from harmony_chat.demo.weather import weather

server = MCPServer("harmony-chat-demo-weather", log_level="WARNING")


@server.tool()
def get_weather(location: str) -> str:
    """Gets the current weather in a city."""
    return json.dumps(weather(location))


if __name__ == "__main__":
    server.run()
