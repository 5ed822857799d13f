"""The app as a new user meets it: the pocket model with its demo weather tool declared.

The app declares the demo ``get_weather`` tool to the pocket model, which changes the developer
message of every prompt: each of the welcome panel's questions must still get its answer (each
in a new chat: later turns of one chat are the second edition's work), and the weather question
must still call the tool after approval.
"""

from __future__ import annotations

import json

import pytest

from harmony_chat.chat.factory import create_backend, demo_servers
from harmony_chat.demo.weather_server import weather
from harmony_chat.pocket import POCKET_DATE, POCKET_QUESTIONS
from harmony_chat.pocket.data import CODE, FACTS
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.tui.harness import make_app, send
from tests.tui.test_tools_tui import ask, finish, rows, tools_ready

pytestmark = pytest.mark.llama

ANSWERS = {question: final for question, final, *_ in FACTS} | {CODE[0]: CODE[2]}


def pocket_app() -> HarmonyChatApp:
    """The app as ``harmony-chat`` starts it with no model (greedy, on the training date)."""
    return make_app(
        factory=create_backend, replay_demo=False, temperature=0.0, start_date=POCKET_DATE, mcp_servers=demo_servers()
    )


def last_answer(app: HarmonyChatApp) -> str:
    return list(app.chat.query(AssistantTurn))[-1].final_text


async def test_the_welcome_questions_are_answered_beside_the_demo_tool() -> None:
    app = pocket_app()
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            await tools_ready(pilot)
            questions = [question for question in POCKET_QUESTIONS if question in ANSWERS]
            assert len(questions) == len(POCKET_QUESTIONS) - 1  # all but the weather question
            for question in questions:
                await pilot.press("ctrl+n")
                await send(pilot, question)
                assert last_answer(app) == ANSWERS[question], question
                assert rows(app) == []  # no tool was called for it
            await pilot.press("ctrl+n")
            weather_question = next(question for question in POCKET_QUESTIONS if question not in ANSWERS)
            modal = await ask(pilot, weather_question)
            assert json.loads(modal.review.arguments) == {"location": "Tokyo"}
            await pilot.press("y")
            await finish(pilot)
            (row,) = rows(app)
            assert row.state == "done" and row.result is not None and row.result.text == json.dumps(weather("Tokyo"))
            assert last_answer(app) == "It is 24 °C and cloudy in Tokyo right now."
    finally:
        app.release()
