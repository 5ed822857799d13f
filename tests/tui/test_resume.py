"""Continuing a stored conversation: the effort used, where the view lands; what a new chat frees."""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

import pytest

from harmony_chat.demo import DEMO_QUESTIONS
from harmony_chat.history.store import HistoryStore
from harmony_chat.tui.widgets.turn import Answer, AssistantTurn, UserMessage
from tests.tui.harness import make_app, send, settle

SHORT = "Why is the sky blue? Keep it short."


async def _stored(tmp_path: Path, questions: list[str], effort: str = "medium") -> tuple[HistoryStore, int]:
    store = HistoryStore(tmp_path / "history.sqlite3")
    app = make_app(history=store, values={"chat.effort": effort})
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        for question in questions:
            await send(pilot, question)
    conversation = store.latest()
    assert conversation is not None
    return store, conversation


async def test_continue_runs_at_the_effort_shown(tmp_path: Path) -> None:
    store, conversation = await _stored(tmp_path, [SHORT], effort="low")
    app = make_app(history=store, resume=conversation, values={"chat.effort": "high"})
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        assert app.chat.status.effort == "high"
        await send(pilot, SHORT)
        assert "Reasoning: high" in app.chat.inspector.prompt_text
        assert [turn.effort for turn in app.chat.query(AssistantTurn)] == ["low", "high"]
    assert [turn.effort for turn in store.load(conversation).turns] == ["low", "high"]


async def test_reopening_from_the_history_runs_at_the_effort_shown(tmp_path: Path) -> None:
    store, _ = await _stored(tmp_path, [SHORT], effort="low")
    app = make_app(history=store, values={"chat.effort": "high"})
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause(0.2)
        await pilot.press("enter")
        await settle(pilot)
        assert app.chat.status.effort == "high"
        await send(pilot, SHORT)
        assert "Reasoning: high" in app.chat.inspector.prompt_text


async def test_new_chat_releases_the_old_chat() -> None:
    """The widgets and rendered lines of a chat are freed by ctrl+n (counted, not timed)."""
    app = make_app()
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        for question in DEMO_QUESTIONS:  # the first chat warms Textual's and the parser's caches
            await send(pilot, question)
        await pilot.press("ctrl+n")
        await settle(pilot)
        gc.collect()
        before = sys.getallocatedblocks()
        for question in DEMO_QUESTIONS:
            await send(pilot, question)
        old = [weakref.ref(w) for w in [*app.chat.query(AssistantTurn), *app.chat.query(UserMessage)]]
        old += [weakref.ref(w) for w in app.chat.query(Answer)]
        gc.collect()
        grown = sys.getallocatedblocks() - before
        await pilot.press("ctrl+n")
        await settle(pilot)
        gc.collect()
        kept = sys.getallocatedblocks() - before
        assert [ref() for ref in old if ref() is not None] == []
        assert grown > 20_000 and kept < grown // 10, (grown, kept)


@pytest.mark.llama
async def test_resuming_beside_the_pocket_model_shows_its_end(tmp_path: Path) -> None:
    store, conversation = await _stored(tmp_path, list(DEMO_QUESTIONS) * 2)
    app = make_app(history=store, resume=conversation, replay_demo=False)
    async with app.run_test(size=(110, 30)) as pilot:
        await settle(pilot)
        view = app.chat.log_view
        assert view.max_scroll_y > 50
        assert view.scroll_y == view.max_scroll_y
