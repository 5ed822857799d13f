"""What the screen offers after things went wrong: model switches, stopped turns, the palette."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandList

from harmony_chat.harmony.events import StopReason
from harmony_chat.tui.messages import ModelsFound
from harmony_chat.tui.screens.history import HistoryScreen
from harmony_chat.tui.screenshots import replay_factory
from harmony_chat.tui.widgets.turn import AssistantTurn
from harmony_chat.tui.widgets.welcome import WelcomePanel
from tests.tui.harness import make_app, send, settle


@pytest.mark.llama
async def test_switching_to_the_pocket_model_replaces_the_error_panel(tmp_path: Path) -> None:
    from harmony_chat.chat.factory import create_backend

    app = make_app(factory=replay_factory(), replay_demo=False, values={"model.path": str(tmp_path / "missing.gguf")})
    app.backend_factory = lambda options: (create_backend if options.model_path else replay_factory())(options)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        (panel,) = app.chat.query(WelcomePanel)
        assert panel.notice is not None
        await pilot.click("#pocket")
        await settle(pilot)
        panels = list(app.chat.query(WelcomePanel))
        assert [p.notice for p in panels] == [None] and panels[0].pocket
        assert app.chat.status.model == "pocket-gpt-oss (pocket demo model)"
        assert app.chat.status.state == "idle"
        app.chat.post_message(ModelsFound([], "a failure reported late", load_id=app.chat.loader.load_id - 1))
        await settle(pilot)
        assert [p.notice for p in app.chat.query(WelcomePanel)] == [None]


async def test_copy_after_a_turn_stopped_before_answering_copies_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = tmp_path / "slow.txt"
    thinking = " ".join(f"step{i}" for i in range(400))
    recording.write_text(
        f"<|channel|>analysis<|message|>{thinking}<|end|><|start|>assistant<|channel|>final"
        "<|message|>Answer one.<|return|>",
        encoding="utf-8",
    )
    app = make_app(factory=replay_factory(recording, delay=0.005))
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, "first")
        app.chat.prompt.text = "second"
        await pilot.press("enter")
        await pilot.pause(0.2)
        await pilot.press("escape")
        await settle(pilot)
        turns = list(app.chat.query(AssistantTurn))
        assert turns[-1].stop_reason is StopReason.CANCELLED and turns[-1].final_text == ""
        app.chat.prompt.text = "/copy"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert copied == []
        app.chat.prompt.text = "/copy code"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert copied == []


async def test_palette_has_a_history_entry(tmp_path: Path) -> None:
    from harmony_chat.history.store import HistoryStore

    app = make_app(history=HistoryStore(tmp_path / "history.sqlite3"))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"history")
        await pilot.pause(0.5)
        options = app.screen.query_one(CommandList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert any(prompt.startswith("chat: History") for prompt in prompts), prompts
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert isinstance(app.screen, HistoryScreen)


async def test_the_status_bar_is_bound_to_what_the_screen_owns() -> None:
    """Effort, reasoning mode, debug and state live on the chat screen; the status bar and the view follow them."""
    from harmony_chat.config import Settings, UiSettings

    app = make_app(settings=Settings(ui=UiSettings(debug=True)))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        chat, status = app.chat, app.chat.status
        assert chat.debug and status.debug and chat.has_class("-debug") and chat.inspector.display  # [ui] debug
        assert chat.conversation is not None
        chat.effort, chat.reasoning, chat.debug, chat.state = "high", "raw", False, "answering"
        await pilot.pause()
        assert (status.effort, status.reasoning, status.debug, status.state) == ("high", "raw", False, "answering")
        assert chat.conversation.effort == "high"
        assert chat.has_class("-reasoning-raw") and not chat.has_class("-debug")
        assert "effort high" in str(status.render()) and "DEBUG" not in str(status.render())
