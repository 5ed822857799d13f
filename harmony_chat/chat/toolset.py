"""The tools a conversation offers the model, gathered from every provider (MCP servers...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai_harmony import ToolDescription

    from harmony_chat.tools.base import ToolProvider, ToolSpec

FUNCTIONS_PREFIX = "functions."


class ToolSet:
    """Function tools by the name the model calls them, and the provider that runs each.

    Providers may gain tools after start-up (MCP servers connect in the background), so the
    set is read afresh before every generation call.
    """

    def __init__(self, providers: Sequence[ToolProvider] = ()) -> None:
        self.providers = list(providers)

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
        """The tool a call addresses (``functions.x`` or a bare declared ``x``), if any."""
        name = called_as.removeprefix(FUNCTIONS_PREFIX)
        for spec, provider in self.entries():
            if spec.name == name:
                return spec, provider
        return None

    def close(self) -> None:
        """Stop every provider."""
        for provider in self.providers:
            provider.close()
