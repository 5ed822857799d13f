"""``ask --json``: the ``content_type`` a script reads on messages and tool calls, from replayed model output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harmony_chat.cli import main


def _events(capsys: pytest.CaptureFixture[str], tmp_path: Path, turn: str) -> list[dict[str, Any]]:
    replay = tmp_path / "turn.txt"
    replay.write_text(turn + "\n", encoding="utf-8")
    assert main(["ask", "--replay", str(replay), "q", "--json"]) == 0
    out, _ = capsys.readouterr()
    return [json.loads(line) for line in out.splitlines()]


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == kind]


@pytest.mark.parametrize(
    ("header", "content_type"),
    [
        ("<|channel|>commentary to=functions.get_weather <|constrain|>json", "json"),
        ("<|channel|>commentary to=functions.get_weather<|constrain|>json", "json"),
        ("<|channel|>commentary to=functions.get_weather json", "json"),
        ("<|channel|>commentary to=functions.get_weather", None),
    ],
)
def test_a_tool_call_names_its_content_type_without_markup(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, header: str, content_type: str | None
) -> None:
    events = _events(capsys, tmp_path, f'{header}<|message|>{{"city": "Tokyo"}}<|call|>')
    (started,) = _of(events, "message_started")
    (call,) = _of(events, "tool_call")
    assert (started["channel"], started["recipient"], started["content_type"]) == (
        "commentary",
        "functions.get_weather",
        content_type,
    )
    assert (call["name"], call["arguments"], call["content_type"], call["error"]) == (
        "functions.get_weather",
        '{"city": "Tokyo"}',
        content_type,
        None,
    )


def test_a_final_answer_has_no_content_type_and_a_structured_one_says_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plain = _events(
        capsys,
        tmp_path,
        "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Four.<|return|>",
    )
    assert [(e["channel"], e["content_type"]) for e in _of(plain, "message_started")] == [
        ("analysis", None),
        ("final", None),
    ]
    structured = _events(capsys, tmp_path, '<|channel|>final <|constrain|>json<|message|>{"answer": 4}<|return|>')
    (started,) = _of(structured, "message_started")
    assert (started["channel"], started["recipient"], started["content_type"]) == ("final", None, "json")
    assert "".join(e["text"] for e in _of(structured, "delta")) == '{"answer": 4}'


def test_python_code_is_named_as_code(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    events = _events(capsys, tmp_path, "<|channel|>analysis to=python code<|message|>print(1 + 1)<|call|>")
    (call,) = _of(events, "tool_call")
    assert (call["name"], call["content_type"], call["arguments"]) == ("python", "code", "print(1 + 1)")
