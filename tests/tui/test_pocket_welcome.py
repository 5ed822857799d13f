"""The app as a new user meets it: the pocket model with its demo tools (python, the weather server).

The welcome panel's questions must work in any order within one chat and after a new chat, the
tool questions through the approval modal and the real tools, and a first "hi" gets the honest
greeting that points to real models.
"""

from __future__ import annotations

import json
import random

import pytest

from harmony_chat.chat.factory import create_backend
from harmony_chat.demo.pocket import POCKET_DATE, POCKET_QUESTIONS
from harmony_chat.demo.weather import weather
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.tui.harness import make_app, send
from tests.tui.test_tools_tui import ask, finish, rows, tools_ready
from training.pocket.data import CODE, FACTS
from training.pocket.texts import fallback

pytestmark = pytest.mark.llama

ANSWERS = {question: final for question, final, *_ in FACTS} | {CODE[0]: CODE[2]}
TOOL_ANSWERS = {
    "What is 1234 * 5678?": ("python", "7006652\n", "1234 × 5678 = 7006652."),
    "What's the weather in Tokyo?": (
        "get_weather",
        json.dumps(weather("Tokyo")),
        "It is 24 °C and cloudy in Tokyo right now.",
    ),
}


def pocket_app() -> HarmonyChatApp:
    """The app as ``harmony-chat`` starts it with no model (greedy, on the training date, demo tools)."""
    return make_app(
        factory=create_backend,
        replay_demo=False,
        values={"sampling.temperature": 0.0},
        start_date=POCKET_DATE,
        demo_tools=True,
    )


def last_answer(app: HarmonyChatApp) -> str:
    return list(app.chat.query(AssistantTurn))[-1].final_text


async def answer(pilot: object, app: HarmonyChatApp, question: str) -> str:
    """Ask ``question``; approve the tool call it makes (if it should make one) and check its row."""
    before = len(rows(app))
    if question not in TOOL_ANSWERS:
        await send(pilot, question)  # type: ignore[arg-type]
        assert len(rows(app)) == before, f"no tool call for {question!r}"
        return last_answer(app)
    tool, result, _ = TOOL_ANSWERS[question]
    modal = await ask(pilot, question)  # type: ignore[arg-type]
    assert modal.review.tool == tool
    if tool == "python":
        assert modal.review.arguments == "print(1234 * 5678)"
    else:
        assert json.loads(modal.review.arguments) == {"location": "Tokyo"}
    await pilot.press("y")  # type: ignore[attr-defined]
    await finish(pilot)  # type: ignore[arg-type]
    row = rows(app)[-1]
    assert len(rows(app)) == before + 1 and row.state == "done" and row.result is not None
    assert row.result.text == result
    return last_answer(app)


def expected(question: str) -> str:
    return TOOL_ANSWERS[question][2] if question in TOOL_ANSWERS else ANSWERS[question]


async def test_hi_then_the_welcome_questions_in_any_order_then_again_after_a_new_chat() -> None:
    assert set(POCKET_QUESTIONS) <= set(ANSWERS) | set(TOOL_ANSWERS)
    shuffled = list(POCKET_QUESTIONS)
    random.Random(3).shuffle(shuffled)
    assert shuffled != list(POCKET_QUESTIONS)
    app = pocket_app()
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            await tools_ready(pilot)
            await send(pilot, "hi")
            assert last_answer(app) == fallback(python=True, weather=True)
            assert last_answer(app).startswith("Hi! ")  # a greeting gets one back
            for question in shuffled:
                assert await answer(pilot, app, question) == expected(question), question
            await pilot.press("ctrl+n")
            for question in reversed(POCKET_QUESTIONS):
                assert await answer(pilot, app, question) == expected(question), question
    finally:
        app.release()
