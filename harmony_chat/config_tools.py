"""The config file's tool sections: ``[tools]``, ``[tools.browser]`` and ``[mcp]``. No UI imports.

They are part of :class:`harmony_chat.config.Settings`; like every section, each field's docstring
is its documentation in the README's generated config reference.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from harmony_chat.config_section import Section as _Section
from harmony_chat.tools.base import ApprovalMode
from harmony_chat.tools.browser.config import ProviderName
from harmony_chat.tools.container_engine import Engine
from harmony_chat.tools.mcp_config import McpServerConfig

MAX_STEPS = 1000
"""The most generation calls one turn may make (each tool result starts one)."""
DEFAULT_MAX_STEPS = 8
"""Generation calls per turn at most, unless ``[tools] max_steps`` says otherwise."""
MAX_TOOL_SECONDS = 86_400.0
"""The longest a tool call may run: a day."""


class BrowserSettings(_Section):
    """``[tools.browser]``: where the built-in browser searches and what it may open."""

    provider: ProviderName = "searxng"
    """Search provider: a SearXNG instance (``url``, no key), Exa (``EXA_API_KEY``) or You.com (``YDC_API_KEY``)."""
    url: str | None = None
    """The SearXNG instance, e.g. ``http://127.0.0.1:8888``."""
    allow_private: bool = False
    """Let the browser open loopback and private-network addresses (off: only public hosts)."""


class ToolsSettings(_Section):
    """``[tools]``: running the model's tool calls, and with whose approval."""

    approve: ApprovalMode = "ask"
    """``ask`` before every call, run ``all`` without asking, or run ``none`` (the model is told it was declined)."""
    always: list[str] = Field(default_factory=list)
    """Tools that run without asking, as ``server.tool`` (the approval dialog's "always, saved" adds to it)."""
    max_steps: int = Field(default=DEFAULT_MAX_STEPS, ge=1, le=MAX_STEPS)
    """Generation calls per turn at most; each tool result starts one more."""
    timeout: float = Field(default=60.0, ge=1.0, le=MAX_TOOL_SECONDS)
    """Seconds a function tool (MCP) may run before it is stopped (at most a day)."""
    builtin: list[Literal["python", "browser"]] = Field(default_factory=list)
    """gpt-oss's built-in tools to turn on: ``python`` (a contained Jupyter kernel), ``browser`` (search and read)."""
    python_timeout: float = Field(default=120.0, ge=1.0, le=MAX_TOOL_SECONDS)
    """Seconds one ``python`` call may run (at most a day)."""
    python_disk_mb: int = Field(default=256, ge=1, le=65536)
    """MiB the ``python`` tool's working folder and its ``/tmp`` may hold together (past it, writes fail and the
    model is told); in the bubblewrap sandbox a tmpfs of this size, so memory, kept on disk between calls."""
    python_runner: Literal["bubblewrap", "container"] = "bubblewrap"
    """What contains the ``python`` tool: ``bubblewrap`` (Linux; needs ``bwrap`` and libseccomp) or a
    ``container`` of ``python_container_engine`` (docker or podman; macOS needs this)."""
    python_container_engine: Engine = "docker"
    """The container engine when ``python_runner = "container"``."""
    python_container_image: str = Field(default="quay.io/jupyter/base-notebook", min_length=1, max_length=256)
    """The image when ``python_runner = "container"``: it needs Python with ``ipykernel``."""
    browser: BrowserSettings = Field(default_factory=BrowserSettings)
    """``[tools.browser]``"""


class McpSettings(_Section):
    """``[mcp]``: MCP servers whose tools the model may call."""

    model_config = ConfigDict(
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=False,
        populate_by_name=True,
        allow_inf_nan=False,
    )

    import_file: str | None = Field(default=None, alias="import")
    """A JSON file in other MCP clients' ``{"mcpServers": {...}}`` form to read servers from (as ``import``)."""
    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    """Servers as ``[mcp.servers.NAME]`` tables: ``command``, ``args``, ``env``, ``cwd`` (stdio) or ``url``,
    ``headers`` (streamable HTTP), and ``enabled``."""
