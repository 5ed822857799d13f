"""Reading replies: quoting server text, finding leaks, joining streams, the effort statistic."""

from __future__ import annotations

import io

import pytest

from harmony_chat.conform.checks.effort import superiority
from harmony_chat.conform.command import pick_model
from harmony_chat.conform.guide import Clause
from harmony_chat.conform.readers import (
    analysis_in_answer,
    assemble_chat_stream,
    get,
    markup_in,
    prompt_tokens,
    quote,
)
from harmony_chat.conform.report import plain, print_table
from harmony_chat.conform.result import Check, CheckResult, Outcome, Status
from harmony_chat.conform.runner import Audit
from harmony_chat.conform.transport import Reply, api_base
from harmony_chat.text_safety import visible


def test_quote_escapes_control_characters_and_clips() -> None:
    assert quote("a\x1b[31mred") == '"a\\u001b[31mred"'
    assert quote("x" * 100, 10) == '"' + "x" * 9 + '…"'
    assert quote(None) == '"null"'


def test_plain_is_the_one_neutraliser() -> None:
    assert plain("ok \x1b]0;title\x07 \u202e") == visible("ok \x1b]0;title\x07 \u202e") == "ok ␛]0;title␇ \\u202e"
    assert plain("tab\tand newline\n stay") == "tab\tand newline\n stay"


@pytest.mark.parametrize(
    "model",
    ["[/bold]", "[link=https://evil.example/steal]trusted-model[/link] [blink]x", "gpt-oss\x1b]8;;https://e\x07"],
)
def test_a_servers_model_id_is_printed_as_text_never_markup(model: str) -> None:
    clause = Clause(source="guide", section="s", rule="[bold]rule[/bold] from a file")
    check = Check("c1", "[red]title", "chat", clause, lambda _session: Outcome.passed("x"))
    result = CheckResult(check, Outcome(Status.FAIL, "evidence [link=https://evil.example]x[/link]"))
    stream = io.StringIO()
    print_table(Audit("http://127.0.0.1:1 [i]", model, (result,), 1), stream)
    out = stream.getvalue()
    assert visible(model) in out.replace("\n", "")  # the id itself, every bracket kept
    assert "\x1b" not in out and "[red]title" in out and "[link=https://evil.example]x[/link]" in out


def test_markup_finds_tokens_and_header_residue_but_not_prose() -> None:
    assert markup_in("<|channel|>final<|message|>4") == ["<|channel|>", "<|message|>"]
    assert markup_in("analysisUser asks 2+2.assistantfinal4") == ["analysis", "assistantfinal"]
    assert markup_in("analysisUser asks") == ["analysis"]
    assert markup_in('commentary to=functions.get_weather json{"location":"Oslo"}') == ["commentary to="]
    assert markup_in("Calling to=functions.get_weather now") == ["to=functions."]
    assert markup_in("The final analysis: 4. Commentary is welcome.") == []


def test_analysis_in_answer_needs_the_reasonings_start_in_the_answer() -> None:
    reasoning = "User asks 2 + 2. Two plus two is four."
    assert analysis_in_answer("User asks 2 + 2.  Two plus two is four. 2 + 2 = 4.", reasoning)
    assert not analysis_in_answer("2 + 2 = 4.", reasoning)
    assert not analysis_in_answer("Simple sum. 4", "Simple sum.")  # too short to tell


def test_stream_joins_content_reasoning_by_field_and_tool_calls_by_index() -> None:
    events = [
        {"choices": [{"delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"delta": {"reasoning_content": "Need "}}]},
        {"choices": [{"delta": {"reasoning_content": "weather."}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                                "function": {"name": "get_weather", "arguments": ""}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"location":'}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 12}},
        "not an object",
    ]  # fmt: skip
    stream = assemble_chat_stream(events)
    assert stream.reasoning == {"reasoning_content": "Need weather."} and stream.content == ""
    assert stream.tool_calls == [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"location":"Oslo"}'}}
    ]
    assert stream.finish_reason == "tool_calls" and stream.usage == {"prompt_tokens": 12}
    assert prompt_tokens(Reply("p", 200, events=events)) == 12


def test_prompt_tokens_reads_either_api_and_refuses_what_is_not_a_count() -> None:
    assert prompt_tokens(Reply("p", 200, {"usage": {"input_tokens": 9}})) == 9
    assert prompt_tokens(Reply("p", 200, {"usage": {"prompt_tokens": True}})) is None
    assert prompt_tokens(Reply("p", 200, ["no", "usage"])) is None


def test_get_walks_only_what_is_there() -> None:
    data = {"choices": [{"message": {"content": "hi"}}]}
    assert get(data, "choices", 0, "message", "content") == "hi"
    assert get(data, "choices", 3, "message") is None and get(data, "choices", "x") is None


def test_superiority_counts_ties_as_half() -> None:
    assert superiority([1, 2], [3, 4]) == 1.0
    assert superiority([3, 4], [1, 2]) == 0.0
    assert superiority([2], [2]) == 0.5


def test_api_base_adds_v1_once() -> None:
    assert api_base("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1"
    assert api_base("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"


def test_the_model_checked_is_the_first_gpt_oss_one_listed() -> None:
    assert pick_model(["llama3:8b", "gpt-oss:20b", "gpt-oss:120b"]) == "gpt-oss:20b"
    assert pick_model(["openai/GPT_OSS-120b"]) == "openai/GPT_OSS-120b"
    assert pick_model(["pocket.gguf", "other"]) == "pocket.gguf"
    assert pick_model([]) is None
