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


def test_how_long_things_take_is_said_once_with_its_cpu_time() -> None:
    """README and docs/testing.md once gave 6 and 9 minutes for the same run: the README alone says it now."""
    readme, testing = _text("README.md"), _text("docs/testing.md")
    timed = re.findall(r"about (\d+) minutes?(?: more)? on 2 quiet cores[ ,(]+about (\d+) minutes? of CPU", readme)
    assert len(timed) >= 3  # the first install, the tests, the slow tier
    assert "README's [Get started]" in testing
    suite = testing[: testing.index("## Mutation testing")]
    assert not re.search(r"about \d+ minutes", suite)  # no second figure to drift from the first
