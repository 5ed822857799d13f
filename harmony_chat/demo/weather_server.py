"""The demo's weather tool as a real MCP server (stdio), for the pocket gpt-oss's tool loop.

``python -m harmony_chat.demo.weather_server`` serves one tool, ``get_weather``, with the name,
description and parameters the pocket model was trained on. The weather is made up: fixed for
the cities the pocket model knows, derived from the name for any other city.
"""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer

KNOWN = {
    "paris": (18, "sunny"),
    "tokyo": (24, "cloudy"),
    "oslo": (3, "snowing"),
}
CONDITIONS = ("sunny", "cloudy", "raining", "windy", "snowing", "foggy")

server = MCPServer("harmony-chat-demo-weather", log_level="WARNING")


def weather(location: str) -> dict[str, object]:
    """The made-up weather in ``location`` (the same every time)."""
    known = KNOWN.get(location.strip().lower())
    if known is not None:
        temperature, condition = known
    else:
        seed = sum(location.strip().lower().encode("utf-8"))
        temperature, condition = seed % 35 - 5, CONDITIONS[seed % len(CONDITIONS)]
    return {"temperature": temperature, "condition": condition}


@server.tool()
def get_weather(location: str) -> str:
    """Gets the current weather in a city."""
    return json.dumps(weather(location))


if __name__ == "__main__":
    server.run()
