"""The chat screen shows what the visibility table says, on replayed real-model output."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from textual.widgets import Collapsible, Static

from harmony_chat.tui.screenshots import replay_factory
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.harmony_corpus import CORPUS
from tests.tui.harness import make_app, send, settle


def _texts(turn: AssistantTurn) -> str:
    return "\n".join(str(widget.render()) for widget in turn.query(Static) if widget.display)


@asynccontextmanager
async def _turn(name: str) -> AsyncIterator[AssistantTurn]:
    app = make_app(factory=replay_factory(CORPUS / f"{name}.txt"))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, "q")
        yield app.chat.query_one(AssistantTurn)


async def test_constrained_final_is_the_answer_not_a_tool_call() -> None:
    async with _turn("issue9-constrained-final") as turn:
        assert turn.final_text == '{"result":true}'
        assert not list(turn.query(Collapsible)) and not turn.no_answer


async def test_header_cut_by_another_shows_the_answer_and_hides_the_reasoning() -> None:
    async with _turn("issue9-recipient-with-markup") as turn:
        assert turn.final_text == "Hello"
        assert not list(turn.query(Collapsible))
        assert "I'm thinking" not in _texts(turn) and "<|" not in _texts(turn)


async def test_bare_channel_name_is_no_tool_call() -> None:
    async with _turn("issue17-bare-channel-as-header") as turn:
        assert turn.final_text == "ok" and not list(turn.query(Collapsible))
        assert "SECRET" not in _texts(turn)


async def test_headerless_text_stays_hidden_and_the_real_answer_comes() -> None:
    async with _turn("issue9-headerless-then-answer") as turn:
        assert turn.final_text == "It is sunny."
        assert "I must refuse" not in _texts(turn)


async def test_turn_without_an_answer_says_so() -> None:
    async with _turn("issue9-analysis-then-return") as turn:
        assert turn.no_answer and turn.final_text == ""
        assert "The model gave no answer." in _texts(turn)
        assert "Nothing to add" not in _texts(turn)


async def test_malformed_call_is_marked_and_not_waited_for() -> None:
    async with _turn("issue9-malformed-arguments") as turn:
        (row,) = turn.query(Collapsible)
        assert row.title == "Tool call → functions.get_weather (malformed, not run)"
        assert "The model gave no answer." in _texts(turn)
        assert "waiting for a tool result" not in _texts(turn)
