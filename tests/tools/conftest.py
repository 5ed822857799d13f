"""Fixtures for the tools tests: the test MCP server over stdio and over streamable HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from openai_harmony import (
    Conversation,
    DeveloperContent,
    HarmonyEncoding,
    Message,
    Role,
    ToolDescription,
)

from harmony_chat.tools.base import ToolSpec

SERVER_SCRIPT = Path(__file__).resolve().parent / "mcp_test_server.py"
START_TIMEOUT_S = 30.0


def render_tools(encoding: HarmonyEncoding, specs: list[ToolSpec]) -> str:
    """The developer message harmony renders for ``specs``, as text."""
    tools = [ToolDescription.new(spec.name, spec.description, parameters=spec.parameters) for spec in specs]
    developer = DeveloperContent.new().with_function_tools(tools)
    conversation = Conversation.from_messages([Message.from_role_and_content(Role.DEVELOPER, developer)])
    return str(encoding.decode_utf8(encoding.render_conversation_for_completion(conversation, Role.ASSISTANT)))


def stdio_toml(name: str, markers: Path, *, enabled: bool = True, legacy: bool = False) -> str:
    """A ``[mcp.servers.NAME]`` table that runs the test server over stdio."""
    args = [str(SERVER_SCRIPT), *(["--legacy"] if legacy else [])]
    return (
        f"[mcp.servers.{name}]\n"
        f"command = {str(sys.executable)!r}\n"
        f"args = [{', '.join(repr(arg) for arg in args)}]\n"
        f"env = {{ MCP_TEST_MARKERS = {str(markers)!r}, GREETING = 'hello from the config' }}\n"
        f"enabled = {'true' if enabled else 'false'}\n"
    )


@pytest.fixture(scope="session")
def markers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the test server's ``hang`` tool records that it started and was cancelled."""
    return tmp_path_factory.mktemp("mcp-markers")


@contextmanager
def http_server(markers: Path, *, legacy: bool = False) -> Iterator[str]:
    """Run the test server over streamable HTTP on 127.0.0.1 (a free port); yield its URL."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--http", *(["--legacy"] if legacy else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "MCP_TEST_MARKERS": str(markers)},
    )
    stdout = process.stdout
    assert stdout is not None
    first_line: list[str] = []
    reader = threading.Thread(target=lambda: first_line.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    try:
        if not first_line or not first_line[0].startswith("PORT "):
            raise RuntimeError(f"the HTTP test server did not start: {first_line!r}")
        yield f"http://127.0.0.1:{int(first_line[0].split()[1])}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        stdout.close()


@pytest.fixture(scope="session")
def http_url(markers: Path) -> Iterator[str]:
    """The test server over streamable HTTP, shared by the whole session."""
    with http_server(markers) as url:
        yield url


@pytest.fixture(scope="session")
def legacy_http_url(markers: Path) -> Iterator[str]:
    """The test server over streamable HTTP speaking only the 2025 protocol."""
    with http_server(markers, legacy=True) as url:
        yield url
