"""Helpers for the python tool tests."""

from __future__ import annotations

from collections.abc import Callable

from harmony_chat.tools.base import ToolResult
from harmony_chat.tools.python import PythonTool


def never() -> bool:
    """A ``should_stop`` that never asks to stop."""
    return False


def run(tool: PythonTool, code: str, *, timeout_s: float = 60.0, should_stop: Callable[[], bool] = never) -> ToolResult:
    """Run ``code`` in ``tool`` with a generous timeout."""
    return tool.run(code, timeout_s=timeout_s, should_stop=should_stop)
