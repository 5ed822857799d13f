"""The conversation core: the tool loop, approval, history in step, editing; through replay."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.approval import ApprovalPolicy, Choice, Decision, ToolReview
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.events import ChatEvent, StepStarted, ToolFinished, ToolLoopLimit, ToolStarted
from harmony_chat.chat.tool_calls import ToolRunner, answer_with
from harmony_chat.chat.toolset import ToolSet
from harmony_chat.generation.turn import PromptReady
from harmony_chat.harmony.events import ContentDelta, NoAnswer
from harmony_chat.harmony.session import ChatSession
from harmony_chat.history.store import HistoryStore
from harmony_chat.tools.base import ToolResult, ToolSpec
from tests.helpers import ids

CALL = (
    "<|channel|>analysis<|message|>I need the weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location":"Tokyo"}<|call|>'
)
ANSWER = (
    "<|channel|>analysis<|message|>It is sunny.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Sunny in Tokyo.<|return|>"
)
WEATHER_SCHEMA = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}


class WeatherTools:
    """A small real tool provider: answers get_weather, can be made to block until stopped."""

    def __init__(self, block: bool = False) -> None:
        self.calls: list[dict[str, object]] = []
        self.block = block
        self.running = threading.Event()

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec("get_weather", "weather", "get_weather", "Current weather.", WEATHER_SCHEMA)]

    def call(
        self, name: str, arguments: dict[str, object], *, timeout_s: float, should_stop: Callable[[], bool]
    ) -> ToolResult:
        self.calls.append(arguments)
        self.running.set()
        started = time.monotonic()
        while self.block and not should_stop():
            time.sleep(0.01)
        if self.block:
            return ToolResult("cancelled", "cancelled", False, time.monotonic() - started)
        return ToolResult(f"sunny, 21 C in {arguments['location']}", "done", False, 0.01)

    def close(self) -> None:
        pass


def approve_once(review: ToolReview) -> Decision:
    """The user approves every call they are asked about, once."""
    return Decision(Choice.ONCE)


def make(
    encoding: HarmonyEncoding,
    turns: list[str],
    *,
    tools: WeatherTools | None = None,
    approver: Callable[[ToolReview], Decision] | None = None,
    mode: str = "ask",
    store: HistoryStore | None = None,
    max_steps: int = 8,
) -> tuple[ChatConversation, ReplayBackend]:
    backend = ReplayBackend(turns=[ids(encoding, turn) for turn in turns])
    backend.load()
    runner = None
    if tools is not None:
        runner = ToolRunner(ToolSet([tools]), ApprovalPolicy(mode), asks=approver is not None)  # type: ignore[arg-type]
    session = ChatSession(encoding, start_date="2026-01-01")
    conversation = ChatConversation(session, backend, store=store, tools=runner, max_steps=max_steps, model_name="t")
    return conversation, backend


def final_text(events: list[ChatEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")


def test_approved_call_runs_and_the_answer_uses_its_result(encoding: HarmonyEncoding) -> None:
    asked: list[ToolReview] = []

    def approve(review: ToolReview) -> Decision:
        asked.append(review)
        return Decision(Choice.ONCE)

    tools = WeatherTools()
    chat, _ = make(encoding, [CALL, ANSWER], tools=tools, approver=approve)
    events = list(answer_with(chat.send("Weather in Tokyo?"), approve))
    assert tools.calls == [{"location": "Tokyo"}]
    assert [r.key for r in asked] == ["weather.get_weather"] and '"location": "Tokyo"' in asked[0].arguments
    assert [e.step for e in events if isinstance(e, StepStarted)] == [1, 2]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].approval == "approved" and finished[0].result.text == "sunny, 21 C in Tokyo"
    assert any(isinstance(e, ToolStarted) for e in events)
    assert final_text(events) == "Sunny in Tokyo."
    second_prompt = [e for e in events if isinstance(e, PromptReady)][1].prompt.tokens
    text = encoding.decode(second_prompt)
    assert (
        "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>sunny, 21 C in Tokyo<|end|>" in text
    )
    assert "I need the weather." in text  # analysis is kept through the tool loop
    assert chat.last_answer() == "Sunny in Tokyo."


def test_declared_tools_reach_the_developer_message(encoding: HarmonyEncoding) -> None:
    chat, _ = make(encoding, [ANSWER], tools=WeatherTools(), approver=approve_once)
    events = list(answer_with(chat.send("hi"), approve_once))
    prompt = encoding.decode(next(e for e in events if isinstance(e, PromptReady)).prompt.tokens)
    assert "namespace functions" in prompt and "type get_weather" in prompt


def test_denied_call_tells_the_model_why_and_never_runs(encoding: HarmonyEncoding) -> None:
    tools = WeatherTools()
    chat, _ = make(encoding, [CALL, ANSWER], tools=tools, approver=lambda r: Decision(Choice.DENY, "not now"))
    events = list(answer_with(chat.send("Weather?"), lambda r: Decision(Choice.DENY, "not now")))
    assert tools.calls == []
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.result.status == "denied" and "declined" in finished.result.text
    assert "not now" in finished.result.text
    assert final_text(events) == "Sunny in Tokyo."


def test_mode_none_declines_without_asking(encoding: HarmonyEncoding) -> None:
    asked: list[ToolReview] = []

    def approver(review: ToolReview) -> Decision:
        asked.append(review)
        return Decision(Choice.ONCE)

    tools = WeatherTools()
    chat, _ = make(encoding, [CALL, ANSWER], tools=tools, approver=approver, mode="none")
    list(answer_with(chat.send("Weather?"), approver))
    assert asked == [] and tools.calls == []


def test_always_asks_once_per_tool(encoding: HarmonyEncoding) -> None:
    asked: list[ToolReview] = []

    def approver(review: ToolReview) -> Decision:
        asked.append(review)
        return Decision(Choice.ALWAYS)

    tools = WeatherTools()
    chat, _ = make(encoding, [CALL, CALL, ANSWER], tools=tools, approver=approver)
    events = list(answer_with(chat.send("Weather twice?"), approver))
    assert len(tools.calls) == 2 and len(asked) == 1
    assert [e.approval for e in events if isinstance(e, ToolFinished)] == ["approved", "always"]


def test_unknown_tool_and_bad_arguments_are_results_not_runs(encoding: HarmonyEncoding) -> None:
    unknown = CALL.replace("get_weather", "launch_rockets")
    broken = CALL.replace('{"location":"Tokyo"}', '["Tokyo"]')
    tools = WeatherTools()
    chat, _ = make(encoding, [unknown, broken, ANSWER], tools=tools, approver=approve_once)
    events = list(answer_with(chat.send("?"), approve_once))
    results = [e.result for e in events if isinstance(e, ToolFinished)]
    assert tools.calls == []
    assert "unknown tool" in results[0].text and "functions.get_weather" in results[0].text
    assert "not valid JSON" in results[1].text or "JSON object" in results[1].text
    assert final_text(events) == "Sunny in Tokyo."


def test_a_malformed_call_in_the_tool_loop_is_no_missing_answer(encoding: HarmonyEncoding) -> None:
    broken = CALL.replace('{"location":"Tokyo"}', '{"location": Tokyo}')
    chat, _ = make(encoding, [broken, ANSWER], tools=WeatherTools(), approver=approve_once)
    events = list(answer_with(chat.send("?"), approve_once))
    assert "not valid JSON" in next(e for e in events if isinstance(e, ToolFinished)).result.text
    assert final_text(events) == "Sunny in Tokyo."
    assert not [e for e in events if isinstance(e, NoAnswer)]  # the model got the error and answered


def test_a_malformed_call_without_a_tool_loop_gives_no_answer(encoding: HarmonyEncoding) -> None:
    broken = CALL.replace('{"location":"Tokyo"}', '{"location": Tokyo}')
    chat, _ = make(encoding, [broken])
    events = list(chat.send("?"))
    assert [e.detail for e in events if isinstance(e, NoAnswer)] == [
        "the model gave no answer: its tool call was malformed and was not run"
    ]


def test_max_steps_stops_the_loop(encoding: HarmonyEncoding) -> None:
    tools = WeatherTools()
    chat, _ = make(encoding, [CALL] * 5, tools=tools, approver=approve_once, max_steps=3)
    events = list(answer_with(chat.send("loop forever"), approve_once))
    assert len(tools.calls) == 2
    assert [e.max_steps for e in events if isinstance(e, ToolLoopLimit)] == [3]
    last = chat.session.history[-1]
    assert last.author.name == "functions.get_weather" and "limit of 3 steps" in last.content[0].text


def test_stop_during_a_tool_cancels_it_and_ends_the_turn(encoding: HarmonyEncoding) -> None:
    tools = WeatherTools(block=True)
    stop = threading.Event()
    chat, backend = make(encoding, [CALL, ANSWER], tools=tools, approver=approve_once)

    def stop_when_running() -> None:
        tools.running.wait(5)
        stop.set()

    threading.Thread(target=stop_when_running, daemon=True).start()
    events = list(answer_with(chat.send("?", should_stop=stop.is_set), approve_once))
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.result.status == "cancelled"
    assert len([e for e in events if isinstance(e, StepStarted)]) == 1  # no generation after the stop
    assert chat.session.history[-1].author.role.value == "tool"  # the call keeps its result


def test_without_a_tool_runner_a_call_ends_the_turn(encoding: HarmonyEncoding) -> None:
    chat, _ = make(encoding, [CALL, ANSWER])
    events = list(chat.send("?"))
    assert not any(isinstance(e, ToolFinished) for e in events)
    assert chat.session.pending_tool_call() is not None


def test_history_stays_in_step_through_loop_edit_and_regenerate(encoding: HarmonyEncoding, tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    chat, _ = make(encoding, [CALL, ANSWER, ANSWER], tools=WeatherTools(), approver=approve_once, store=store)
    list(answer_with(chat.send("Weather in Tokyo?"), approve_once))
    conversation = chat.conversation_id
    assert conversation is not None
    stored = store.load(conversation)
    roles = [(m.author.role.value, m.channel) for m in stored.messages]
    assert roles == [("user", None), ("assistant", "commentary"), ("tool", "commentary"), ("assistant", "final")]
    assert stored.message_meta[2]["status"] == "done" and stored.message_meta[2]["approval"] == "approved"
    assert stored.message_meta[2]["server"] == "weather" and stored.message_meta[0] == {}
    list(answer_with(chat.regenerate(), approve_once))
    regenerated = store.load(conversation).messages
    assert [(m.author.role.value, m.channel) for m in regenerated] == [("user", None), ("assistant", "final")]
    assert [(m.author.role.value, m.channel) for m in chat.session.history] == [
        ("user", None),
        ("assistant", "analysis"),
        ("assistant", "final"),
    ]
    assert chat.edit_last() == "Weather in Tokyo?"
    assert chat.session.history == [] and store.load(conversation).messages == []


def test_resume_continues_the_stored_conversation(encoding: HarmonyEncoding, tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    chat, _ = make(encoding, [ANSWER], store=store)
    chat.effort = "high"
    list(chat.send("first"))
    conversation = chat.conversation_id
    assert conversation is not None
    other, _ = make(encoding, [ANSWER], store=store)
    other.resume(conversation)
    assert other.effort == "high" and other.session.start_date == "2026-01-01"
    assert [m.author.role.value for m in other.session.history] == ["user", "assistant"]
    list(other.send("second"))
    assert len([m for m in store.load(conversation).messages if m.author.role.value == "user"]) == 2


def test_last_answer_is_none_when_the_last_turn_gave_none(encoding: HarmonyEncoding) -> None:
    chat, _ = make(encoding, [ANSWER, "<|channel|>analysis<|message|>hmm<|end|>"])
    list(chat.send("one"))
    assert chat.last_answer() == "Sunny in Tokyo."
    list(chat.send("two"))
    assert chat.last_answer() is None


def test_last_answer_is_never_a_tool_call_on_the_final_channel(encoding: HarmonyEncoding) -> None:
    call_on_final = '<|channel|>final to=functions.get_weather<|message|>{"location":"Oslo"}<|call|>'
    chat, _ = make(encoding, [call_on_final])
    list(chat.send("?"))
    assert chat.session.pending_tool_call() is not None  # a call, not an answer: /copy has nothing to copy
    assert chat.last_answer() is None


@pytest.mark.parametrize("mode", ["all"])
def test_mode_all_runs_without_asking(encoding: HarmonyEncoding, mode: str) -> None:
    tools = WeatherTools()
    chat, _ = make(encoding, [CALL, ANSWER], tools=tools, approver=None, mode=mode)
    events = list(chat.send("?"))
    assert tools.calls and next(e for e in events if isinstance(e, ToolFinished)).approval == "auto"
