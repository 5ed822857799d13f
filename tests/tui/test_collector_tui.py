"""The app freezes what is alive after its first paint and each turn, and hands it back when the view drops turns."""

from __future__ import annotations

import gc
import weakref

import pytest

from harmony_chat import collector
from harmony_chat.tui.widgets import chat_log
from tests.tui.harness import make_app, send, settle

QUESTION = "How do I reverse a linked list in Python?"


class Cycle:
    """Garbage only the cyclic collector can free (like a dropped widget and its styles)."""

    def __init__(self) -> None:
        self.me = self


async def test_turns_are_frozen_and_a_new_chat_hands_them_back() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        assert gc.isenabled() and gc.get_freeze_count() > 0  # after the first paint
        cycle = Cycle()
        gone = weakref.ref(cycle)
        await send(pilot, QUESTION)  # the turn's end freezes what is alive, the cycle too
        del cycle
        gc.collect()
        assert gone() is not None and gc.get_freeze_count() > 0  # frozen: full passes skip it
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert gc.get_freeze_count() == 0  # the view dropped its turns: everything handed back
        await send(pilot, QUESTION)  # this turn's end collects once, then freezes again
        assert gone() is None
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # the app closed: nothing stays frozen


async def test_regenerating_hands_the_dropped_answer_back(monkeypatch: pytest.MonkeyPatch) -> None:
    released: list[int] = []

    def counted_release() -> None:
        released.append(gc.get_freeze_count())
        collector.release()

    monkeypatch.setattr(chat_log, "release", counted_release)  # the log lets go of the exchanges it drops
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, QUESTION)
        await app.chat.regenerate()
        await settle(pilot)
        assert len(released) == 1 and released[0] > 0  # the dropped answer was frozen, then handed back
        assert gc.get_freeze_count() > 0  # and everything frozen again at the new answer's end
