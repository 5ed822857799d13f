"""The decoder's answer rules: headerless text, the no-answer notice, tool-call arguments."""

from __future__ import annotations

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.harmony.events import NoAnswer, StopReason
from tests.helpers import Decoded, decode, ids


def _no_answer(result: Decoded) -> list[str]:
    return [e.detail for e in result.events if isinstance(e, NoAnswer)]


@pytest.mark.parametrize(
    "text",
    [
        "<|channel|>analysis<|message|>thinking<|return|>",
        "<|channel|>analysis<|message|>thinking<|end|><|return|>",
        "<|channel|>final<|message|>  <|return|>",
        "<|channel|>commentary<|message|>Let me check.<|return|>",
        "I must refuse<|return|>",
    ],
)
def test_a_turn_without_an_answer_says_so(encoding: HarmonyEncoding, text: str) -> None:
    result = decode(encoding, ids(encoding, text))
    assert _no_answer(result) == ["the model gave no answer"]
    assert result.text("final").strip() == ""


def test_a_valid_call_waits_and_a_malformed_one_gives_no_answer(encoding: HarmonyEncoding) -> None:
    good = decode(encoding, ids(encoding, '<|channel|>commentary to=functions.f json<|message|>{"a": 1}<|call|>'))
    assert _no_answer(good) == [] and good.tool_calls[0].runnable
    bad = decode(encoding, ids(encoding, '<|channel|>commentary to=functions.f json<|message|>{"a": one}<|call|>'))
    (call,) = bad.tool_calls
    assert not call.runnable and call.parsed_arguments is None and "not valid JSON" in (call.error or "")
    assert "malformed-arguments" in bad.recoveries
    assert _no_answer(bad) == ["the model gave no answer: its tool call was malformed and was not run"]
    assert bad.finished.reason is StopReason.CALL


def test_cut_off_or_cancelled_turns_get_their_own_notice_not_no_answer(encoding: HarmonyEncoding) -> None:
    for end in (StopReason.LENGTH, StopReason.CANCELLED, StopReason.ERROR):
        result = decode(encoding, ids(encoding, "<|channel|>analysis<|message|>still thinking"), end=end)
        assert _no_answer(result) == []


def test_headerless_text_never_ends_the_turn_or_is_lost(encoding: HarmonyEncoding) -> None:
    cut = decode(encoding, ids(encoding, "I must refuse<|start|>assistant<|channel|>final<|message|>Fine.<|return|>"))
    assert cut.text("final") == "Fine."
    assert [m.channel for m in cut.messages] == [None, "final"]
    assert cut.messages[0].content[0].text == "I must refuse"
    ended = decode(encoding, ids(encoding, "I must refuse"))
    assert [m.content[0].text for m in ended.messages] == ["I must refuse"]
    assert ended.messages[0].channel is None and "headerless" in ended.recoveries
    after = decode(
        encoding,
        ids(encoding, "<|channel|>final<|message|>A.<|end|>Oops, more text<|end|><|return|>"),
        stop_on_final=False,
    )
    assert after.text("final") == "A." and after.messages[-1].channel is None


def test_a_call_token_on_a_message_to_no_tool_is_no_call(encoding: HarmonyEncoding) -> None:
    result = decode(encoding, ids(encoding, "<|channel|>commentary to=assistant<|message|>print(1)<|call|>"))
    assert result.tool_calls == [] and result.finished.reason is StopReason.RETURN
    assert "call-without-tool" in result.recoveries


def test_recovery_details_carry_no_markup(encoding: HarmonyEncoding) -> None:
    text = (
        "<|channel|>analysis<|message|>a<|constrain|>b<|channel|>final<|message|>c<|end|><|return|>"
        "<|start|><|start|>assistant<|channel|>commentary to=assistant<|channel|>final<|message|>d<|return|>"
    )
    result = decode(encoding, ids(encoding, text), stop_on_final=False)
    details = [getattr(e, "detail", "") for e in result.events]
    assert result.recoveries and not [d for d in details if "<|" in d]
