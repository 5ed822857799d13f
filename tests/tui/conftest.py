"""TUI test isolation: no real home dir, no user config or themes, no model caches."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(home / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("LLAMA_CACHE", str(home / "llama"))
    monkeypatch.setenv("HARMONY_CHAT_CONFIG_DIR", str(home / "config"))
    return home
