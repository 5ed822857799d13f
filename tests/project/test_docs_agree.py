"""The README and the docs say the same thing about what the code does, where a newcomer reads both."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _text(name: str) -> str:
    return re.sub(r"\s+", " ", (ROOT / name).read_text(encoding="utf-8"))


def test_a_forced_tool_choice_is_described_as_forced_everywhere() -> None:
    """``tool_choice`` ``required`` or a named function is forced (tests/server/test_tool_choice.py)."""
    readme, serving = _text("README.md"), _text("docs/serving.md")
    assert "forced at the token level" in readme and "forced at the token level" in serving
    assert "not guaranteed" not in serving and "cannot force" not in serving
