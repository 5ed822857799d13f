"""MCP server settings: the ``[mcp.servers.NAME]`` tables and the ``{"mcpServers": ...}`` JSON of other clients."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from harmony_chat.errors import HarmonyChatError
from harmony_chat.tools.mcp_config import McpConfigError, McpServerConfig, load_mcp_json, parse_servers

TOML = """
[mcp.servers.weather]
command = "uvx"
args = ["mcp-weather", "--units", "metric"]
env = { API_KEY = "k" }
cwd = "servers"

[mcp.servers.docs]
url = "https://docs.example/mcp"
headers = { Authorization = "Bearer t" }
enabled = false
"""


def test_toml_tables_parse_in_order(tmp_path: Path) -> None:
    servers = parse_servers(tomllib.loads(TOML)["mcp"]["servers"], "config.toml", base_dir=tmp_path)
    assert list(servers) == ["weather", "docs"]
    weather, docs = servers["weather"], servers["docs"]
    assert (weather.transport, weather.args, weather.env, weather.enabled) == (
        "stdio",
        ["mcp-weather", "--units", "metric"],
        {"API_KEY": "k"},
        True,
    )
    assert weather.cwd == str(tmp_path / "servers")
    assert weather.describe() == "uvx mcp-weather --units metric"
    assert (docs.transport, docs.url, docs.headers, docs.enabled) == (
        "http",
        "https://docs.example/mcp",
        {"Authorization": "Bearer t"},
        False,
    )
    assert docs.describe() == "https://docs.example/mcp"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"x": {"args": ["a"]}}, "config.toml: MCP server 'x': needs either 'command'"),
        ({"x": {"command": "a", "url": "http://h/mcp"}}, "needs either 'command'"),
        ({"x": {"command": "a", "comand": "b"}}, "config.toml: MCP server 'x': unknown setting 'comand'"),
        ({"x": {"command": "a", "args": "--flag"}}, "MCP server 'x': args: Input should be a valid list"),
        ({"x": {"url": "ftp://h"}}, "'url' must start with http:// or https://"),
        ({"x": {"url": "http://h/mcp", "args": ["a"]}}, "only apply to a 'command' server"),
        ({"x": {"command": "a", "headers": {"A": "b"}}}, "'headers' only apply to a 'url' server"),
        ({"x": "uvx thing"}, "MCP server 'x' must be a table"),
        ({"x": {"command": "  "}}, "'command' is empty"),
    ],
)
def test_bad_entries_are_one_line_naming_file_and_server(table: dict[str, object], message: str) -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_servers(table, "config.toml")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, HarmonyChatError)


def test_other_clients_json_is_read_leniently(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    data = {
        "globalShortcut": "ctrl+space",
        "mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@mcp/fs", "."], "env": {"DEBUG": "1"}, "autoApprove": ["read"]},
            "remote": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "y"}},
            "old": {"command": "legacy-server", "disabled": True, "timeout": 60},
            "here": {"type": "stdio", "command": "srv", "cwd": "sub"},
        },
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    servers = load_mcp_json(path)
    assert list(servers) == ["fs", "remote", "old", "here"]
    assert servers["fs"] == McpServerConfig(command="npx", args=["-y", "@mcp/fs", "."], env={"DEBUG": "1"})
    assert servers["remote"].transport == "http" and servers["remote"].headers == {"X": "y"}
    assert servers["old"].enabled is False
    assert servers["here"].cwd == str(tmp_path / "sub")


def test_vscode_style_servers_key_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {"a": {"type": "http", "url": "https://a/mcp"}}}', encoding="utf-8")
    assert load_mcp_json(path)["a"].url == "https://a/mcp"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {"a": {"command": "x",}}}', "not valid JSON (line 1, column "),
        ("[1, 2]", 'expected a JSON object with "mcpServers"'),
        ('{"other": {}}', 'no "mcpServers" object'),
        ('{"mcpServers": ["a"]}', '"mcpServers" must be an object'),
        ('{"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}', "MCP server 'a' uses the old SSE transport"),
        ('{"mcpServers": {"a": {"type": "websocket", "url": "ws://h"}}}', "unknown transport type 'websocket'"),
        ('{"mcpServers": {"a": {"command": 3}}}', "MCP server 'a': command: Input should be a valid string"),
    ],
)
def test_bad_json_is_one_line_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(McpConfigError) as caught:
        load_mcp_json(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_missing_json_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match=r"MCP config file .*nope\.json does not exist"):
        load_mcp_json(tmp_path / "nope.json")
