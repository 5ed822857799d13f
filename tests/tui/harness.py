"""Helpers for driving the app headless on the replay backend."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import Settings, set_setting
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.screenshots import PINNED_DATE, replay_factory, wait_idle


def make_app(
    settings: Settings | None = None,
    factory: Any = None,
    theme_dir: Path | None = None,
    history: Any = None,
    resume: int | str | None = None,
    values: Mapping[str, object] | None = None,
    **given: Any,
) -> HarmonyChatApp:
    """An app in demo mode (replay, no delay) unless told otherwise.

    ``values`` set settings by their paths (``{"chat.effort": "low"}``); ``given`` are the options
    that are no setting (``replay_demo=False``, ``start_date``...).
    """
    settings = settings or Settings()
    settings.ui.cursor_blink = False
    for path, value in (values or {}).items():
        set_setting(settings, path, value)
    defaults: dict[str, Any] = {"replay_demo": True, "start_date": PINNED_DATE}
    return HarmonyChatApp(
        ChatOptions(settings, **(defaults | given)),
        theme_dir=theme_dir,
        backend_factory=factory or replay_factory(),
        history=history,
        resume=resume,
    )


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until workers are done and the UI has processed their messages."""
    await wait_idle(pilot)


async def send(pilot: Pilot[Any], text: str) -> None:
    """Type a message and press Enter, then wait for the answer."""
    app: Any = pilot.app
    app.chat.prompt.text = text
    await pilot.press("enter")
    await settle(pilot)


class ManualClock:
    """A monotonic clock that moves only when told (for the approval modal's typing guard)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        self.now += seconds
