"""Fixtures for the browser tests: the loopback web server, browsers configured for it, a fake internet."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import httpcore
import pytest

from harmony_chat.tools.base import ToolResult
from harmony_chat.tools.browser import BrowserConfig, BrowserTool
from tests.tools.browser.web_server import WebServer

PUBLIC_ADDRESS = "93.184.215.14"
"""A public internet address the fake internet routes to the loopback server."""


@pytest.fixture(scope="session")
def web() -> Iterator[WebServer]:
    server = WebServer().start()
    yield server
    server.stop()


def browser_config(web: WebServer, **changes: object) -> BrowserConfig:
    """A config for the loopback server: loopback allowed, small limits so the bad cases stay fast."""
    values: dict[str, object] = {
        "provider": "searxng",
        "url": web.url,
        "allow_private": True,
        "max_page_bytes": 64 * 1024,
        "fetch_timeout_s": 3.0,
        "read_timeout_s": 1.0,
        "connect_timeout_s": 2.0,
        "search_timeout_s": 3.0,
    }
    values.update(changes)
    return BrowserConfig(**values)  # type: ignore[arg-type]


class RoutedNetwork(httpcore.NetworkBackend):
    """A fake internet: connections to ``PUBLIC_ADDRESS`` reach the loopback server; others go as asked."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.inner = httpcore.SyncBackend()
        self.dialled: list[tuple[str, int]] = []

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        self.dialled.append((host, port))
        if host == PUBLIC_ADDRESS:
            host, port = "127.0.0.1", self.port
        return self.inner.connect_tcp(host, port, timeout, local_address, socket_options)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def never() -> bool:
    return False


def call(tool: BrowserTool, recipient: str, arguments: str, timeout_s: float = 10.0) -> ToolResult:
    """Run one browser call with no stop request."""
    return tool.run(recipient, arguments, timeout_s=timeout_s, should_stop=never)


@pytest.fixture
def make_tool(web: WebServer) -> Iterator[Callable[..., BrowserTool]]:
    """Build browsers for the loopback server (closed after the test); keyword arguments change the config."""
    tools: list[BrowserTool] = []

    def build(**changes: object) -> BrowserTool:
        hooks = {
            key: changes.pop(key)
            for key in ("resolver", "network", "search_provider", "output_limit_bytes")
            if key in changes
        }
        tool = BrowserTool(browser_config(web, **changes), **hooks)  # type: ignore[arg-type]
        tools.append(tool)
        return tool

    yield build
    for tool in tools:
        tool.close()
