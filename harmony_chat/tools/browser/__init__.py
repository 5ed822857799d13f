"""The ``browser`` built-in tool: gpt-oss's ``search`` / ``open`` / ``find`` with citations. No UI imports.

``BrowserTool`` (``tool``) is what the conversation core uses::

    tool = BrowserTool(BrowserConfig.from_options(provider, url, allow_private))
    system_tools = [tool.namespace()]                 # ToolNamespaceConfig.browser()
    if tool.handles(recipient):                       # browser.search / .open / .find (any browser.*)
        tool.preview(recipient, arguments)            # CallPreview(text, network, url) for approval
        result = tool.run(recipient, arguments, timeout_s=60, should_stop=lambda: stopped)  # ToolResult
    tool.safety_note()                                # what open may reach, for the approval dialog
    tool.visited()                                    # [Visit(kind, target, ok, title, url, note, cursor)]
    tool.sources()                                    # cursor -> PageRecord, for citations
    tool.reset()                                      # a new conversation: no pages, cursors or visits
    tool.close()

Citations (``citations``, pure functions): ``find_citations(text, tool.sources())`` →
``[Citation]``; ``to_markdown`` (footnotes, exports), ``to_inline_markdown`` (numbered links),
``link_entries`` (span, number, title, url for the TUI), ``numbered_sources``, ``strip_partial``
(while streaming). ``transcript.sources_from_transcript`` rebuilds the sources of a saved
conversation from its browser tool messages.

Modules: ``config`` (settings and limits), ``calls`` (reading the model's calls), ``guard`` (which
addresses ``open`` may reach), ``fetch`` (downloads), ``extract`` (main text, links), ``pages``
(cursors and views), ``search`` (SearXNG, Exa, You.com).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harmony_chat.tools.browser.citations import (
        Citation,
        CitationLink,
        PageRecord,
        Source,
        cite_markdown,
        find_citations,
        link_entries,
        numbered_sources,
        strip_partial,
        to_inline_markdown,
        to_markdown,
    )
    from harmony_chat.tools.browser.config import PROVIDERS, BrowserConfig, ProviderName
    from harmony_chat.tools.browser.tool import BrowserTool, CallPreview, Visit
    from harmony_chat.tools.browser.transcript import sources_from_transcript

_HOMES = {
    **dict.fromkeys(
        (
            "Citation",
            "CitationLink",
            "PageRecord",
            "Source",
            "cite_markdown",
            "find_citations",
            "link_entries",
            "numbered_sources",
            "strip_partial",
            "to_inline_markdown",
            "to_markdown",
        ),
        "citations",
    ),
    **dict.fromkeys(("PROVIDERS", "BrowserConfig", "ProviderName"), "config"),
    **dict.fromkeys(("BrowserTool", "CallPreview", "Visit"), "tool"),
    "sources_from_transcript": "transcript",
}
"""The module of each exported name: loaded when first asked for, so that citations (which the
TUI needs at start) do not bring the HTTP client of fetching with them."""


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "PROVIDERS",
    "BrowserConfig",
    "BrowserTool",
    "CallPreview",
    "Citation",
    "CitationLink",
    "PageRecord",
    "ProviderName",
    "Source",
    "Visit",
    "cite_markdown",
    "find_citations",
    "link_entries",
    "numbered_sources",
    "sources_from_transcript",
    "strip_partial",
    "to_inline_markdown",
    "to_markdown",
]
