"""Each check against servers that break its clause: the vLLM recording with one reply changed.

The vLLM recording passes these checks (``test_recordings``); each test here changes the replies a
check reads into what a non-conforming server sends and asserts the check fails (or says why it
cannot tell), with the evidence naming what went wrong.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from harmony_chat.conform.result import Status
from tests.conform.conftest import FIXTURES, audit_of, evidence, statuses


@pytest.fixture
def vllm() -> dict[str, Any]:
    """The vLLM recording's probes (a copy to change)."""
    probes: dict[str, Any] = json.loads((FIXTURES / "vllm.json").read_text(encoding="utf-8"))["probes"]
    return copy.deepcopy(probes)


def _message(probes: dict[str, Any], name: str) -> dict[str, Any]:
    message: dict[str, Any] = probes[name]["json"]["choices"][0]["message"]
    return message


def _result(probes: dict[str, Any], check_id: str, samples: int = 1) -> tuple[Status, str]:
    audit = audit_of(probes, samples=samples)
    return statuses(audit)[check_id], evidence(audit, check_id)


def test_the_unchanged_recording_passes_what_these_tests_break(vllm: dict[str, Any]) -> None:
    audit = audit_of(vllm, samples=2)
    for check_id in (
        "chat.reasoning",
        "chat.cot.dropped",
        "chat.cot.kept",
        "chat.leak.markup",
        "chat.leak.analysis",
        "chat.tools.call",
        "chat.effort",
        "chat.errors",
        "responses.reasoning.stream",
        "responses.reasoning",
    ):
        assert statuses(audit)[check_id] is Status.PASS, (check_id, evidence(audit, check_id))  # fmt: skip


def test_reasoning_under_another_name_fails_naming_it(vllm: dict[str, Any]) -> None:
    message = _message(vllm, "chat.plain")
    message["thinking"] = message.pop("reasoning")
    status, why = _result(vllm, "chat.reasoning")
    assert status is Status.FAIL and "message.thinking" in why and "Ollama" in why


def test_reasoning_kept_after_a_final_answer_fails_with_the_counts(vllm: dict[str, Any]) -> None:
    vllm["chat.cot.final.reasoning"]["json"]["usage"]["prompt_tokens"] = 115
    status, why = _result(vllm, "chat.cot.dropped")
    assert status is Status.FAIL and "sent as reasoning: prompt_tokens 115 vs 101 without (+14)" in why


def test_reasoning_kept_only_under_a_deviating_name_still_fails_the_drop_rule(vllm: dict[str, Any]) -> None:
    vllm["chat.cot.final.thinking"]["json"]["usage"]["prompt_tokens"] = 112
    status, why = _result(vllm, "chat.cot.dropped")
    assert status is Status.FAIL and "sent as thinking" in why and "sent as reasoning:" not in why


def test_reasoning_dropped_inside_a_tool_loop_fails_and_names_the_field_the_server_reads(vllm: dict[str, Any]) -> None:
    vllm["chat.cot.loop.reasoning"]["json"]["usage"]["prompt_tokens"] = 172
    vllm["chat.cot.loop.reasoning_content"] = copy.deepcopy(vllm["chat.cot.loop.reasoning"])  # asked only then
    vllm["chat.cot.loop.reasoning_content"]["json"]["usage"]["prompt_tokens"] = 202
    status, why = _result(vllm, "chat.cot.kept")
    assert status is Status.FAIL
    assert "prompt_tokens 172 with it = 172 without" in why and "sent as reasoning_content it counts (+30)" in why


def test_no_usage_means_the_rule_cannot_be_checked(vllm: dict[str, Any]) -> None:
    for name in ("chat.cot.loop.reasoning", "chat.cot.loop.none"):
        del vllm[name]["json"]["usage"]
    status, why = _result(vllm, "chat.cot.kept")
    assert status is Status.NOT_OFFERED and "no usage.prompt_tokens" in why


def test_a_refused_reasoning_field_fails_the_input_check(vllm: dict[str, Any]) -> None:
    vllm["chat.cot.loop.reasoning"] = {"status": 400, "json": {"error": {"message": "Extra inputs are not permitted"}}}
    status, why = _result(vllm, "chat.reasoning.input")
    assert status is Status.FAIL and "HTTP 400 (Extra inputs are not permitted)" in why


def test_exclude_that_takes_the_answer_too_fails(vllm: dict[str, Any]) -> None:
    vllm["chat.exclude"]["json"]["choices"][0]["message"] = {"role": "assistant", "content": None}
    status, why = _result(vllm, "chat.reasoning.exclude")
    assert status is Status.FAIL and "the answer went too" in why


@pytest.mark.parametrize(
    ("content", "found"),
    [
        ("<|channel|>final<|message|>2 + 2 = 4.", "<|channel|>"),
        ("analysisUser asks.assistantfinal2 + 2 = 4.", "assistantfinal"),
    ],
)
def test_harmony_markup_in_content_fails(vllm: dict[str, Any], content: str, found: str) -> None:
    _message(vllm, "chat.structured")["content"] = content
    status, why = _result(vllm, "chat.leak.markup")
    assert status is Status.FAIL and "chat.structured:" in why and found in why


def test_an_answer_that_repeats_the_reasoning_fails(vllm: dict[str, Any]) -> None:
    message = _message(vllm, "chat.plain")
    message["content"] = message["reasoning"] + " 2 + 2 = 4."
    status, why = _result(vllm, "chat.leak.analysis")
    assert status is Status.FAIL and "chat.plain:" in why


def test_a_cut_off_answer_with_the_reasoning_in_content_fails(vllm: dict[str, Any]) -> None:
    message = _message(vllm, "chat.cutoff")
    message["content"], message["reasoning"] = message["reasoning"], None
    status, why = _result(vllm, "chat.leak.analysis")
    assert status is Status.FAIL and "cut off while reasoning, content holds" in why


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("functions.get_weather", '{"location":"Oslo"}', "harmony recipient or channel residue"),
        ("get_weather<|channel|>commentary", '{"location":"Oslo"}', "residue"),
        ("get_weather", "{'location': 'Oslo'}", "arguments are not JSON"),
        ("get_weather", '{"city":"Oslo"}', "'location' is a required property"),
    ],
)
def test_a_broken_tool_call_fails(vllm: dict[str, Any], name: str, arguments: str, expected: str) -> None:
    _message(vllm, "chat.tool")["tool_calls"][0]["function"] = {"name": name, "arguments": arguments}
    status, why = _result(vllm, "chat.tools.call")
    assert status is Status.FAIL and expected in why


def test_a_call_without_finish_reason_tool_calls_fails(vllm: dict[str, Any]) -> None:
    vllm["chat.tool"]["json"]["choices"][0]["finish_reason"] = "stop"
    status, why = _result(vllm, "chat.tools.call")
    assert status is Status.FAIL and 'finish_reason "stop"' in why


def test_no_call_is_inconclusive_but_a_call_written_as_text_fails(vllm: dict[str, Any]) -> None:
    message = _message(vllm, "chat.tool")
    del message["tool_calls"]
    message["content"] = "I cannot check the weather."
    vllm["chat.tool"]["json"]["choices"][0]["stop_reason"] = None  # it stopped on <|return|>, not <|call|>
    status, why = _result(vllm, "chat.tools.call")
    assert status is Status.INCONCLUSIVE and "--tool-call-parser openai" in why  # vLLM's system_fingerprint
    message["content"] = (
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Oslo"}'
    )
    status, why = _result(vllm, "chat.tools.call")
    assert status is Status.FAIL and "the call is in content as text" in why


def test_a_preamble_that_is_also_reasoning_fails(vllm: dict[str, Any]) -> None:
    message = _message(vllm, "chat.tool")
    message["content"] = "Let me check the weather in Oslo."
    assert _result(vllm, "chat.tools.preamble")[0] is Status.PASS
    message["reasoning"] += " Let me check the weather in Oslo."
    status, why = _result(vllm, "chat.tools.preamble")
    assert status is Status.FAIL and "is also in the reasoning" in why


def test_effort_that_changes_nothing_fails_and_a_mixed_result_is_inconclusive(vllm: dict[str, Any]) -> None:
    def tokens(level: str, sample: int) -> dict[str, Any]:  # vLLM counts them: usage wins over the text
        details: dict[str, Any] = vllm[f"chat.effort.{level}.{sample}"]["json"]["usage"]["completion_tokens_details"]
        return details

    for sample in (0, 1):  # high effort reasons exactly as long as low
        low = _message(vllm, f"chat.effort.low.{sample}")["reasoning"]
        _message(vllm, f"chat.effort.high.{sample}")["reasoning"] = low
        tokens("high", sample)["reasoning_tokens"] = tokens("low", sample)["reasoning_tokens"]
    status, why = _result(vllm, "chat.effort", samples=2)
    assert status is Status.FAIL and "P(high > low) = 0.50" in why
    _message(vllm, "chat.effort.high.0")["reasoning"] = "A much longer look at 7 times 8, checked twice."
    tokens("high", 0)["reasoning_tokens"], tokens("high", 1)["reasoning_tokens"] = 12, 2  # one longer, one shorter
    status, why = _result(vllm, "chat.effort", samples=2)
    assert status is Status.INCONCLUSIVE and "more --samples" in why


def test_structured_output_that_breaks_the_schema_fails(vllm: dict[str, Any]) -> None:
    _message(vllm, "chat.structured")["content"] = '{"items": "coffee"}'
    status, why = _result(vllm, "chat.structured")
    assert status is Status.FAIL and "is not of type 'array'" in why
    _message(vllm, "chat.structured")["content"] = "Here is your list: coffee, soda, eggs"
    assert "not JSON" in _result(vllm, "chat.structured")[1]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ({"status": 400, "json": {"error": "Unauthorized"}}, "error is a bare string"),
        ({"status": 400, "text": "Bad Request"}, "the body is not JSON"),
        (
            {"status": 400, "json": {"object": "error", "message": "bad", "type": "x", "code": 400}},
            "a flat error object",
        ),
        ({"status": 200, "json": {"choices": []}}, "HTTP 200 (accepted, not a 4xx)"),
        ({"status": 500, "json": {"error": {"message": "boom", "type": "server_error"}}}, "a server error"),
    ],
)
def test_error_replies_out_of_shape_fail(vllm: dict[str, Any], reply: dict[str, Any], expected: str) -> None:
    vllm["chat.error.bad_role"] = reply
    status, why = _result(vllm, "chat.errors")
    assert status is Status.FAIL and "bad_role: " in why and expected in why


def test_an_unanswered_error_probe_is_inconclusive(vllm: dict[str, Any]) -> None:
    del vllm["chat.error.bad_type"]
    status, why = _result(vllm, "chat.errors")
    assert status is Status.INCONCLUSIVE and "bad_type: not in the recording" in why


def test_reasoning_events_out_of_order_or_not_adding_up_fail(vllm: dict[str, Any]) -> None:
    events = vllm["responses.plain.stream"]["events"]
    first, second = events[5]["sequence_number"], events[6]["sequence_number"]
    events[5]["sequence_number"], events[6]["sequence_number"] = second, first
    assert "sequence_number goes" in _result(vllm, "responses.reasoning.stream")[1]
    events[5]["sequence_number"], events[6]["sequence_number"] = first, second
    next(event for event in events if event["type"] == "response.reasoning_text.done")["text"] = "something else"
    status, why = _result(vllm, "responses.reasoning.stream")
    assert status is Status.FAIL and "do not add up" in why


def test_reasoning_events_without_locators_fail(vllm: dict[str, Any]) -> None:
    for event in vllm["responses.plain.stream"]["events"]:
        event.pop("content_index", None)
    status, why = _result(vllm, "responses.reasoning.stream")
    assert status is Status.FAIL and "lacks content_index" in why


def test_a_stream_answered_with_one_json_body_fails(vllm: dict[str, Any]) -> None:
    vllm["chat.plain.stream"] = vllm["chat.plain"]
    status, why = _result(vllm, "chat.reasoning.stream")
    assert status is Status.FAIL and "one JSON body came back" in why


def test_a_missing_responses_endpoint_makes_every_responses_check_not_offered(vllm: dict[str, Any]) -> None:
    vllm["responses.plain"] = {"status": 404, "json": {"detail": "Not Found"}}
    audit = audit_of(vllm)
    responses = {check: status for check, status in statuses(audit).items() if check.startswith("responses.")}
    assert responses and set(responses.values()) == {Status.NOT_OFFERED}
    assert "does not serve POST /v1/responses (responses.plain: HTTP 404)" in evidence(audit, "responses.effort")
    assert statuses(audit)["chat.reasoning"] is Status.PASS


def test_a_404_naming_the_model_is_a_refusal_not_a_missing_endpoint(vllm: dict[str, Any]) -> None:
    error = {"message": "The model `gpt-oss` does not exist.", "type": "NotFoundError", "param": "model", "code": 404}
    vllm["responses.plain"] = {"status": 404, "json": {"error": error}}
    status, why = _result(vllm, "responses.reasoning")
    assert status is Status.FAIL and "does not exist" in why


def test_a_reply_no_reader_foresaw_does_not_stop_the_audit(vllm: dict[str, Any]) -> None:
    vllm["chat.plain"]["json"] = ["not", "a", "completion"]
    vllm["responses.plain"]["json"] = {"output": "not a list", "id": 7}
    audit = audit_of(vllm)
    assert statuses(audit)["chat.reasoning"] is Status.FAIL
    assert "no choices[0].message" in evidence(audit, "chat.reasoning")
    assert statuses(audit)["responses.reasoning"] is Status.FAIL
    assert len(audit.results) == 28


def test_deltas_without_a_done_event_fail(vllm: dict[str, Any]) -> None:
    events = vllm["responses.plain.stream"]["events"]
    vllm["responses.plain.stream"]["events"] = [e for e in events if e["type"] != "response.reasoning_text.done"]
    status, why = _result(vllm, "responses.reasoning.stream")
    assert status is Status.FAIL and "14 deltas but no response.reasoning_text.done" in why
