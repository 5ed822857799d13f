"""MCP server settings: the config file's ``[mcp.servers.NAME]`` tables and other clients' JSON.

A server is either a command run over stdio (``command``, ``args``, ``env``, ``cwd``) or a
streamable HTTP endpoint (``url``, ``headers``); ``enabled = false`` keeps it configured but off.
The JSON form other MCP clients write, ``{"mcpServers": {"NAME": {...}}}``, is read by
``load_mcp_json``; its extra keys (``type``, ``disabled``, client-specific options) are understood
or ignored. Every problem is one ``McpConfigError`` line naming the file and the server.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harmony_chat.errors import HarmonyChatError

Transport = Literal["stdio", "http"]

_HTTP_TYPES = ("http", "streamable-http", "streamable_http", "streamablehttp")
"""``type`` values other clients use for streamable HTTP (compared lower-cased)."""


class McpConfigError(HarmonyChatError):
    """MCP server settings that cannot be read or hold a bad value."""


class McpServerConfig(BaseModel):
    """One MCP server: a stdio command or a streamable HTTP URL."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    """The program to run (stdio)."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment for the server; it otherwise gets only the SDK's safe variables (PATH, HOME...)."""
    cwd: str | None = None
    """The server's working directory."""
    url: str | None = None
    """A streamable HTTP endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers sent with every request (for example an ``Authorization`` token)."""
    enabled: bool = True

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("needs either 'command' (a program run over stdio) or 'url' (streamable HTTP), not both")
        if self.command is not None and not self.command.strip():
            raise ValueError("'command' is empty")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"'url' must start with http:// or https://, not {self.url!r}")
        if self.command is not None and self.headers:
            raise ValueError("'headers' only apply to a 'url' server")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("'args', 'env' and 'cwd' only apply to a 'command' server")
        return self

    @property
    def transport(self) -> Transport:
        """``stdio`` for a command, ``http`` for a URL."""
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """The command line or URL, for notices and the ``/tools`` view."""
        if self.command is not None:
            return shlex.join([self.command, *self.args])
        return str(self.url)


def _pydantic_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        return f"unknown setting {where!r}"
    return f"{where}: {message}" if where else message


def _server(name: str, raw: object, source: str, base_dir: Path | None, lenient: bool) -> McpServerConfig:
    where = f"{source}: MCP server {name!r}"
    if not isinstance(raw, Mapping):
        raise McpConfigError(f"{where} must be a table of settings")
    values: dict[str, Any] = dict(raw)
    if lenient:
        kind = str(values.pop("type", values.pop("transport", ""))).lower()
        if kind == "sse":
            raise McpConfigError(f"{where} uses the old SSE transport; point 'url' at its streamable HTTP endpoint")
        if kind and kind != "stdio" and kind not in _HTTP_TYPES:
            raise McpConfigError(f"{where}: unknown transport type {kind!r}")
        if "disabled" in values:
            values["enabled"] = not values.pop("disabled")
        known = set(McpServerConfig.model_fields)
        values = {key: value for key, value in values.items() if key in known}
    try:
        config = McpServerConfig.model_validate(values)
    except ValidationError as error:
        raise McpConfigError(f"{where}: {_pydantic_problem(error)}") from None
    if config.cwd is not None:
        cwd = Path(config.cwd).expanduser()
        if base_dir is not None and not cwd.is_absolute():
            cwd = base_dir / cwd
        config = config.model_copy(update={"cwd": str(cwd)})
    return config


def parse_servers(
    table: Mapping[str, object], source: str, *, base_dir: Path | None = None, lenient: bool = False
) -> dict[str, McpServerConfig]:
    """Validate ``{NAME: {command|url, ...}}`` (the ``[mcp.servers]`` table), keeping its order.

    ``source`` names the file in errors; a relative ``cwd`` is taken from ``base_dir``. With
    ``lenient`` (other clients' JSON), unknown keys are ignored and ``type``/``disabled`` understood.

    Raises:
        McpConfigError: naming ``source`` and the server for the first bad entry.
    """
    servers: dict[str, McpServerConfig] = {}
    for name, raw in table.items():
        if not isinstance(name, str) or not name.strip():
            raise McpConfigError(f"{source}: an MCP server needs a non-empty name")
        servers[name] = _server(name, raw, source, base_dir, lenient)
    return servers


def parse_mcp_json(text: str, source: str, *, base_dir: Path | None = None) -> dict[str, McpServerConfig]:
    """Parse the ``{"mcpServers": {...}}`` JSON other MCP clients use (``servers`` works too).

    Raises:
        McpConfigError: for invalid JSON or a bad entry, naming ``source``.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise McpConfigError(f"{source}: not valid JSON ({where}: {error.msg})") from None
    except RecursionError:  # nested deeper than Python's stack
        raise McpConfigError(f"{source}: not valid MCP JSON (it nests too deeply)") from None
    if not isinstance(data, dict):
        raise McpConfigError(f'{source}: expected a JSON object with "mcpServers"')
    table = data.get("mcpServers", data.get("servers"))
    if table is None:
        raise McpConfigError(f'{source}: no "mcpServers" object')
    if not isinstance(table, dict):
        raise McpConfigError(f'{source}: "mcpServers" must be an object of servers')
    return parse_servers(table, source, base_dir=base_dir, lenient=True)


def load_mcp_json(path: Path) -> dict[str, McpServerConfig]:
    """Read an MCP JSON file (``--mcp-config FILE``, ``[mcp] import = "PATH"``).

    Raises:
        McpConfigError: when the file is missing, unreadable, not JSON or holds a bad entry.
    """
    path = path.expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise McpConfigError(f"MCP config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise McpConfigError(f"cannot read MCP config file {path}: {error}") from None
    return parse_mcp_json(text, str(path), base_dir=path.parent)
