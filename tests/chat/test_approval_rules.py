"""What the approval dialog shows, what each ``approve`` mode does, and what the model is told when a call is declined.

The calls come from the stream decoder (harmony text as gpt-oss writes it) and go through the real
:class:`ToolRunner`; the tool behind them only records that it ran, so every test can say whether
anything ran at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.chat.approval import ApprovalPolicy, Choice, Decision, ToolReview
from harmony_chat.chat.builtins import BrowserBuiltin
from harmony_chat.chat.events import ApprovalRequested, ChatEvent, ToolFinished, ToolStarted
from harmony_chat.chat.tool_calls import ToolRunner, answer_with
from harmony_chat.chat.toolset import ToolSet
from harmony_chat.harmony.events import ToolCall
from harmony_chat.tools.base import ApprovalMode, ToolResult, ToolSpec
from tests.chat.approvals import decide
from tests.helpers import decode, ids

WEATHER_CALL = (
    '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Zürich","days":[1,2]}<|call|>'
)
DECLINED = "The user declined this call of functions.get_weather; it was not run."


class Weather:
    """An MCP-like provider with one tool, ``get_weather`` on server ``weather``, that records its calls."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec("get_weather", "weather", "get_weather", "The weather in a city.", {})]

    def call(
        self, name: str, arguments: dict[str, object], *, timeout_s: float, should_stop: Callable[[], bool]
    ) -> ToolResult:
        self.calls.append(arguments)
        return ToolResult("sunny", "done")

    def close(self) -> None:
        return None


class Answers:
    """An approver that answers ``choice`` and keeps what the dialog was shown."""

    def __init__(self, choice: Choice, reason: str = "") -> None:
        self.decision = Decision(choice, reason)
        self.shown: list[ToolReview] = []

    def __call__(self, review: ToolReview) -> Decision:
        self.shown.append(review)
        return self.decision


def _call(encoding: HarmonyEncoding, text: str) -> ToolCall:
    (call,) = decode(encoding, ids(encoding, text)).tool_calls
    return call


def _run(runner: ToolRunner, call: ToolCall, approver: Answers | None = None) -> list[ChatEvent]:
    """The call's events, each approval request answered by ``approver`` (None: the runner has nobody to ask)."""
    events = runner.run(call, 1, lambda: False)
    return list(answer_with(events, approver) if approver is not None else events)


@pytest.fixture
def weather() -> Weather:
    return Weather()


@pytest.fixture
def browser() -> Iterator[BrowserBuiltin]:
    tool = BrowserBuiltin()
    yield tool
    tool.close()


def test_the_dialog_shows_json_arguments_indented_and_unescaped(encoding: HarmonyEncoding, weather: Weather) -> None:
    approver = Answers(Choice.DENY)
    runner = ToolRunner(ToolSet([weather]), ApprovalPolicy.from_config("ask"), asks=True)
    _run(runner, _call(encoding, WEATHER_CALL), approver)
    (review,) = approver.shown
    assert review.arguments == '{\n  "city": "Zürich",\n  "days": [\n    1,\n    2\n  ]\n}'
    assert (review.key, review.server, review.tool, review.called_as) == (
        "weather.get_weather",
        "weather",
        "get_weather",
        "functions.get_weather",
    )


def test_the_dialog_shows_a_built_in_call_that_is_not_json_as_the_model_wrote_it(
    encoding: HarmonyEncoding, browser: BrowserBuiltin
) -> None:
    approver = Answers(Choice.DENY)
    runner = ToolRunner(ToolSet(builtins=[browser]), ApprovalPolicy.from_config("ask"), asks=True)
    written = 'search for "Zürich weather"\n  topn: 3'
    _run(runner, _call(encoding, f"<|channel|>analysis to=browser.search<|message|>{written}<|call|>"), approver)
    json_call = '<|channel|>analysis to=browser.search <|constrain|>json<|message|>{"query":"Zürich"}<|call|>'
    _run(runner, _call(encoding, json_call), approver)
    assert [review.arguments for review in approver.shown] == [written, '{\n  "query": "Zürich"\n}']
    assert approver.shown[0].language == "json" and approver.shown[0].per_conversation


def test_approve_none_runs_nothing_asks_no_one_and_tells_the_model_why(
    encoding: HarmonyEncoding, weather: Weather
) -> None:
    approver = Answers(Choice.ONCE)
    policy = ApprovalPolicy.from_config("none", ["weather.get_weather"])  # a saved "always" does not override it
    events = _run(ToolRunner(ToolSet([weather]), policy, asks=True), _call(encoding, WEATHER_CALL), approver)
    (finished,) = events  # no question asked
    assert isinstance(finished, ToolFinished)
    assert finished.result.text == f"{DECLINED} Reason: tool calls are turned off (approve = none)"
    assert (finished.result.status, finished.approval) == ("denied", "denied")
    assert weather.calls == [] and approver.shown == []


def test_a_declined_call_tells_the_model_the_user_s_reason_or_none(encoding: HarmonyEncoding, weather: Weather) -> None:
    call = _call(encoding, WEATHER_CALL)
    texts = []
    for reason in ("it is sunny here anyway", ""):
        runner = ToolRunner(ToolSet([weather]), ApprovalPolicy.from_config("ask"), asks=True)
        asked, finished = _run(runner, call, Answers(Choice.DENY, reason))
        assert isinstance(asked, ApprovalRequested) and asked.review.key == "weather.get_weather"
        assert isinstance(finished, ToolFinished) and finished.approval == "denied"
        texts.append(finished.result.text)
    assert texts == [f"{DECLINED} Reason: it is sunny here anyway", DECLINED]
    assert weather.calls == []


def test_approve_all_runs_every_call_without_asking(encoding: HarmonyEncoding, weather: Weather) -> None:
    approver = Answers(Choice.DENY)
    events = _run(
        ToolRunner(ToolSet([weather]), ApprovalPolicy.from_config("all"), asks=True),
        _call(encoding, WEATHER_CALL),
        approver,
    )
    assert [type(event) for event in events] == [ToolStarted, ToolFinished]
    finished = events[-1]
    assert isinstance(finished, ToolFinished) and (finished.result.text, finished.approval) == ("sunny", "auto")
    assert weather.calls == [{"city": "Zürich", "days": [1, 2]}] and approver.shown == []


@pytest.mark.parametrize(("mode", "how"), [("all", "auto"), ("ask", "always")])
def test_a_call_run_unasked_is_run_once_and_remembered_by_no_one(mode: ApprovalMode, how: str) -> None:
    review = ToolReview("weather.get_weather", "weather", "get_weather", "functions.get_weather", "{}")
    policy = ApprovalPolicy.from_config(mode, ["weather.get_weather"])
    assert decide(policy, review, None) == (Decision(Choice.ONCE), how)
    assert policy.session_always == set() and policy.conversation_always == set()


def test_with_no_servers_named_a_saved_key_approves_any_mcp_server_s_tool(
    encoding: HarmonyEncoding, weather: Weather, browser: BrowserBuiltin
) -> None:
    policy = ApprovalPolicy.from_config("ask", ["weather.get_weather", "builtin.browser"])  # servers: not named
    runner = ToolRunner(ToolSet([weather], [browser]), policy)  # nobody to ask: only saved keys run
    events = _run(runner, _call(encoding, WEATHER_CALL))
    assert isinstance(events[-1], ToolFinished) and events[-1].approval == "always" and len(weather.calls) == 1
    search = '<|channel|>analysis to=browser.search <|constrain|>json<|message|>{"query":"x"}<|call|>'
    (declined,) = _run(runner, _call(encoding, search))
    assert isinstance(declined, ToolFinished) and declined.approval == "denied"  # never a built-in
    approver = Answers(Choice.ALWAYS_SAVE)
    other = ToolReview("maps.route", "maps", "route", "functions.route", "{}")
    assert decide(policy, other, approver)[0].choice is Choice.ALWAYS_SAVE and approver.shown[0].savable
    assert policy.always == {"weather.get_weather", "builtin.browser", "maps.route"}


def test_the_saved_keys_that_approve_nothing_are_named_unless_a_server_is_called_builtin() -> None:
    saved = ["weather.get_weather", "builtin.python", "builtin.browser"]
    assert ApprovalPolicy.from_config("ask", saved, servers=["weather"]).ignored_always() == [
        "builtin.browser",
        "builtin.python",
    ]
    assert ApprovalPolicy.from_config("ask", saved).ignored_always() == ["builtin.browser", "builtin.python"]
    named = ApprovalPolicy.from_config("ask", saved, servers=(name for name in ("weather", "builtin")))
    assert named.ignored_always() == []  # an MCP server the user named "builtin": these keys are its tools
    its_tool = ToolReview("builtin.python", "builtin", "python", "functions.python", "{}")
    assert decide(named, its_tool, None) == (Decision(Choice.ONCE), "always")


def test_the_code_view_folds_only_long_blank_runs_and_counts_every_line() -> None:
    from harmony_chat.chat.approval import BLANK_RUN, code_view

    short = "a\n\n\nb"  # two blank lines: kept as they are
    assert code_view(short).text == short and code_view(short).summary == "4 lines"
    long = "a\n" + "\n" * BLANK_RUN + "b\n   \n\t\n \n"
    view = code_view(long)
    assert view.text == f"a\n⋯ {BLANK_RUN} blank lines ⋯\nb\n⋯ 4 blank lines ⋯"
    assert (view.lines, view.folded) == (BLANK_RUN + 6, BLANK_RUN + 4)
    assert view.summary == f"{BLANK_RUN + 6} lines, {BLANK_RUN + 4} blank ones folded"
    assert code_view("x").summary == "1 line"
