"""The app with a history: recording, the history screen, resuming, renaming, deleting."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from harmony_chat.history.store import HistoryStore
from harmony_chat.tui.screens.history import ConfirmScreen, HistoryScreen, RenameScreen
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage
from tests.tui.harness import make_app, send, settle

QUESTION = "How do I reverse a linked list in Python?"


async def test_chat_is_recorded_and_can_be_resumed(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    app = make_app(history=store)
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, QUESTION)
        answer = app.chat.query_one(AssistantTurn).final_text
    (row,) = store.list_conversations()
    stored = store.load(row.id)
    assert row.title == QUESTION and row.model == "demo (replay)"
    assert [m.author.role.value for m in stored.messages] == ["user", "assistant"]
    assert stored.messages[-1].content[0].text == answer  # analysis was not stored
    assert stored.turns[0].status == "complete" and stored.turns[0].effort == "medium"

    again = make_app(history=store)
    async with again.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        assert isinstance(again.screen, HistoryScreen) and again.screen.ids == [row.id]
        await pilot.press("enter")
        await settle(pilot)
        assert [str(w.render()) for w in again.chat.query(UserMessage)] == [QUESTION]
        assert again.chat.query_one(AssistantTurn).final_text == answer
        await send(pilot, "Why is the sky blue? Keep it short.")
        assert "Current date: 2026-11-21" in again.chat.inspector.prompt_text
    assert [m.author.role.value for m in store.load(row.id).messages] == ["user", "assistant", "user", "assistant"]


async def test_resume_on_start_and_regenerate_keeps_the_store_in_step(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    first = make_app(history=store)
    async with first.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, QUESTION)
    conversation = store.latest()
    assert conversation is not None
    app = make_app(history=store, resume=conversation)
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        assert app.chat.link is not None and app.chat.link.conversation == conversation
        app.chat.prompt.text = "/regen high"
        await pilot.press("enter")
        await settle(pilot)
    stored = store.load(conversation)
    assert [m.author.role.value for m in stored.messages] == ["user", "assistant"]
    assert [turn.effort for turn in stored.turns] == ["high"]


async def test_rename_and_delete_from_the_history_screen(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    app = make_app(history=store)
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, QUESTION)
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        await pilot.press("ctrl+r")
        await pilot.pause(0.1)
        assert isinstance(app.screen, RenameScreen)
        app.screen.query_one(Input).value = "Linked lists"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert store.list_conversations()[0].title == "Linked lists"
        history = app.screen
        assert isinstance(history, HistoryScreen)
        history.query_one("#history-search", Input).value = "reverse"
        await pilot.pause(0.1)
        assert history.ids == [store.list_conversations()[0].id]
        await pilot.press("ctrl+d")
        await pilot.pause(0.1)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause(0.1)
        assert store.list_conversations()
        await pilot.press("ctrl+d")
        await pilot.pause(0.1)
        await pilot.press("y")
        await pilot.pause(0.1)
        assert store.list_conversations() == []


async def test_outgrown_context_leaves_out_oldest_turns_and_says_so() -> None:
    app = make_app(context=600, max_tokens=150)
    questions = [QUESTION, "Why is the sky blue? Keep it short.", "Plan a tiny CLI that counts words in a file."]
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        footers: list[str] = []
        for turn in range(6):
            await send(pilot, questions[turn % 3])
            footers = [str(widget.query_one(".footer").render()) for widget in app.chat.query(AssistantTurn)]
            if "left out of the context" in footers[-1]:
                break
        assert "left out of the context" not in footers[0]
        assert "oldest turns left out of the context" in footers[-1]
        assert app.chat.status.context_size == 600 and 0 < app.chat.status.context_used <= 600
        prompt = app.chat.inspector.prompt_text
        assert prompt.count("<|start|>user<|message|>") < len(footers)


async def test_resume_without_id_opens_the_history_to_choose(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    first = make_app(history=store)
    async with first.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, QUESTION)
    app = make_app(history=store, resume="pick")
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, HistoryScreen) and not app.chat.query(UserMessage)
