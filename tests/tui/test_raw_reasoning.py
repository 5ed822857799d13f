"""Raw reasoning mode: consecutive analysis messages are kept apart by a blank line, live and restored."""

from __future__ import annotations

from pathlib import Path

from openai_harmony import Message, Role

from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.tui.harness import send, settle
from tests.tui.test_reasoning_tui import OneTurn, reasoning_app

FIRST = "I will run it and quote the output."
SECOND = "Python printed the result."
TWO_ANALYSES = (
    f"<|channel|>analysis<|message|>{FIRST}<|end|>"
    f"<|start|>assistant<|channel|>analysis<|message|>{SECOND}<|end|>"
    "<|start|>assistant<|channel|>final<|message|>It is 408.<|return|>"
)
SHOWN = f"{FIRST}\n\n{SECOND}"


def analysis_shown(turn: AssistantTurn) -> str:
    return str(turn.query_one(".analysis").render())


async def test_two_analysis_messages_are_separated_in_raw_mode(tmp_path: Path) -> None:
    app, _ = reasoning_app(tmp_path, [TWO_ANALYSES], mode="raw")
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, "What is 12 * 34?")
        turn = app.chat.query_one(AssistantTurn)
        assert turn.final_text == "It is 408."
        assert SHOWN in analysis_shown(turn)


async def test_a_stored_turn_s_analysis_messages_are_separated_too() -> None:
    """A turn read back from the history (its analysis kept, as before a tool call) shows the same."""
    app = OneTurn()
    async with app.run_test(size=(100, 30)) as pilot:
        app.screen.add_class("-reasoning-raw")
        turn = app.query_one(AssistantTurn)
        messages = [
            Message.from_role_and_content(Role.ASSISTANT, FIRST).with_channel("analysis"),
            Message.from_role_and_content(Role.ASSISTANT, SECOND).with_channel("analysis"),
            Message.from_role_and_content(Role.ASSISTANT, "It is 408.").with_channel("final"),
        ]
        await turn.show_stored(messages, "complete")
        await pilot.pause()
        assert SHOWN in analysis_shown(turn)
