"""What every tool provider hands the conversation core: tool specs, results and the provider protocol.

No UI imports. A provider's ``call`` blocks, is safe to call from any thread but its own, and
never raises: every failure (a bad name, a crashed server, a timeout) comes back as a
``ToolResult`` whose text the model reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

ToolStatus = Literal["done", "failed", "timeout", "cancelled", "denied"]
"""How a tool call ended: ``done`` (it ran), ``failed`` (it ran and reported an error, or could not
run), ``timeout`` (stopped after the time limit), ``cancelled`` (stopped by the user), ``denied``
(the user refused it; providers never return this, the approval step does)."""

TOOL_STATUSES: tuple[ToolStatus, ...] = ("done", "failed", "timeout", "cancelled", "denied")

ApprovalMode = Literal["ask", "all", "none"]
"""Whose approval a tool call needs: ``ask`` the user for each call, run ``all`` without asking, or run ``none``
(the conversation core applies it, see :mod:`harmony_chat.chat.approval`)."""

DEFAULT_TOOL_TIMEOUT_S = 120.0
"""A reasonable ``timeout_s`` for ``ToolProvider.call`` when the user configured none."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool offered to the model as a harmony function tool (``functions.<name>``)."""

    name: str
    """The function name the model calls, unique among all specs a provider lists."""
    server: str
    """The configured server (or built-in provider) the tool belongs to."""
    remote_name: str
    """The tool's own name on that server."""
    description: str
    parameters: dict[str, Any] | None
    """The schema converted for harmony: pass to ``ToolDescription.new(name, description, parameters)``."""
    source: str = "mcp"
    """Where the tool comes from: ``mcp`` for MCP servers."""
    input_schema: Mapping[str, Any] | None = field(default=None, compare=False)
    """The tool's original JSON Schema, unconverted (for argument grammars and validation)."""

    @property
    def recipient(self) -> str:
        """The harmony recipient the model addresses: ``functions.<name>``."""
        return f"functions.{self.name}"


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call: what the model receives, and how it ended."""

    text: str
    """The text sent back to the model as the tool message (already capped)."""
    status: ToolStatus
    truncated: bool = False
    """True when the output was cut to the output limit (the text says so too)."""
    elapsed_s: float = 0.0

    @property
    def is_error(self) -> bool:
        """True for every status but ``done``."""
        return self.status != "done"


class ToolProvider(Protocol):
    """A source of tools the conversation core can list and call."""

    def specs(self) -> list[ToolSpec]:
        """Return the tools available now (names unique, stable in order)."""
        ...

    def call(
        self,
        name: str,
        arguments: dict[str, object],
        *,
        timeout_s: float,
        should_stop: Callable[[], bool],
    ) -> ToolResult:
        """Run tool ``name`` (a ``ToolSpec.name``) and block until it ends; never raises.

        ``should_stop`` is polled about every 50 ms; when it returns True the call is cancelled
        and a ``cancelled`` result comes back at once. After ``timeout_s`` seconds the call is
        stopped and a ``timeout`` result comes back.
        """
        ...

    def close(self) -> None:
        """Stop everything the provider started; safe to call twice."""
        ...
