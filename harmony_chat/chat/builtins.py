"""gpt-oss's built-in tools (``python``, ``browser``) as the conversation core sees them.

Built-in tools are declared in the system message (not as functions) and called with plain
content: code for ``python``, JSON for ``browser.*``. Each adapter gives the core the namespace to
declare, what to show in the approval dialog, and a run method that never raises. A new
conversation gets fresh tool state (a new kernel and working folder, no open pages).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from harmony_chat.tools.base import ToolResult

if TYPE_CHECKING:
    from openai_harmony import ToolNamespaceConfig

    from harmony_chat.tools.browser import PageRecord
    from harmony_chat.tools.container_engine import Engine
    from harmony_chat.tools.python import PythonTool


class BuiltinTool(Protocol):
    """A built-in tool the conversation core can declare, review and run."""

    name: str
    """``python`` or ``browser``: the namespace in the system message."""
    label: str
    """What the approval dialog calls an action of this tool."""
    language: str
    """How the approval dialog highlights a call's content (``python``, ``json``)."""

    def namespace(self) -> ToolNamespaceConfig:
        """What the system message declares."""
        ...

    def handles(self, recipient: str) -> bool:
        """Whether a call to ``recipient`` is for this tool."""
        ...

    def warning(self) -> str:
        """A caveat for the approval dialog (what is not contained on this machine), or ``""``."""
        ...

    def run(self, recipient: str, content: str, *, timeout_s: float, should_stop: Callable[[], bool]) -> ToolResult:
        """Run one call (blocking); never raises."""
        ...

    def citation_sources(self) -> Mapping[int, PageRecord]:
        """The pages an answer's citations ``【cursor†Lx-Ly】`` can name, by cursor (empty: nothing to cite)."""
        ...

    def reset(self, conversation: str) -> None:
        """Start over for a new (or resumed) conversation ``conversation``."""
        ...

    def close(self) -> None:
        """Stop everything the tool started."""
        ...


class PythonBuiltin:
    """The ``python`` tool: one contained Jupyter kernel per conversation, started on first use."""

    name = "python"
    label = "code the model wants to run (written in its hidden reasoning)"
    language = "python"

    def __init__(
        self,
        timeout_s: float = 120.0,
        conversation: str | None = None,
        *,
        disk_mb: int = 256,
        container: tuple[Engine, str] | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.disk_mb = disk_mb
        """The working folder's quota (``[tools] python_disk_mb``)."""
        self.container = container
        """(engine, image) when ``[tools] python_runner = "container"``; None: bubblewrap."""
        self._conversation = conversation or uuid.uuid4().hex[:12]
        self._tool: PythonTool | None = None

    def _instance(self) -> PythonTool:
        if self._tool is None:
            from harmony_chat.tools.python import ContainerRunner, PythonTool, SandboxLimits

            limits = SandboxLimits(disk_bytes=self.disk_mb * 1024**2)
            runner = None
            if self.container is not None:
                engine, image = self.container
                runner = ContainerRunner(engine=engine, image=image)
            self._tool = PythonTool(self._conversation, timeout_s=self.timeout_s, limits=limits, container=runner)
        return self._tool

    def namespace(self) -> ToolNamespaceConfig:
        """The python namespace, telling the model what really holds here (timeout, network, folder)."""
        return self._instance().namespace()

    def handles(self, recipient: str) -> bool:
        """``python`` and ``python.<anything>``."""
        from harmony_chat.tools.python import PythonTool

        return PythonTool.handles(recipient)

    def warning(self) -> str:
        """What the sandbox cannot contain on this machine."""
        return self._instance().containment()

    def run(self, recipient: str, content: str, *, timeout_s: float, should_stop: Callable[[], bool]) -> ToolResult:
        """Run the code in the conversation's kernel."""
        return self._instance().run(content, timeout_s=timeout_s, should_stop=should_stop)

    def citation_sources(self) -> Mapping[int, PageRecord]:
        """Nothing: python's output is not cited."""
        return {}

    def reset(self, conversation: str) -> None:
        """Close this conversation's kernel; the next call starts one for ``conversation``."""
        self.close()
        self._conversation = conversation

    def close(self) -> None:
        """Stop the kernel."""
        if self._tool is not None:
            self._tool.close()
            self._tool = None


class BrowserBuiltin:
    """The ``browser`` tool: search, open and find, with this conversation's pages and cursors."""

    name = "browser"
    label = "web request"
    language = "json"

    def __init__(self, provider: str = "searxng", url: str | None = None, *, allow_private: bool = False) -> None:
        from harmony_chat.tools.browser import BrowserConfig, BrowserTool

        self.tool = BrowserTool(BrowserConfig.from_options(provider, url, allow_private))

    def namespace(self) -> ToolNamespaceConfig:
        """The browser namespace (``search``, ``open``, ``find``)."""
        return self.tool.namespace()

    def handles(self, recipient: str) -> bool:
        """``browser.search``, ``browser.open``, ``browser.find``."""
        return self.tool.handles(recipient)

    def warning(self) -> str:
        """What ``open`` may reach."""
        return self.tool.safety_note()

    def run(self, recipient: str, content: str, *, timeout_s: float, should_stop: Callable[[], bool]) -> ToolResult:
        """Run one browser call."""
        return self.tool.run(recipient, content, timeout_s=timeout_s, should_stop=should_stop)

    def citation_sources(self) -> Mapping[int, PageRecord]:
        """The pages, search results and find results under each cursor of this conversation."""
        return self.tool.sources()

    def reset(self, conversation: str) -> None:
        """Forget pages, cursors and visits."""
        self.tool.reset()

    def close(self) -> None:
        """Close the HTTP clients."""
        self.tool.close()
