"""Produce the README's screenshots from the replay backend: ``python -m harmony_chat.tui.screenshots``."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from harmony_chat.backends.base import ModelBackend
from harmony_chat.backends.replay import ReplayBackend, SteppingClock
from harmony_chat.chat.factory import BackendFactory, create_backend
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import Settings, UiSettings
from harmony_chat.demo import DEMO_QUESTIONS, choose_demo_turn, demo_recording
from harmony_chat.tools.base import ToolResult, ToolSpec
from harmony_chat.tui.app import HarmonyChatApp

SIZE = (120, 36)
PINNED_DATE = "2026-11-21"
"""The conversation date in screenshots and snapshots, so they do not change from day to day."""


def replay_factory(path: Path | None = None, delay: float = 0.0, name: str = "demo (replay)") -> Any:
    """A backend factory replaying ``path`` (the bundled demo by default) with repeatable timings.

    Options that ask for the pocket model get it, through llama.cpp.
    """

    def factory(options: ChatOptions) -> tuple[ModelBackend, Path | None]:
        if options.uses_pocket:
            return create_backend(options)
        backend = ReplayBackend(
            path or demo_recording(),
            delay_s=delay,
            clock=SteppingClock(),
            name=name,
            context_size=options.settings.model.context,
            chooser=None if path else choose_demo_turn,
        )
        return backend, None

    return factory


TOOL_QUESTION = "What's the weather in Tokyo right now?"
TOOL_CALL = (
    "<|channel|>analysis<|message|>The user wants the current weather in Tokyo. I should call get_weather.<|end|>"
    "<|start|>assistant<|channel|>commentary<|message|>Let me look up the weather in Tokyo.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location": "Tokyo", "unit": "celsius"}<|call|>'
)
TOOL_ANSWER = (
    "<|channel|>analysis<|message|>The tool says 21 °C and sunny.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>It is **21 °C and sunny** in Tokyo right now.<|return|>"
)
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["location"],
}


class ScreenshotWeather:
    """A stand-in ``get_weather`` tool provider for the approval screenshot (no MCP server needed)."""

    def specs(self) -> list[ToolSpec]:
        """The one tool."""
        return [ToolSpec("get_weather", "weather", "get_weather", "Get the current weather.", WEATHER_SCHEMA)]

    def call(
        self, name: str, arguments: dict[str, object], *, timeout_s: float, should_stop: Callable[[], bool]
    ) -> ToolResult:
        """Always fine weather."""
        return ToolResult(f"{arguments.get('location')}: 21 °C, sunny", "done", False, 0.2)

    def close(self) -> None:
        """Nothing to stop."""


def tool_call_factory() -> BackendFactory:
    """A backend factory replaying a ``get_weather`` call, then the answer that uses its result."""

    def factory(options: ChatOptions) -> tuple[ModelBackend, Path | None]:
        from harmony_chat.harmony.vocab import load_encoding

        encoding = load_encoding()
        turns = [encoding.encode(text, allowed_special="all") for text in (TOOL_CALL, TOOL_ANSWER)]
        replay = ReplayBackend(
            turns=turns, clock=SteppingClock(), name="demo (replay)", context_size=options.settings.model.context
        )
        return replay, None

    return factory


async def show_approval(pilot: Pilot[Any]) -> None:
    """Ask about the weather with the stand-in tool offered, and wait for the approval modal."""
    from harmony_chat.chat.factory import tool_runner
    from harmony_chat.tui.screens.approval import ApprovalScreen
    from harmony_chat.tui.widgets.tool_row import ToolCallRow

    app: Any = pilot.app
    await wait_idle(pilot)
    chat = app.chat
    chat.tools.providers = [ScreenshotWeather()]
    chat.tools.runner = tool_runner(app.options, chat.tools.providers, asks=True)
    chat.refresh_tool_count()
    chat.prompt.text = TOOL_QUESTION
    await pilot.press("enter")
    for _ in range(200):  # the modal, and the turn's row saying which tool asks (they come apart)
        asking = [row for row in chat.query(ToolCallRow) if row.state == "asking" and row.tool_name]
        if isinstance(app.screen, ApprovalScreen) and asking:
            break
        await pilot.pause(0.05)
    for _ in range(200):  # its typing guard over: the modal as the user reads it, taking answers
        if isinstance(app.screen, ApprovalScreen) and app.screen.focused is not None:
            break
        await pilot.pause(0.05)
    for _ in range(3):
        await pilot.pause(0.1)
        await pilot.wait_for_scheduled_animations()


async def wait_idle(pilot: Pilot[Any], rounds: int = 60) -> None:
    """Wait until no worker runs and no answer is being generated.

    A worker's messages can start another worker (the model loads, then the conversation to
    resume is read), so this waits again until a pause leaves no worker and no answer running.
    """
    app: Any = pilot.app
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause(0.05)
        chat = getattr(app, "chat", None)
        running = any(not worker.is_finished for worker in app.workers)
        if not running and (chat is None or not chat.generating):
            break
    await pilot.pause(0.1)


async def _shot(path: Path, app: HarmonyChatApp, steps: Callable[[Pilot[Any]], Awaitable[None]]) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await wait_idle(pilot)
        await steps(pilot)
        if steps is not show_approval:  # the turn waits for the modal's answer
            await wait_idle(pilot)
        app.save_screenshot(filename=path.name, path=str(path.parent))


async def _chat(pilot: Pilot[Any]) -> None:
    app: Any = pilot.app
    for question in (DEMO_QUESTIONS[2], DEMO_QUESTIONS[0]):
        app.chat.prompt.text = question
        await pilot.press("enter")
        await wait_idle(pilot)


async def show_debug(pilot: Pilot[Any]) -> None:
    """Toggle debug mode and wait until the inspector has laid out its rows."""
    await pilot.press("f12")
    for _ in range(3):
        await pilot.pause(0.1)
        await pilot.wait_for_scheduled_animations()


async def _debug(pilot: Pilot[Any]) -> None:
    await _chat(pilot)
    await show_debug(pilot)


async def _pocket(pilot: Pilot[Any]) -> None:
    app: Any = pilot.app
    app.chat.prompt.text = "What is the capital of France?"
    await pilot.press("enter")


def _app(theme: str = "harmony-dark", replay: bool = True, factory: BackendFactory | None = None) -> HarmonyChatApp:
    settings = Settings(ui=UiSettings(theme=theme, cursor_blink=False))
    options = ChatOptions(settings, replay_demo=replay, start_date=PINNED_DATE)
    return HarmonyChatApp(options, backend_factory=factory or replay_factory())


async def make_screenshots(folder: Path) -> list[Path]:
    """Write chat (dark and light), debug, welcome and approval screenshots into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    shots = [
        (folder / "chat-dark.svg", _app(), _chat),
        (folder / "chat-light.svg", _app("harmony-light"), _chat),
        (folder / "debug.svg", _app(), _debug),
        (folder / "welcome.svg", _app(replay=False), _pocket),
        (folder / "approval.svg", _app(factory=tool_call_factory()), show_approval),
    ]
    for path, app, steps in shots:
        await _shot(path, app, steps)
    return [path for path, _, _ in shots]


def main() -> None:
    """Write the screenshots (default: ``screenshots/`` in the current directory)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    for path in asyncio.run(make_screenshots(parser.parse_args().out)):
        print(path)


if __name__ == "__main__":
    main()
