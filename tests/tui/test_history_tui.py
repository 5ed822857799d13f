"""The app with a history: recording, the history screen, resuming, renaming, deleting."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from openai_harmony import Message, Role
from textual.strip import Strip
from textual.widgets import Input, OptionList
from textual.widgets._toast import Toast

from harmony_chat.history.store import HistoryStore
from harmony_chat.history.text import ConversationHit
from harmony_chat.tui.screens.history import MATCH_STYLE, ConfirmScreen, HistoryScreen, RenameScreen, hit_prompt
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage
from tests.tui.harness import make_app, send, settle

QUESTION = "How do I reverse a linked list in Python?"
ROOT = Path(__file__).resolve().parents[2]


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
        assert app.chat.conversation is not None and app.chat.conversation.conversation_id == conversation
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
    app = make_app(values={"model.context": 600, "sampling.max_tokens": 150})
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


def rendered(widget: OptionList) -> list[Strip]:
    return list(widget.render_lines(widget.region.reset_offset))


def notices(app: Any) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


def conversation_with(store: HistoryStore, text: str) -> int:
    conversation = store.create_conversation({"effort": "low"}, "tiny")
    store.add_message(conversation, Message.from_role_and_content(Role.USER, text))
    return conversation


async def test_titles_and_snippets_are_text_and_matches_are_styled(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    conversation = conversation_with(store, "Who wrote Romeo and Juliet? [b]bold[/b] [@click=app.quit]x[/]")
    store.rename(conversation, "close this [/] tag")
    app = make_app(history=store)
    async with app.run_test(size=(110, 36), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        history = app.screen
        assert isinstance(history, HistoryScreen)
        options = history.query_one(OptionList)
        assert "close this [/] tag" in rendered(options)[1].text
        history.query_one("#history-search", Input).value = "juliet"
        await pilot.pause(0.1)
        title, snippet = rendered(options)[1:3]
        assert "close this [/] tag" in title.text
        assert "Who wrote Romeo and Juliet? [b]bold[/b] [@click=app.quit]x[/]" in snippet.text
        (match,) = [segment for segment in snippet if segment.text == "Juliet"]
        assert match.style is not None and match.style.bold and match.style.underline
        assert not any(segment.style and segment.style.link for segment in snippet)
        await pilot.press("enter")  # continuing it names the title in a notice
        await settle(pilot)
        assert app.chat.conversation is not None and app.chat.conversation.conversation_id == conversation
        continuing = f"Continuing conversation #{conversation} at effort medium: close this [/] tag"
        assert notices(app)[-1] == continuing
        await pilot.pause(0.2)
        toasts = [toast.render() for toast in app.screen.query(Toast)]
        assert continuing in [toast.plain for toast in toasts]


async def test_history_changed_elsewhere_gives_a_notice_and_a_refresh(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    first, second, kept = (conversation_with(store, f"question {n}") for n in range(3))
    app = make_app(history=store)
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        assert isinstance(app.screen, HistoryScreen)
        history: HistoryScreen = app.screen
        assert history.ids == [kept, second, first]
        for gone, key in ((kept, "ctrl+r"), (second, "ctrl+d")):
            elsewhere = subprocess.run(
                [sys.executable, "-m", "harmony_chat", "history", "delete", str(gone), "-y", "--history-db", str(path)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert elsewhere.returncode == 0, elsewhere.stderr
            await pilot.press(key)
            await pilot.pause(0.1)
            if key == "ctrl+d":
                assert isinstance(app.screen, ConfirmScreen)
                await pilot.press("y")
                await pilot.pause(0.1)
            assert app.screen is history
            assert f"Conversation #{gone} is no longer in the history" in notices(app)[-1]
            assert gone not in history.ids
        assert history.ids == [first]
        await pilot.press("ctrl+r")  # renaming a conversation deleted while the rename box is open
        await pilot.pause(0.1)
        assert isinstance(app.screen, RenameScreen)
        store.delete(first)
        app.screen.query_one(Input).value = "New title"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.screen is history
        assert history.ids == []
        assert f"Conversation #{first} is no longer in the history" in notices(app)[-1]


async def test_the_app_says_when_the_history_is_off(tmp_path: Path) -> None:
    app = make_app()
    app.history_off = f"cannot keep the history in {tmp_path}: it is a directory"
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        assert "history off" in str(app.chat.status.render())
        assert notices(app)[0] == f"History is off: {app.history_off}"
        await send(pilot, QUESTION)
        assert app.chat.query_one(AssistantTurn).final_text
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        assert notices(app)[-1] == f"The history is off ({app.history_off})."


async def test_the_title_follows_an_edit_of_the_first_message(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    app = make_app(history=store)
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, "What is 2 + 3?")
        await send(pilot, "/edit")
        assert app.chat.prompt.text == "What is 2 + 3?"
        await send(pilot, "What is 2 + 2?")
    (row,) = store.list_conversations()
    assert row.title == "What is 2 + 2?"
    assert [m.content[0].text for m in store.load(row.id).messages][0] == "What is 2 + 2?"


ESCAPES = "\x1b]0;owned\x07\x1b[2J\x9b2K"
"""Retitle the terminal, erase the screen, and (C1 CSI) erase a line."""
SHOWN = "␛]0;owned␇␛[2J�2K"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


async def test_titles_snippets_and_models_show_control_characters_as_symbols(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    conversation = store.create_conversation({"effort": "low"}, f"model{ESCAPES}")
    store.add_message(conversation, Message.from_role_and_content(Role.USER, f"Imported {ESCAPES} juliet"))
    app = make_app(history=store)
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        history = app.screen
        assert isinstance(history, HistoryScreen)
        options = history.query_one(OptionList)
        listed = "\n".join(strip.text for strip in rendered(options))
        assert not RAW_CONTROL.search(listed) and f"Imported {SHOWN} juliet" in listed and f"model{SHOWN}" in listed
        history.query_one("#history-search", Input).value = "juliet"
        await pilot.pause(0.1)
        title, snippet = rendered(options)[1:3]
        assert not RAW_CONTROL.search(title.text + snippet.text)
        assert f"Imported {SHOWN} juliet" in title.text and f"Imported {SHOWN} juliet" in snippet.text
        (match,) = [segment for segment in snippet if segment.text == "juliet"]  # the match is still the match
        assert match.style is not None and match.style.bold and match.style.underline
        await pilot.press("ctrl+r")
        await pilot.pause(0.1)
        assert isinstance(app.screen, RenameScreen)
        field = app.screen.query_one(Input)
        drawn = "\n".join(strip.text for strip in field.render_lines(field.region.reset_offset))
        assert not RAW_CONTROL.search(drawn) and f"Imported {SHOWN}" in drawn


def test_a_highlight_after_a_line_break_stays_on_its_match() -> None:
    prompt = hit_prompt(ConversationHit(1, "t\x1b", "a\r\nb\x07 juliet", ((6, 12),)))
    assert prompt.plain == "#1  t␛\n    a\nb␇ juliet"
    (span,) = [span for span in prompt.spans if str(span.style) == MATCH_STYLE]
    assert prompt.plain[span.start : span.end] == "juliet"
