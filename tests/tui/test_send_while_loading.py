"""A message sent while the model loads waits in the view and goes out when the model is ready."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from harmony_chat.backends.base import ModelBackend
from harmony_chat.chat.options import ChatOptions
from harmony_chat.errors import HarmonyChatError
from harmony_chat.tui.screenshots import replay_factory
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage
from tests.tui.harness import make_app, settle

QUESTION = "How do I reverse a linked list in Python?"


def gated_factory(gate: threading.Event, fail: bool = False) -> Any:
    """The replay backend, created only once ``gate`` is set (a slow load), or a failed load."""
    replay = replay_factory()

    def factory(options: ChatOptions) -> tuple[ModelBackend, Path | None]:
        assert gate.wait(30)
        if fail:
            raise HarmonyChatError("the model file is damaged")
        backend: tuple[ModelBackend, Path | None] = replay(options)
        return backend

    return factory


async def _type_and_send(pilot: Any, text: str) -> None:
    pilot.app.chat.prompt.text = text
    await pilot.press("enter")
    await pilot.pause(0.1)


async def test_a_message_sent_while_loading_is_shown_then_answered() -> None:
    gate = threading.Event()
    app = make_app(factory=gated_factory(gate))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause(0.2)
        assert app.chat.conversation is None and app.chat.loader.loading
        await _type_and_send(pilot, QUESTION)
        assert app.chat.prompt.text == ""
        assert [m.render().plain for m in app.chat.query(UserMessage)] == [QUESTION]  # type: ignore[union-attr]
        assert not app.chat.query(AssistantTurn)
        await _type_and_send(pilot, "and another")  # one message waits at a time; the second stays typed
        assert app.chat.prompt.text == "and another"
        gate.set()
        await settle(pilot)
        assert app.chat.query_one(AssistantTurn).final_text.startswith("Walk the list once")
        assert app.chat.conversation is not None
        users = [m for m in app.chat.conversation.session.history if m.author.role.value == "user"]
        assert [m.content[0].text for m in users] == [QUESTION]
        assert len(app.chat.query(UserMessage)) == 1  # shown once, not again when sent


async def test_a_message_waiting_for_a_load_that_fails_goes_back_to_the_prompt() -> None:
    gate = threading.Event()
    app = make_app(factory=gated_factory(gate, fail=True))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause(0.2)
        await _type_and_send(pilot, QUESTION)
        assert app.chat.prompt.text == ""
        gate.set()
        await settle(pilot)
        assert app.chat.prompt.text == QUESTION
        assert not app.chat.query(UserMessage) and app.chat.status.state == "model failed to load"
