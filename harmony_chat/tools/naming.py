"""Give every tool a unique, stable harmony function name (``functions.<name>``).

Names keep only letters, digits and underscores (harmony writes them as TypeScript type names).
The first server to offer a name keeps it; a later server's tool with the same name becomes
``<server>_<tool>``, and a numeric suffix settles what remains. The names of gpt-oss's built-in
tools (``python``, ``browser``) are never given: a function by such a name would take the model's
``to=python`` calls (the decoder reads a bare declared name as ``functions.<name>``), so an MCP
tool called ``python`` is ``<server>_python``, and ``to=python`` always means the built-in. A name, once given, keeps
meaning the same server's tool for the registry's life, so a call the model makes with a name
it was shown never reaches another tool (it fails instead, when that server is gone).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")
BUILTIN_NAMESPACES = frozenset({"python", "browser"})
"""The built-in tools' recipients (``to=python``, ``to=browser.search``): never a function's name."""


def safe_name(name: str) -> str:
    """``name`` with every run of other characters turned into ``_`` (never empty, never a leading digit)."""
    cleaned = _UNSAFE.sub("_", name).strip("_") or "tool"
    return f"_{cleaned}" if cleaned[0].isdigit() else cleaned


class ToolNames:
    """The function names given so far, by ``(server, tool)``. Not thread-safe: guard it."""

    def __init__(self) -> None:
        self._names: dict[tuple[str, str], str] = {}
        self._owners: dict[str, tuple[str, str]] = {}

    def name_for(self, server: str, tool: str) -> str:
        """The function name of ``tool`` on ``server``, given now if it has none yet."""
        key = (server, tool)
        if key in self._names:
            return self._names[key]
        base = safe_name(tool)
        taken = base in self._owners or base in BUILTIN_NAMESPACES
        name = f"{safe_name(server)}_{base}" if taken else base
        number = 2
        while name in self._owners:
            name = f"{safe_name(server)}_{base}_{number}"
            number += 1
        self._names[key] = name
        self._owners[name] = key
        return name

    def owner(self, name: str) -> tuple[str, str] | None:
        """The ``(server, tool)`` a name was given to, if any."""
        return self._owners.get(name)
