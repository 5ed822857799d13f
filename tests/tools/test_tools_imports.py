"""The tools layer never imports Textual, and importing the package alone does not load the MCP SDK."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_tools_modules_import_without_textual() -> None:
    paths = (ROOT / "harmony_chat" / "tools").glob("*.py")
    modules = sorted(".".join(path.relative_to(ROOT).with_suffix("").parts) for path in paths)
    assert "harmony_chat.tools.mcp_client" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'harmony_chat.tui')))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_tools_package_import_is_light() -> None:
    code = (
        "import sys, harmony_chat.tools\n"
        "heavy = [m for m in ('mcp', 'pydantic', 'openai_harmony', 'textual') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
