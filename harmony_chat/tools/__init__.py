"""Tools the model can call: MCP servers now, built-in tools later. No UI imports.

The conversation core codes against ``ToolProvider`` (``base``):

- ``specs() -> list[ToolSpec]``: the tools available now. Offer each to the model with
  ``ToolDescription.new(spec.name, spec.description, parameters=spec.parameters)`` inside
  ``DeveloperContent.with_function_tools``; the model addresses it as ``spec.recipient``
  (``functions.<name>``). ``spec.server`` / ``spec.remote_name`` say where it runs;
  ``spec.input_schema`` is the original JSON Schema (for an argument grammar).
- ``call(name, arguments, *, timeout_s, should_stop) -> ToolResult``: blocks (run it in a worker
  thread), never raises. ``result.text`` is what the model receives (capped by
  ``output.cap_output``, ``result.truncated`` says so), ``result.status`` is ``done``,
  ``failed``, ``timeout`` or ``cancelled`` (``denied`` is for the approval step to produce),
  ``result.elapsed_s`` the wall time.
- ``close()``.

MCP (``mcp_client.McpToolbox``, over the official ``mcp`` SDK; importing it loads the SDK, about
a second, so do it off the UI thread)::

    servers = parse_servers(toml["mcp"]["servers"], str(path), base_dir=path.parent)  # mcp_config
    servers |= load_mcp_json(Path(json_file))                  # {"mcpServers": {...}} files
    box = McpToolbox(servers, on_notice=..., on_change=...)  # callbacks run on the toolbox thread
    box.start()               # returns at once; servers connect in the background
    box.wait_ready(10.0)      # ask/tests: block until no server is still starting
    box.notices()             # one line per server that failed to start or stopped, oldest first
    box.servers_status()      # [ServerStatus(name, state, target, tool_count, error, protocol)]
    box.set_enabled("web", False)
    box.close()               # stops every server process and the loop thread

Errors in settings are ``mcp_config.McpConfigError`` (a ``HarmonyChatError``), one line naming
the file and the server.
"""

from __future__ import annotations

from harmony_chat.tools.base import (
    DEFAULT_TOOL_TIMEOUT_S,
    TOOL_STATUSES,
    ToolProvider,
    ToolResult,
    ToolSpec,
    ToolStatus,
)

__all__ = ["DEFAULT_TOOL_TIMEOUT_S", "TOOL_STATUSES", "ToolProvider", "ToolResult", "ToolSpec", "ToolStatus"]
