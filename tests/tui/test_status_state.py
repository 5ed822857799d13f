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


def test_a_turn_s_events_give_the_status_its_figures() -> None:
    from harmony_chat.backends.base import GenerationStats
    from harmony_chat.chat.events import Notice, ReasoningSummary
    from harmony_chat.generation.turn import PromptReady, TurnStats
    from harmony_chat.harmony.events import StopReason
    from harmony_chat.harmony.session import RenderedPrompt
    from harmony_chat.tui.status import with_figures

    state = StatusState(summary_tokens=5, summary_seconds=1.0)
    state = with_figures(state, PromptReady(RenderedPrompt(list(range(120)), "low", 0), 64, 64))
    assert state.context_used == 120
    summary = ReasoningSummary("Checked.", 1, False, 40, GenerationStats(generated_tokens=12), 0.5)
    state = with_figures(state, summary)
    assert (state.summary_tokens, state.summary_seconds) == (17, 1.5)  # the turn's summaries add up
    stats = GenerationStats(prompt_tokens=120, generated_tokens=30, ttft_s=0.25, prompt_tokens_cached=96)
    state = with_figures(state, TurnStats(StopReason.RETURN, "low", stats))
    assert (state.ttft, state.cached, state.context_used) == (0.25, 96, 150)
    assert with_figures(state, Notice("nothing to count")) is state
