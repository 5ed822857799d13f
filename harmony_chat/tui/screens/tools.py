"""The ``/tools`` screen: each tool server's state, command or URL, tools and error; switch one off or on.

Servers connect in the background, so the screen reads their state again twice a second. Names,
commands, errors and tool descriptions come from the config file and the servers: shown as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static, Switch

from harmony_chat.tools.base import ToolProvider
from harmony_chat.tui.literal import literal

REFRESH_S = 0.5


class McpServerStatus(Protocol):
    """What the screen shows of one server (``ServerStatus`` of the MCP toolbox)."""

    @property
    def name(self) -> str:
        """The configured name."""
        ...

    @property
    def state(self) -> str:
        """``starting``, ``ready``, ``failed`` or ``disabled``."""
        ...

    @property
    def target(self) -> str:
        """The command line or URL."""
        ...

    @property
    def tool_count(self) -> int:
        """Tools offered when ready."""
        ...

    @property
    def error(self) -> str | None:
        """Why it failed."""
        ...


@runtime_checkable
class ServerControl(Protocol):
    """A provider made of servers that can be listed and switched (the MCP toolbox)."""

    def servers_status(self) -> Sequence[McpServerStatus]:
        """Each server's state."""
        ...

    def set_enabled(self, server: str, enabled: bool) -> None:
        """Switch a server on or off."""
        ...


def server_line(server: McpServerStatus) -> str:
    """One line about a server: name, state, tool count, command or URL."""
    count = f"{server.tool_count} tool{'' if server.tool_count == 1 else 's'}" if server.state == "ready" else ""
    return " · ".join(part for part in (server.name, server.state, count, server.target) if part)


class ServerRow(Vertical):
    """One server: a switch, its state line, its error, and its tools."""

    DEFAULT_CSS = """
    ServerRow { height: auto; margin: 0 0 1 0; }
    ServerRow Horizontal { height: auto; }
    ServerRow Switch { width: auto; }
    ServerRow .server-line { padding: 1 1 0 1; width: 1fr; }
    ServerRow .server-error { color: $error; padding: 0 1 0 10; }
    ServerRow .server-tools { color: $text-muted; padding: 0 1 0 10; }
    """

    def __init__(self, control: ServerControl, server: McpServerStatus) -> None:
        super().__init__()
        self.control = control
        self.server_name = server.name
        self.switch = Switch(server.state != "disabled", tooltip="Offer this server's tools to the model")
        self.line = Static("", classes="server-line", markup=False)
        self.error = Static("", classes="server-error", markup=False)
        self.tools = Static("", classes="server-tools", markup=False)

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        with Horizontal():
            yield self.switch
            yield self.line
        yield self.error
        yield self.tools

    def show(self, server: McpServerStatus, tools: list[str]) -> None:
        """Show the server's state now."""
        self.line.update(literal(server_line(server)))
        self.error.display = bool(server.error) and server.state == "failed"
        self.error.update(literal(server.error or ""))
        self.tools.display = bool(tools)
        self.tools.update(literal("tools: " + ", ".join(tools)))
        with self.switch.prevent(Switch.Changed):
            self.switch.value = server.state != "disabled"


class ToolsScreen(ModalScreen[None]):
    """The tool servers and their tools; a switch turns a server off (its tools leave the next prompt)."""

    BINDINGS = [Binding("escape,q", "dismiss(None)", "Close")]
    DEFAULT_CSS = """
    ToolsScreen { align: center middle; }
    ToolsScreen > Vertical { width: 90%; max-width: 120; height: 80%; border: round $primary; background: $surface; }
    ToolsScreen #tools-title { text-style: bold; padding: 0 1; }
    ToolsScreen #tools-other { padding: 0 1; }
    ToolsScreen #tools-keys { color: $text-muted; padding: 0 1; }
    """

    def __init__(self, providers: Sequence[ToolProvider]) -> None:
        super().__init__()
        self.providers = list(providers)
        self.rows: list[ServerRow] = []
        self.other = Static("", id="tools-other", markup=False)

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        with Vertical():
            yield Static("Tool servers", id="tools-title", markup=False)
            with VerticalScroll(id="tools-list"):
                for provider in self.providers:
                    if isinstance(provider, ServerControl):
                        for server in provider.servers_status():
                            row = ServerRow(provider, server)
                            self.rows.append(row)
                            yield row
                yield self.other
            yield Static("tab moves · space or enter switches a server · escape closes", id="tools-keys", markup=False)

    def on_mount(self) -> None:
        """Show the state and keep it current."""
        self.refresh_state()
        self.set_interval(REFRESH_S, self.refresh_state)
        if self.rows:
            self.rows[0].switch.focus()

    def refresh_state(self) -> None:
        """Read every server's state and tools again."""
        names: dict[str, list[str]] = {}
        for provider in self.providers:
            for spec in provider.specs():
                names.setdefault(spec.server, []).append(spec.name)
        shown: set[str] = set()
        for row in self.rows:
            for server in row.control.servers_status():
                if server.name == row.server_name:
                    row.show(server, names.get(server.name, []))
                    shown.add(server.name)
        rest = [f"{server}: {', '.join(tools)}" for server, tools in names.items() if server not in shown]
        if not self.rows and not rest:
            rest = ["No tools are available (yet)."]
        self.other.display = bool(rest)
        self.other.update(literal("\n".join(rest)))

    @on(Switch.Changed)
    def switched(self, event: Switch.Changed) -> None:
        """Switch a server on or off."""
        for row in self.rows:
            if row.switch is event.switch:
                row.control.set_enabled(row.server_name, event.value)
                state = "on" if event.value else "off"
                self.notify(f"Server {row.server_name!r} switched {state}.", markup=False)
        self.refresh_state()
