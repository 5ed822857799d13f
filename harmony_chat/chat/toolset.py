"""The tools a conversation offers the model, gathered from every provider (MCP servers...).

Built-in and function tools never share a name: ``to=python`` and ``to=browser.*`` are the
built-ins' (:class:`~harmony_chat.tools.naming.ToolNames` never gives a function their names),
and a function tool is reached as ``functions.<name>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from harmony_chat.tools.naming import BUILTIN_NAMESPACES

if TYPE_CHECKING:
    from openai_harmony import ToolDescription, ToolNamespaceConfig

    from harmony_chat.chat.builtins import BuiltinTool
    from harmony_chat.tools.base import ToolProvider, ToolSpec
    from harmony_chat.tools.browser import PageRecord

FUNCTIONS_PREFIX = "functions."


class ToolSet:
    """Function tools by the name the model calls them, and the provider that runs each.

    Providers may gain tools after start-up (MCP servers connect in the background), so the
    set is read afresh before every generation call.
    """

    def __init__(self, providers: Sequence[ToolProvider] = (), builtins: Sequence[BuiltinTool] = ()) -> None:
        self.providers = list(providers)
        self.builtins = list(builtins)
        """gpt-oss's built-in tools (``python``, ``browser``), declared in the system message."""

    def namespaces(self) -> dict[str, ToolNamespaceConfig]:
        """The built-in tools' namespaces, as the system message declares them."""
        return {tool.name: tool.namespace() for tool in self.builtins}

    def find_builtin(self, recipient: str) -> BuiltinTool | None:
        """The built-in tool a call to ``recipient`` is for, if any."""
        return next((tool for tool in self.builtins if tool.handles(recipient)), None)

    def citation_sources(self) -> dict[int, PageRecord]:
        """What the built-in tools' output can be cited by, cursor → page (the browser's pages)."""
        sources: dict[int, PageRecord] = {}
        for tool in self.builtins:
            sources.update(tool.citation_sources())
        return sources

    def new_conversation(self, conversation: str) -> None:
        """Give the built-in tools fresh state for another conversation."""
        for tool in self.builtins:
            tool.reset(conversation)

    def entries(self) -> list[tuple[ToolSpec, ToolProvider]]:
        """Every tool with its provider; the first provider wins a name both offer."""
        seen: set[str] = set()
        found: list[tuple[ToolSpec, ToolProvider]] = []
        for provider in self.providers:
            for spec in provider.specs():
                if spec.name not in seen:
                    seen.add(spec.name)
                    found.append((spec, provider))
        return found

    def descriptions(self) -> list[ToolDescription]:
        """The function tools as the developer message declares them."""
        from openai_harmony import ToolDescription

        return [ToolDescription.new(spec.name, spec.description, spec.parameters) for spec, _ in self.entries()]

    def schemas(self) -> dict[str, Mapping[str, object]]:
        """Each tool's argument schema by ``functions.<name>`` (for grammar-constrained arguments)."""
        found: dict[str, Mapping[str, object]] = {}
        for spec, _ in self.entries():
            schema = spec.input_schema or spec.parameters
            if schema:
                found[FUNCTIONS_PREFIX + spec.name] = schema
        return found

    def find(self, called_as: str) -> tuple[ToolSpec, ToolProvider] | None:
        """The tool a call addresses (``functions.x`` or a bare declared ``x``), if any.

        A bare built-in name (``python``, ``browser.search``) is never a function tool's.
        """
        if called_as.split(".", 1)[0] in BUILTIN_NAMESPACES:
            return None
        name = called_as.removeprefix(FUNCTIONS_PREFIX)
        for spec, provider in self.entries():
            if spec.name == name:
                return spec, provider
        return None

    def close(self) -> None:
        """Stop every provider and built-in tool."""
        for provider in self.providers:
            provider.close()
        for tool in self.builtins:
            tool.close()
