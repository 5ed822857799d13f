"""What the status bar says of the tools and of the running servers, made without an app."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, cast

from harmony_chat.server.registry import RegisteredServer
from harmony_chat.tui.screens.tooling import ChatTools, serving_status
from harmony_chat.tui.status import StatusState


@dataclass
class Server:
    state: str
    tool_count: int


class McpProvider:
    """A provider of several servers, each in its own state."""

    def __init__(self, *servers: Server) -> None:
        self.servers = list(servers)

    def servers_status(self) -> list[Server]:
        return self.servers


class PlainProvider:
    def specs(self) -> list[object]:
        return [object(), object(), object()]


def tools_with(*providers: object, builtins: int = 2) -> ChatTools:
    tools = ChatTools(cast(Any, None), cast(Any, None), lambda message: None)
    tools.runner = cast(Any, SimpleNamespace(tools=SimpleNamespace(builtins=[object()] * builtins)))
    tools.providers = cast(Any, list(providers))
    return tools


def test_the_status_is_unchanged_until_the_tools_have_started() -> None:
    shown = StatusState(model="m", tools_state="starting")
    assert ChatTools(cast(Any, None), cast(Any, None), lambda message: None).status(shown) is shown


def test_the_status_counts_the_tools_of_ready_servers_and_the_failed_servers() -> None:
    servers = McpProvider(Server("ready", 4), Server("failed", 9), Server("starting", 5), Server("disabled", 6))
    shown = StatusState(model="m", state="thinking")
    status = tools_with(PlainProvider(), servers).status(shown)
    assert status == replace(shown, tool_count=2 + 3 + 4, servers_failed=1, tools_state="starting")
    servers.servers = [Server("ready", 4), Server("ready", 5)]
    assert tools_with(servers, builtins=0).status(shown) == replace(
        shown, tool_count=9, servers_failed=0, tools_state="ready"
    )


def test_starting_tools_change_only_their_state() -> None:
    shown = StatusState(model="m", tool_count=3, state="idle")
    assert tools_with().status_starting(shown) == replace(shown, tools_state="starting")


def test_the_running_servers_are_named_in_order() -> None:
    shown = StatusState(model="m", serving=":9000")
    servers = [RegisteredServer(1, "127.0.0.1", 8000, "m", 1.0), RegisteredServer(2, "0.0.0.0", 8080, "m", 2.0)]
    assert serving_status(shown, servers) == replace(shown, serving=":8000 0.0.0.0:8080")
    assert serving_status(shown, []) == replace(shown, serving="")
