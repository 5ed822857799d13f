"""Helpers for the python tool tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harmony_chat.tools.base import ToolResult
from harmony_chat.tools.python import PythonTool, probe_platform


def never() -> bool:
    """A ``should_stop`` that never asks to stop."""
    return False


def run(tool: PythonTool, code: str, *, timeout_s: float = 60.0, should_stop: Callable[[], bool] = never) -> ToolResult:
    """Run ``code`` in ``tool`` with a generous timeout."""
    return tool.run(code, timeout_s=timeout_s, should_stop=should_stop)


needs_sandbox = pytest.mark.skipif(
    not probe_platform().available, reason=f"the python tool cannot run here: {probe_platform().reason}"
)
"""For tests that run code in the python tool: skipped, with the install line, where bubblewrap is missing."""
