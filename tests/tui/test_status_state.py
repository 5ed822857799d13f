"""The status bar renders one value, bound to its owner's (``data_bind``); approval's flow without an app."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual.app import App, ComposeResult
from textual.reactive import var

from harmony_chat.chat.approval import Choice, Decision, ToolReview
from harmony_chat.tui.messages import ApprovalAnswer, ApprovalNeeded
from harmony_chat.tui.screens.approving import ApprovalFlow
from harmony_chat.tui.status import StatusState
from harmony_chat.tui.widgets.status_bar import StatusBar


class StatusApp(App[None]):
    status_state: var[StatusState] = var(StatusState())

    def compose(self) -> ComposeResult:
        yield StatusBar().data_bind(StatusApp.status_state)


async def test_the_status_bar_follows_the_status_value() -> None:
    app = StatusApp()
    async with app.run_test(size=(120, 3)) as pilot:
        bar = app.query_one(StatusBar)
        assert str(bar.render()) == "no model · effort medium · idle"
        app.status_state = replace(app.status_state, model="gpt-oss-20b", effort="high", state="thinking")
        app.status_state = replace(app.status_state, tools_state="ready", tool_count=1, debug=True)
        await pilot.pause()
        assert bar.status_state is app.status_state
        assert (bar.model, bar.effort, bar.state, bar.tool_count) == ("gpt-oss-20b", "high", "thinking", 1)
        assert str(bar.render()) == "gpt-oss-20b · effort high · 1 tool · DEBUG · thinking"


def test_the_approval_flow_hands_the_answer_to_the_worker() -> None:
    shown: list[tuple[Any, Any]] = []
    stops: list[bool] = []
    flow = ApprovalFlow(
        lambda modal, answered: shown.append((modal, answered)),
        lambda: 0.0,
        lambda key: False,
        lambda: stops.append(True),
    )
    review = ToolReview("weather.get_weather", "weather", "get_weather", "functions.get_weather", "{}")
    answer = ApprovalAnswer()
    flow.ask(ApprovalNeeded(1, review, answer))
    ((modal, answered),) = shown
    assert flow.open == (modal, answer) and modal.review is review
    flow.close(ApprovalAnswer())  # another call's answer: this modal stays
    assert flow.open is not None
    modal.stop_requested = True  # escape: deny and stop the turn
    answered(None)
    assert flow.open is None and answer.decision == Decision(Choice.DENY) and stops == [True]
