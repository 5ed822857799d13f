"""Tool-call arguments cut off inside an array: completed when only the end is missing, never when a key might be."""

from __future__ import annotations

import json

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.harmony.arguments import check_arguments, malformed_call_result
from harmony_chat.harmony.events import Recovery, StopReason
from tests.helpers import decode, ids


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ('["ab', ["ab"]),
        ('{"tags": ["ab', {"tags": ["ab"]}),
        ('{"tags": [ \n "ab', {"tags": ["ab"]}),
        ('{"rows": [[1, 2], ["x', {"rows": [[1, 2], ["x"]]}),
    ],
)
def test_a_string_cut_off_directly_inside_an_array_is_completed(text: str, parsed: object) -> None:
    checked = check_arguments(text, "functions.tag", "<|constrain|>json")
    assert (checked.parsed, checked.repaired, checked.error) == (parsed, True, None)


@pytest.mark.parametrize("text", ['[{"ab', '{"tags": [{"name": "x"}, {"na'])
def test_a_string_that_may_be_a_key_is_never_completed(text: str) -> None:
    checked = check_arguments(text, "functions.tag", "<|constrain|>json")
    assert checked.parsed is None and not checked.repaired
    assert checked.error is not None and checked.error.startswith(
        "the arguments are not valid JSON (Unterminated string"
    )
    told = json.loads(malformed_call_result(checked.error))["error"]
    assert told.startswith("the call was not run: the arguments are not valid JSON")
    assert told.endswith("; send the call again with valid JSON arguments")


def test_a_call_cut_inside_an_array_runs_with_the_completed_arguments(encoding: HarmonyEncoding) -> None:
    text = '<|channel|>commentary to=functions.tag <|constrain|>json<|message|>{"tags": ["urg<|call|>'
    result = decode(encoding, ids(encoding, text))
    (call,) = result.tool_calls
    assert call.runnable and call.repaired
    assert call.parsed_arguments == {"tags": ["urg"]}
    assert call.arguments == '{"tags": ["urg'  # what the model wrote stays in the history as written
    (repair,) = [e for e in result.events if isinstance(e, Recovery)]
    assert (repair.kind, repair.detail) == (
        "repaired-arguments",
        "completed the cut-off JSON arguments of functions.tag",
    )
    assert result.finished.reason is StopReason.CALL


def test_a_built_in_call_declared_as_json_with_broken_json_is_never_run(encoding: HarmonyEncoding) -> None:
    text = '<|channel|>analysis to=browser.search <|constrain|>json<|message|>{"query": weather}<|call|>'
    result = decode(encoding, ids(encoding, text))
    (call,) = result.tool_calls
    assert not call.runnable and call.parsed_arguments is None
    assert call.error == "the arguments are not valid JSON (Expecting value at character 10)"
    assert "malformed-arguments" in result.recoveries
