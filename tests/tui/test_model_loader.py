"""The model loader's outcome without an app: the message that waits for a load, and a failed load."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, cast

from textual.message import Message

from harmony_chat.chat.options import ChatOptions
from harmony_chat.tui.screens.loading import LOAD_FAILED, NOT_LOADED_YET, ModelLoader


def loader(options: ChatOptions | None = None) -> ModelLoader:
    posted: list[Message] = []

    def post(message: Message) -> bool:
        posted.append(message)
        return True

    return ModelLoader(options or ChatOptions(), cast(Any, None), None, post, threading.Lock())


def test_one_message_waits_while_a_model_loads_and_is_sent_once_it_is_ready() -> None:
    models = loader()
    assert not models.hold("too early", resuming=False)  # no load under way: nothing to wait for
    models.begin()
    assert not models.hold("first", resuming=True)  # a stored conversation is continued first
    assert models.hold("first", resuming=False)
    assert not models.hold("second", resuming=False)  # one message waits at a time
    assert models.waiting == "first" and models.loading
    assert models.ready() == "first"
    assert not models.loading and models.ready() is None  # sent once
    assert not models.hold("after", resuming=False)


def test_a_cleared_view_takes_the_waiting_message_back_and_the_load_goes_on() -> None:
    models = loader()
    models.begin()
    assert models.hold("first", resuming=False)
    assert models.take_waiting() == "first" and models.take_waiting() is None
    assert models.loading and models.hold("again", resuming=False)  # still loading: another may wait


def test_a_failed_load_gives_the_waiting_message_back_and_is_remembered_until_another_model_is_chosen() -> None:
    options = ChatOptions()
    models = loader(options)
    assert models.not_sent_notice() == (NOT_LOADED_YET, "warning")
    models.begin()
    models.hold("question", resuming=False)
    assert models.fail() == "question"
    assert not models.loading and models.failed and models.waiting is None
    assert models.not_sent_notice() == (LOAD_FAILED, "error")  # says how to go on
    assert not models.hold("question", resuming=False)  # nothing loads: the message goes back
    models.choose(path=Path("other.gguf"))
    assert not models.failed and models.not_sent_notice() == (NOT_LOADED_YET, "warning")
    assert options.settings.model.path == "other.gguf"
    models.choose(demo=True)
    assert options.demo and options.settings.model.path is None
