"""The status bar renders one value, bound to its owner's (``data_bind``); approval's flow without an app."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from textual.app import App, ComposeResult
from textual.reactive import var

from harmony_chat.chat.approval import STOPPED, Choice, Decision, ToolReview
from harmony_chat.chat.events import ApprovalRequested, Notice
from harmony_chat.tui.screens.approving import ApprovalFlow, decline
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


def _flow(shown: list[tuple[Any, Any]], stops: list[bool], saved: list[ToolReview]) -> ApprovalFlow:
    return ApprovalFlow(
        lambda modal, answered: shown.append((modal, answered)),
        lambda: 0.0,
        lambda key: False,
        lambda: stops.append(True),
        saved.append,
    )


REVIEW = ToolReview("weather.get_weather", "weather", "get_weather", "functions.get_weather", "{}", savable=True)


def test_the_approval_flow_gives_the_answer_to_the_waiting_turn() -> None:
    shown: list[tuple[Any, Any]] = []
    stops: list[bool] = []
    saved: list[ToolReview] = []
    flow = _flow(shown, stops, saved)
    answer: Future[Decision] = Future()
    flow.ask(ApprovalRequested(1, "functions.get_weather", REVIEW, answer))
    ((modal, answered),) = shown
    assert flow.open == (modal, answer) and modal.review is REVIEW and not answer.done()
    modal.stop_requested = True  # escape: deny and stop the turn
    answered(None)
    assert flow.open is None and answer.result(0) == Decision(Choice.DENY) and stops == [True] and saved == []


def test_the_approval_flow_saves_an_always_and_skips_a_withdrawn_question() -> None:
    shown: list[tuple[Any, Any]] = []
    saved: list[ToolReview] = []
    flow = _flow(shown, [], saved)
    answer: Future[Decision] = Future()
    flow.ask(ApprovalRequested(1, "functions.get_weather", REVIEW, answer))
    ((_, answered),) = shown
    answered(Decision(Choice.ALWAYS_SAVE))
    assert answer.result(0).choice is Choice.ALWAYS_SAVE and saved == [REVIEW]
    unsavable: Future[Decision] = Future()
    flow.ask(ApprovalRequested(2, "functions.get_weather", replace(REVIEW, savable=False), unsavable))
    shown[-1][1](Decision(Choice.ALWAYS_SAVE))
    assert saved == [REVIEW]  # a tool that may not be saved is not written to the config file
    withdrawn: Future[Decision] = Future()
    withdrawn.set_result(Decision(Choice.DENY, "the user stopped the turn"))  # the turn was stopped before it showed
    flow.ask(ApprovalRequested(3, "functions.get_weather", REVIEW, withdrawn))
    assert len(shown) == 2 and flow.open is None


def test_a_question_no_modal_will_show_is_denied_at_once() -> None:
    answer: Future[Decision] = Future()
    decline([Notice("before"), ApprovalRequested(1, "functions.get_weather", REVIEW, answer)])
    assert answer.result(0) == STOPPED
