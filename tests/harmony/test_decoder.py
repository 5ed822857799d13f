"""The stream decoder on well-formed and malformed harmony streams, one test per repair."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_harmony import HarmonyEncoding, HarmonyError, Role, StreamableParser

from harmony_chat.harmony import decoder as decoder_module
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.decoder import StreamDecoder
from harmony_chat.harmony.events import ContentDelta, MessageStarted, NoAnswer, RawToken, Recovery, StopReason
from harmony_chat.harmony.header import is_tool_recipient
from harmony_chat.harmony.visibility import is_answer
from tests.helpers import decode, ids


def test_well_formed_turn_streams_each_channel(encoding: HarmonyEncoding) -> None:
    text = (
        "<|channel|>analysis<|message|>User asks 2+2. Easy.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Computing.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
    )
    result = decode(encoding, ids(encoding, text))
    assert result.text("analysis") == "User asks 2+2. Easy."
    assert result.text("commentary") == "Computing."
    assert result.text("final") == "2 + 2 = 4."
    assert result.finished.reason is StopReason.RETURN
    assert [m.channel for m in result.messages] == ["analysis", "commentary", "final"]
    assert result.recoveries == []
    started = [e for e in result.events if isinstance(e, MessageStarted)]
    assert [(e.channel, e.recipient) for e in started] == [("analysis", None), ("commentary", None), ("final", None)]
    assert all(e.text for e in result.events if isinstance(e, ContentDelta))  # a delta always carries text


def test_final_with_end_token_ends_turn_when_configured(encoding: HarmonyEncoding) -> None:
    text = "<|channel|>final<|message|>Done.<|end|><|start|>assistant<|channel|>analysis<|message|>more"
    stopping = decode(encoding, ids(encoding, text))
    assert stopping.finished.reason is StopReason.FINAL
    assert stopping.text("analysis") == ""
    going_on = decode(encoding, ids(encoding, text), stop_on_final=False)
    assert going_on.text("analysis") == "more"


def test_missing_start_assistant_between_messages(encoding: HarmonyEncoding) -> None:
    for gap in ("", "assistant", "<|start|>"):
        text = f"<|channel|>analysis<|message|>think<|end|>{gap}<|channel|>final<|message|>answer<|return|>"
        result = decode(encoding, ids(encoding, text))
        assert result.text("final") == "answer", gap
        if gap != "<|start|>":
            assert "missing-start" in result.recoveries


def test_channel_name_without_channel_token_after_end(encoding: HarmonyEncoding) -> None:
    # vLLM #22519: the model wrote `commentary ...` (token 12606) right after <|end|>.
    text = (
        "<|channel|>analysis<|message|>need tool<|end|>"
        'commentary to=functions.f <|constrain|>json<|message|>{"a": 1}<|call|>'
    )
    result = decode(encoding, ids(encoding, text))
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("functions.f", '{"a": 1}')]
    assert result.finished.reason is StopReason.CALL


@pytest.mark.parametrize("stray", ["<|return|>", "<|call|>", "<|end|>"])
def test_stray_stop_token_after_end(encoding: HarmonyEncoding, stray: str) -> None:
    text = f"<|channel|>final<|message|>answer<|end|>{stray}"
    result = decode(encoding, ids(encoding, text), stop_on_final=False)
    assert result.text("final") == "answer"
    assert [m.channel for m in result.messages] == ["final"]
    if stray != "<|end|>":
        assert result.finished.reason is StopReason.RETURN
    assert "stray-stop" in result.recoveries or stray == "<|end|>"


def test_channel_switch_without_end_never_leaks_markup(encoding: HarmonyEncoding) -> None:
    text = "<|channel|>analysis<|message|>secret reasoning<|channel|>final<|message|>public answer<|return|>"
    result = decode(encoding, ids(encoding, text))
    assert result.text("final") == "public answer"
    assert result.text("analysis") == "secret reasoning"
    assert "implicit-end" in result.recoveries
    start_text = "<|channel|>analysis<|message|>thinking<|start|>assistant<|channel|>final<|message|>ok<|return|>"
    assert decode(encoding, ids(encoding, start_text)).text("final") == "ok"


@pytest.mark.parametrize("prefix", ["", "<|channel|>analysis<|message|>x<|end|><|start|>assistant"])
def test_missing_message_token_is_recovered_on_any_message(encoding: HarmonyEncoding, prefix: str) -> None:
    text = f"{prefix}<|channel|>final I cannot help with that.<|end|>"
    result = decode(encoding, ids(encoding, text))
    assert result.text("final") == "I cannot help with that."
    assert result.messages[-1].channel == "final"
    assert "missing-message" in result.recoveries


def test_empty_channel_is_kept_hidden(encoding: HarmonyEncoding) -> None:
    text = "<|channel|><|message|>private thoughts<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>"
    result = decode(encoding, ids(encoding, text))
    assert result.text("final") == "ok"
    assert "private thoughts" not in result.text("final")
    assert result.text("analysis") == "private thoughts"
    assert "bad-header" in result.recoveries


@pytest.mark.parametrize("header", ["<|start|>assistantassistant", "<|start|><|start|>assistant"])
def test_duplicated_role_or_start(encoding: HarmonyEncoding, header: str) -> None:
    text = f"<|channel|>analysis<|message|>x<|end|>{header}<|channel|>final<|message|>hi<|return|>"
    result = decode(encoding, ids(encoding, text))
    assert result.text("final") == "hi"
    assert result.recoveries


def test_duplicated_role_on_first_message(encoding: HarmonyEncoding) -> None:
    result = decode(encoding, ids(encoding, "assistant<|channel|>final<|message|>hi<|return|>"))
    assert result.text("final") == "hi"


def test_endoftext_ends_the_turn(encoding: HarmonyEncoding) -> None:
    mid = decode(encoding, ids(encoding, "<|channel|>final<|message|>partial<|endoftext|>"))
    assert mid.text("final") == "partial"
    assert mid.finished.reason is StopReason.RETURN
    assert "endoftext" in mid.recoveries
    between = decode(encoding, ids(encoding, "<|channel|>final<|message|>a<|end|><|endoftext|>"), stop_on_final=False)
    assert between.finished.reason is StopReason.RETURN
    assert between.text("final") == "a"


def test_header_that_never_closes_is_bounded(encoding: HarmonyEncoding) -> None:
    tokens = ids(encoding, "<|channel|>final" + " word" * 200)
    decoder = StreamDecoder(encoding, raw_tokens=False, max_header_tokens=32)
    events = [event for token in tokens for event in decoder.feed(token)]
    kinds = [getattr(e, "kind", None) for e in events]
    assert "header-overflow" in kinds
    deltas = "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")
    assert deltas.startswith("word word")
    assert deltas.count("word") == 200


def test_recipient_in_role_or_in_channel_part(encoding: HarmonyEncoding) -> None:
    in_role = (
        "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
        '<|message|>{"city": "SF"}<|call|>'
    )
    in_channel = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "SF"}<|call|>'
    for text in (in_role.removeprefix("<|start|>"), in_channel):
        result = decode(encoding, ids(encoding, text))
        (call,) = result.tool_calls
        assert (call.name, call.arguments, call.channel) == ("functions.get_weather", '{"city": "SF"}', "commentary")
        assert call.content_type == "<|constrain|>json"
        assert result.finished.reason is StopReason.CALL


def test_constrain_glued_to_recipient(encoding: HarmonyEncoding) -> None:
    text = '<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{"x": 1}<|call|>'
    (call,) = decode(encoding, ids(encoding, text)).tool_calls
    assert call.recipient == "functions.get_weather"
    assert call.content_type == "<|constrain|>json"


def test_bare_tool_name_is_mapped_to_declared_function(encoding: HarmonyEncoding) -> None:
    text = '<|channel|>commentary to=lookup_weather json<|message|>{"location": "Tokyo"}<|call|>'
    declared = decode(encoding, ids(encoding, text), functions=["lookup_weather"]).tool_calls[0]
    assert declared.name == "functions.lookup_weather"
    assert declared.recipient == "lookup_weather"
    undeclared = decode(encoding, ids(encoding, text)).tool_calls[0]
    assert undeclared.name == "lookup_weather"


def test_truncation_keeps_partial_final_marked(encoding: HarmonyEncoding) -> None:
    result = decode(encoding, ids(encoding, "<|channel|>final<|message|>The answer is"), end=StopReason.LENGTH)
    assert result.finished.reason is StopReason.LENGTH
    assert result.finished.truncated
    assert result.text("final") == "The answer is"
    (finished,) = result.finished_messages
    assert finished.truncated and finished.end_token is None
    assert result.messages[-1].channel == "final"


def test_truncated_tool_call_is_never_executed(encoding: HarmonyEncoding) -> None:
    text = '<|channel|>commentary to=functions.delete_files <|constrain|>json<|message|>{"path": "/ho'
    result = decode(encoding, ids(encoding, text), end=StopReason.LENGTH)
    assert result.tool_calls == []
    assert "truncated-tool-call" in result.recoveries
    assert all(m.recipient is None for m in result.messages)


def test_cancellation_mid_header_discards_it(encoding: HarmonyEncoding) -> None:
    result = decode(encoding, ids(encoding, "<|channel|>fin"), end=StopReason.CANCELLED)
    assert result.finished.reason is StopReason.CANCELLED
    assert result.messages == ()


def test_utf8_split_across_tokens(encoding: HarmonyEncoding) -> None:
    emoji = encoding.encode("💖")
    assert len(emoji) == 2
    tokens = ids(encoding, "<|channel|>final<|message|>love ") + emoji + ids(encoding, " you<|return|>")
    result = decode(encoding, tokens)
    assert result.text("final") == "love 💖 you"
    assert "\ufffd" not in result.text("final")


def test_a_character_cut_by_the_end_of_its_message_streams_as_it_is_stored(encoding: HarmonyEncoding) -> None:
    """The bytes of a half-written character come out when the message ends, on its channel and recipient."""
    clef = encoding.encode("𝄞")
    assert len(clef) == 3
    answer = decode(encoding, ids(encoding, "<|channel|>final<|message|>key ") + clef[:1], end=StopReason.LENGTH)
    assert answer.text("final") == answer.messages[-1].content[0].text == "key \ufffd"
    header = '<|channel|>commentary to=functions.tune <|constrain|>json<|message|>{"clef": "'
    call = decode(encoding, ids(encoding, header) + clef[:2] + [tk.CALL])
    deltas = [e for e in call.events if isinstance(e, ContentDelta)]
    assert {(e.channel, e.recipient) for e in deltas} == {("commentary", "functions.tune")}
    (made,) = call.tool_calls
    assert "".join(e.text for e in deltas) == made.arguments == '{"clef": "\ufffd'
    assert made.parsed_arguments == {"clef": "\ufffd"}


class _LosingParser(StreamableParser):
    """openai-harmony's parser, made to fail where a message ends (a library fault the decoder must survive)."""

    def process(self, token: int) -> StreamableParser:
        if token in tk.MESSAGE_STOPS:
            raise HarmonyError("lost the message")
        return super().process(token)

    def process_eos(self) -> StreamableParser:
        raise HarmonyError("lost the message")


@pytest.mark.parametrize("end", ["<|return|>", ""])
def test_a_message_the_content_parser_loses_is_rebuilt_from_what_streamed(
    encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch, end: str
) -> None:
    monkeypatch.setattr(decoder_module, "StreamableParser", _LosingParser)
    result = decode(encoding, ids(encoding, f"<|channel|>final<|message|>Nothing is lost.{end}"), end=StopReason.LENGTH)
    notices = [(e.kind, e.detail) for e in result.events if isinstance(e, Recovery)]
    assert notices == [("rebuilt-message", "rebuilt a message the parser lost from its streamed text")]
    assert result.text("final") == result.messages[-1].content[0].text == "Nothing is lost."


def test_multilingual_deltas_add_up(encoding: HarmonyEncoding) -> None:
    text = "Привет, 世界! naïve café — ok 🙂👍🏽 テスト"
    result = decode(encoding, ids(encoding, "<|channel|>final<|message|>") + encoding.encode(text) + [tk.RETURN])
    assert result.text("final") == text
    assert result.messages[-1].content[0].text == text


@pytest.mark.parametrize("bad", [200020, 200001, tk.STARTOFTEXT, tk.VOCAB_SIZE + 5, -1])
def test_unknown_or_reserved_ids_are_dropped(encoding: HarmonyEncoding, bad: int) -> None:
    tokens = ids(encoding, "<|channel|>final<|message|>a") + [bad] + ids(encoding, "b<|return|>")
    result = decode(encoding, tokens)
    assert result.text("final") == "ab"
    assert "unknown-token" in result.recoveries


def test_raw_tokens_spell_out_specials(encoding: HarmonyEncoding) -> None:
    decoder = StreamDecoder(encoding)
    raws = [
        e
        for t in ids(encoding, "<|channel|>final<|message|>Hi<|return|>")
        for e in decoder.feed(t)
        if isinstance(e, RawToken)
    ]
    assert [r.text for r in raws] == ["<|channel|>", "final", "<|message|>", "Hi", "<|return|>"]
    assert [r.special for r in raws] == [True, False, True, False, True]
    assert raws[3].channel == "final"


def test_tokens_after_the_turn_are_ignored(encoding: HarmonyEncoding) -> None:
    decoder = StreamDecoder(encoding, raw_tokens=False)
    for token in ids(encoding, "<|channel|>final<|message|>x<|return|>"):
        decoder.feed(token)
    assert decoder.finished is not None
    assert decoder.feed(ids(encoding, "more")[0]) == []
    assert decoder.finish(StopReason.LENGTH) == []


_ALPHABET = [
    tk.START,
    tk.END,
    tk.MESSAGE,
    tk.CHANNEL,
    tk.CONSTRAIN,
    tk.RETURN,
    tk.CALL,
    tk.ENDOFTEXT,
    tk.ASSISTANT,
    200020,
    17196,
    35644,
    12606,
    815,
    316,
    28,
    12295,
    3490,
    24912,
    2375,
    31446,
    244,
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), max_size=60), st.sampled_from(list(StopReason)))
def test_any_stream_decodes_without_error_or_leaked_markup(
    encoding: HarmonyEncoding, tokens: list[int], end: StopReason
) -> None:
    result = decode(encoding, tokens, end=end)
    visible = result.text("final") + result.text("commentary")
    assert "<|" not in visible
    assert result.finished.reason in StopReason
    for message in result.messages:
        assert message.author.role == Role.ASSISTANT
        assert message.recipient is None or is_tool_recipient(message.recipient)
    no_answer = [e for e in result.events if isinstance(e, NoAnswer)]
    answered = any(is_answer(m) and m.content[0].text.strip() for m in result.messages)
    assert not (no_answer and answered)
    assert len(no_answer) <= 1
