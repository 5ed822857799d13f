"""Helpers for driving the app headless: a replay backend with a fake clock, and waiting for work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from harmony_chat.backends.base import ModelBackend
from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.config import Settings
from harmony_chat.demo import demo_recording
from harmony_chat.launch import LaunchOptions
from harmony_chat.tui.app import HarmonyChatApp


class FakeClock:
    """A clock that advances a fixed step per reading, so timings shown are repeatable."""

    def __init__(self, step: float = 0.02) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def replay_factory(path: Path | None = None, delay: float = 0.0, name: str = "demo (replay)") -> Any:
    """A backend factory that replays ``path`` (the bundled demo by default)."""

    def factory(options: LaunchOptions) -> tuple[ModelBackend, Path | None]:
        backend = ReplayBackend(
            path or demo_recording(), delay_s=delay, clock=FakeClock(), name=name, context_size=options.context
        )
        return backend, None

    return factory


def make_app(
    settings: Settings | None = None, factory: Any = None, theme_dir: Path | None = None, **launch: Any
) -> HarmonyChatApp:
    """An app in demo mode (replay, no delay) unless told otherwise."""
    options = LaunchOptions(**({"demo": True} | launch))
    return HarmonyChatApp(
        options, settings or Settings(), theme_dir=theme_dir, backend_factory=factory or replay_factory()
    )


async def settle(pilot: Pilot[Any], rounds: int = 40) -> None:
    """Wait until workers are done and the UI has processed their messages."""
    app = pilot.app
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause(0.05)
        chat = getattr(app, "chat", None)
        if not app.workers._workers and (chat is None or not chat.generating):  # noqa: SLF001
            break
    await pilot.pause(0.05)


async def send(pilot: Pilot[Any], text: str) -> None:
    """Type a message and press Enter, then wait for the answer."""
    app: Any = pilot.app
    app.chat.prompt.text = text
    await pilot.press("enter")
    await settle(pilot)
