"""The engine, the conversation core, the tools and the training lab never import Textual; the CLI starts light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE_PACKAGES = (
    "harmony_chat/harmony",
    "harmony_chat/backends",
    "harmony_chat/gguf",
    "harmony_chat/history",
    "harmony_chat/bench",
    "harmony_chat/demo",
    "harmony_chat/chat",
    "harmony_chat/tools",
    "training",
)


def _modules() -> list[str]:
    names = []
    for package in ENGINE_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            names.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return names


def test_engine_modules_import_without_textual() -> None:
    modules = _modules()
    assert "harmony_chat.harmony.decoder" in modules and "harmony_chat.backends.llama_cpp" in modules
    assert "harmony_chat.demo.pocket" in modules and "training.pocket.train" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules\n"
        "             if m == 'textual' or m.startswith(('textual.', 'harmony_chat.tui')))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_engine_sources_never_mention_textual_imports() -> None:
    for package in ENGINE_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for line in path.read_text(encoding="utf-8").splitlines():
                stripped = line.strip()
                assert not stripped.startswith(("import textual", "from textual", "from harmony_chat.tui")), path


def test_cli_import_is_light() -> None:
    code = (
        "import sys, harmony_chat.cli\n"
        "heavy = [m for m in ('llama_cpp', 'textual', 'openai_harmony', 'numpy', 'gguf') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_help_loads_no_settings_model() -> None:
    """The flags' help comes from the settings' digest: ``--help`` loads neither the settings nor pydantic-settings."""
    code = (
        "import sys\n"
        "from harmony_chat.cli import main\n"
        "for args in (['--help'], ['ask', '--help'], ['serve', '--help']): assert main(args) == 0\n"
        "heavy = ('harmony_chat.config', 'pydantic_settings', 'llama_cpp', 'openai_harmony')\n"
        "assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    shown = " ".join(result.stdout.split())
    assert "--ctx <int> Context size in tokens (the model's own limit applies too)." in shown


def test_the_chat_screen_starts_without_the_browsers_http_client() -> None:
    """Citations are drawn from the start; fetching pages (httpx, ~100 ms to import) waits for a call."""
    code = (
        "import sys, harmony_chat.tui.screens.chat\n"
        "from harmony_chat.tools.browser import find_citations\n"
        "heavy = [m for m in ('httpx', 'httpcore', 'harmony_chat.tools.browser.fetch') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from harmony_chat.tools.browser import BrowserTool\n"
        "assert 'httpx' in sys.modules and BrowserTool.__name__ == 'BrowserTool'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_help_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "harmony_chat", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0
    assert "ask" in result.stdout
