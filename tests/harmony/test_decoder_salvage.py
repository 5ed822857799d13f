"""Streams cut inside a header: where salvaged text goes, and the repair the user is told about."""

from __future__ import annotations

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.harmony.events import ContentDelta, MessageStarted, Recovery, StopReason
from harmony_chat.harmony.visibility import Display, display_of
from tests.helpers import Decoded, decode, ids

ARGUMENTS = '{"city": "Tokyo"}'


def _shown(result: Decoded) -> dict[Display, str]:
    """The streamed text by how it reaches the user."""
    shown: dict[Display, str] = {}
    for event in result.events:
        if isinstance(event, ContentDelta):
            display = display_of(event.channel, event.recipient)
            shown[display] = shown.get(display, "") + event.text
    return shown


@pytest.mark.parametrize(
    "stop",
    ["<|call|>", "<|end|>", "<|return|>"],
)
def test_tool_call_arguments_after_a_header_without_its_message_token_stream_to_the_tool(
    encoding: HarmonyEncoding, stop: str
) -> None:
    """The arguments are the tool's: never a preamble on the user's screen, and the call still happens."""
    text = f"<|channel|>commentary to=functions.get_weather <|constrain|>json {ARGUMENTS}{stop}"
    result = decode(encoding, ids(encoding, text))
    assert _shown(result) == {Display.TOOL: ARGUMENTS}
    deltas = [e for e in result.events if isinstance(e, ContentDelta)]
    assert {(e.channel, e.recipient) for e in deltas} == {("commentary", "functions.get_weather")}
    (started,) = [e for e in result.events if isinstance(e, MessageStarted)]
    assert (started.recipient, started.content_type) == ("functions.get_weather", "<|constrain|>json")
    (call,) = result.tool_calls
    assert (call.name, call.parsed_arguments, call.runnable) == ("functions.get_weather", {"city": "Tokyo"}, True)
    assert result.finished.reason is StopReason.CALL
    assert result.recoveries == ["missing-message"]


def test_a_header_that_overflows_keeps_its_recipient(encoding: HarmonyEncoding) -> None:
    text = "<|channel|>commentary to=functions.get_weather json " + '{"city": "Tokyo", "note": "' + "x " * 40
    result = decode(encoding, ids(encoding, text), end=StopReason.LENGTH, max_header_tokens=16)
    assert set(_shown(result)) == {Display.TOOL}
    overflow = [e.detail for e in result.events if isinstance(e, Recovery) and e.kind == "header-overflow"]
    assert overflow == ["a header ran past 16 tokens"]
    assert result.tool_calls == [] and "truncated-tool-call" in result.recoveries  # cut off: never run


def test_an_unknown_channel_without_its_message_token_keeps_every_word_hidden(encoding: HarmonyEncoding) -> None:
    text = (
        "<|channel|>thoughts the user wants weather<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"
    )
    result = decode(encoding, ids(encoding, text))
    assert _shown(result) == {Display.DEBUG: "thoughts the user wants weather", Display.ANSWER: "Sunny."}
    assert [m.channel for m in result.messages] == ["analysis", "final"]


@pytest.mark.parametrize("end", [StopReason.LENGTH, StopReason.CANCELLED, StopReason.RETURN])
def test_a_stream_that_ends_inside_a_header_reports_a_partial_header(
    encoding: HarmonyEncoding, end: StopReason
) -> None:
    for text in ("<|channel|>final", "<|channel|>commentary to=functions.get_weather"):
        result = decode(encoding, ids(encoding, text), end=end)
        assert result.recoveries == ["partial-header"], text
        assert result.messages == () and _shown(result) == {}
        assert result.finished.reason is end


@pytest.mark.parametrize("end", [StopReason.LENGTH, StopReason.RETURN])
def test_a_stream_that_ends_inside_text_without_a_header_keeps_it_hidden(
    encoding: HarmonyEncoding, end: StopReason
) -> None:
    result = decode(encoding, ids(encoding, "I must refuse this request"), end=end)
    assert result.recoveries == ["missing-message", "headerless"]
    assert _shown(result) == {Display.DEBUG: "I must refuse this request"}  # not lost, never an answer
    (message,) = result.messages
    assert message.channel is None and message.content[0].text == "I must refuse this request"
    assert result.finished.truncated is (end is not StopReason.RETURN)


def test_the_end_of_text_token_inside_a_header_discards_it(encoding: HarmonyEncoding) -> None:
    result = decode(
        encoding,
        ids(encoding, "<|channel|>final<|message|>Hi.<|end|><|start|>assistant<|channel|>fi<|endoftext|>"),
        stop_on_final=False,
    )
    assert result.recoveries == ["partial-header"]
    assert _shown(result) == {Display.ANSWER: "Hi."}
    assert result.finished.reason is StopReason.RETURN
