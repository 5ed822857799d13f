"""The repair notices the user reads (``[recovered] kind: detail``): plain words that name what was wrong and where."""

from __future__ import annotations

from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.cli import main
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import Recovery, StopReason
from tests.helpers import decode, ids

REASONING = "<|channel|>analysis<|message|>x<|end|>"
ANSWER = "<|start|>assistant<|channel|>final<|message|>ok<|return|>"


@pytest.mark.parametrize(
    ("text", "notices"),
    [
        (
            "<|channel|>final<|message|>A<|constrain|>B<|return|>",
            [("stray-special", "dropped a stray constrain token inside content")],
        ),
        (
            f"{REASONING}<|constrain|>{ANSWER}",
            [("stray-special", "dropped a stray constrain token between messages")],
        ),
        (
            f"{REASONING}<|channel|>final<|message|>ok<|return|>",
            [("missing-start", "a message began without its start token")],
        ),
        (
            f"{REASONING}assistant<|channel|>final<|message|>ok<|return|>",
            [("missing-start", "a message began without its start token")],
        ),
        (
            f"{REASONING}Oops<|end|>{ANSWER}",
            [
                ("missing-start", "text followed a message without a header"),
                ("missing-message", "a header ended without its message token"),
                ("headerless", "text without a header is kept hidden, like reasoning"),
            ],
        ),
        (f"{REASONING}<|return|>", [("stray-stop", "a stray return token after a finished message")]),
        (f"{REASONING}<|call|>", [("stray-stop", "a stray call token after a finished message")]),
        (
            "I must refuse",
            [
                ("missing-message", "the stream ended inside text without a header"),
                ("headerless", "text without a header is kept hidden, like reasoning"),
            ],
        ),
        ("<|channel|>final", [("partial-header", "discarded a header the stream cut off")]),
        ("<|channel|>final<|message|>partial<|endoftext|>", [("endoftext", "the end-of-text token ended the message")]),
        (
            "<|channel|>analysis<|message|>thinking" + ANSWER,
            [("implicit-end", "a new message began without an end token")],
        ),
        (
            "<|channel|>analysis<|message|>thinking<|channel|>final<|message|>ok<|return|>",
            [("implicit-end", "the channel switched without an end token")],
        ),
        (
            "<|channel|>final<|start|>assistant<|channel|>final<|message|>hi<|return|>",
            [("duplicate-start", "a header restarted with a start token")],
        ),
        (
            "I must refuse" + ANSWER,
            [
                ("missing-message", "text without a header was cut by a new message"),
                ("headerless", "text without a header is kept hidden, like reasoning"),
            ],
        ),
        (
            "<|channel|>commentary to=assistant<|message|>print(1)<|call|>",
            [("call-without-tool", "a message that addresses no tool ended with a call token")],
        ),
        (
            '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1',
            [("truncated-tool-call", "a tool call was cut off; it will not run")],
        ),
        (
            f"{REASONING}<|start|>assistant<|channel|>fi<|endoftext|>",
            [("partial-header", "discarded a header cut by the end-of-text token")],
        ),
        (
            "<|channel|>commentary to=assistant<|channel|>final<|message|>ok<|return|>",
            [("restarted-header", "a header was cut by another channel token")],
        ),
        # What the header reader repairs (header.py), told through the decoder.
        (
            "assistantassistant<|channel|>final<|message|>ok<|return|>",
            [("duplicate-role", "a header named its role twice")],
        ),
        ("final<|message|>ok<|return|>", [("bare-channel", "a channel name came without its channel token")]),
        ("to=final<|message|>ok<|return|>", [("channel-as-recipient", "a channel name stood where a recipient goes")]),
        (
            f"<|channel|>commentary to=@weather<|message|>hi<|end|>{ANSWER}",
            [("not-a-tool", "ignored a recipient that is not a tool name")],
        ),
        (
            "<|channel|>final hello world<|message|>ok<|return|>",
            [("stray-header-words", "dropped stray words from a header")],
        ),
        (
            f"<|channel|><|message|>x<|end|>{ANSWER}",
            [("bad-header", "a header named no known channel; its text is kept hidden")],
        ),
        (
            f"<|channel|>thoughts hmm<|end|>{ANSWER}",
            [
                ("missing-message", "a header ended without its message token"),
                ("unknown-channel", "a header named no known channel; its text is kept hidden"),
            ],
        ),
    ],
)
def test_each_repair_is_told_in_plain_words(
    encoding: HarmonyEncoding, text: str, notices: list[tuple[str, str]]
) -> None:
    result = decode(encoding, ids(encoding, text), end=StopReason.LENGTH)
    assert [(e.kind, e.detail) for e in result.events if isinstance(e, Recovery)] == notices


def test_an_id_outside_the_vocabulary_is_dropped_and_told(encoding: HarmonyEncoding) -> None:
    tokens = ids(encoding, "<|channel|>final<|message|>a") + [200020] + ids(encoding, "b<|return|>")
    result = decode(encoding, tokens)
    assert [(e.kind, e.detail) for e in result.events if isinstance(e, Recovery)] == [
        ("unknown-token", "dropped a token that is not in the vocabulary")
    ]
    assert result.text("final") == "ab"


@pytest.mark.parametrize(
    ("cut", "by"),
    [
        ("<|channel|>final<|message|>Done.", "<|start|>assistant"),
        ("<|channel|>final<|message|>Done.", ""),
        ("<|channel|>final Done.", "<|start|>assistant"),  # a header without its message token, cut by a start
    ],
)
def test_a_final_answer_cut_by_the_next_message_ends_the_turn_as_its_end_token_would(
    encoding: HarmonyEncoding, cut: str, by: str
) -> None:
    result = decode(encoding, ids(encoding, f"{cut}{by}<|channel|>analysis<|message|>more reasoning<|return|>"))
    assert result.text("final") == "Done." and result.text("analysis") == ""
    assert result.finished.reason is StopReason.FINAL and result.finished.truncated is False
    assert [m.end_token for m in result.finished_messages] == [tk.END]


def test_a_stray_stop_after_reasoning_ends_the_turn_as_a_return_not_a_call(encoding: HarmonyEncoding) -> None:
    for stop in ("<|return|>", "<|call|>"):
        result = decode(encoding, ids(encoding, f"{REASONING}{stop}"))
        assert result.finished.reason is StopReason.RETURN and result.tool_calls == []


def test_ask_prints_the_notices_on_stderr_and_the_repaired_answer_on_stdout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    replay = tmp_path / "turn.txt"
    replay.write_text(
        f"{REASONING}<|constrain|><|start|>assistant<|channel|>final<|message|>A<|constrain|>B<|return|>\n"
    )
    assert main(["ask", "--replay", str(replay), "q"]) == 0
    out, err = capsys.readouterr()
    assert out == "AB\n"
    assert err.splitlines() == [
        "[recovered] stray-special: dropped a stray constrain token between messages",
        "[recovered] stray-special: dropped a stray constrain token inside content",
    ]


def test_a_stream_cut_right_after_a_start_token_needs_no_repair(encoding: HarmonyEncoding) -> None:
    for text in ("", "<|channel|>final<|message|>Hi<|end|><|start|>"):
        result = decode(encoding, ids(encoding, text), end=StopReason.LENGTH, stop_on_final=False)
        assert result.recoveries == [] and result.finished.truncated is False
