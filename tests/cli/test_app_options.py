"""The chat app takes ``ask``'s generation options and the config file's, and hands them to the app."""

from __future__ import annotations

from pathlib import Path

import pytest

from harmony_chat.chat.options import ChatOptions
from harmony_chat.cli import main, root
from harmony_chat.config import get_setting


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[ChatOptions]:
    """What the app was started with, instead of starting it (no terminal is needed)."""
    launches: list[ChatOptions] = []

    def fake_run_tui(launch: ChatOptions, *args: object) -> None:
        launches.append(launch)

    monkeypatch.setattr("harmony_chat.tui.app.run_tui", fake_run_tui)
    monkeypatch.setattr(root, "_require_terminal", lambda: None)
    return launches


def _options(launch: ChatOptions) -> tuple[object, ...]:
    paths = ("sampling.max_tokens", "sampling.temperature", "sampling.seed", "model.threads", "model.context")
    return tuple(get_setting(launch.settings, path) for path in (*paths, "chat.effort", "chat.instructions"))


def test_the_app_takes_asks_generation_options(started: list[ChatOptions]) -> None:
    args = ["--max-tokens", "2000", "--temperature", "0.3", "--seed", "5", "--threads", "2", "--ctx", "4096"]
    assert main([*args, "--effort", "high", "--instructions", "Be brief.", "--no-history"]) == 0
    (launch,) = started
    assert _options(launch) == (2000, 0.3, 5, 2, 4096, "high", "Be brief.")


def test_the_app_follows_the_config_file_unless_told_otherwise(started: list[ChatOptions], tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[model]\nmax_tokens = 300\ntemperature = 0.5\nseed = 9\nthreads = 3\ncontext = 8192\n\n"
        '[chat]\neffort = "low"\ninstructions = "Answer in French."\n',
        encoding="utf-8",
    )
    assert main(["--config", str(config), "--no-history"]) == 0
    assert main(["--config", str(config), "--no-history", "--max-tokens", "64", "--seed", "1"]) == 0
    assert [_options(launch) for launch in started] == [
        (300, 0.5, 9, 3, 8192, "low", "Answer in French."),
        (64, 0.5, 1, 3, 8192, "low", "Answer in French."),
    ]
