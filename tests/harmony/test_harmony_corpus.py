"""The adversarial corpus (tests/harmony_corpus.py) replayed end to end.

Each recorded turn goes through the replay backend and the whole engine (what the user sees, what
the next prompt keeps, what the history stores and exports), then through ``harmony-chat ask
--replay`` in its plain, ``--show-reasoning`` and ``--json`` modes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.cli import main
from harmony_chat.generation.turn import TurnOptions, run_turn
from harmony_chat.harmony.messages import message_text
from harmony_chat.harmony.session import ChatSession
from harmony_chat.harmony.visibility import Display, display_of
from harmony_chat.history.export import to_json, to_markdown
from harmony_chat.history.store import HistoryStore
from tests.harmony_corpus import CASES, Case, check_turn

pytestmark = pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_engine_shows_stores_and_resends_only_what_it_should(
    case: Case, encoding: HarmonyEncoding, tmp_path: Path
) -> None:
    session = ChatSession(encoding)
    session.add_user("q")
    backend = ReplayBackend(case.path)
    backend.load()
    events = list(run_turn(session, backend, TurnOptions()))
    check_turn(case, events)
    assert not [m.recipient for m in session.history if "<|" in (m.recipient or "")]
    if case.calls and case.calls[-1][2]:
        assert session.pending_tool_call() is not None
    session.add_user("next")
    prompt = str(encoding.decode(session.render().tokens))
    store = HistoryStore(tmp_path / "history.db")
    conversation = store.create_conversation({})
    for message in session.history:
        store.add_message(conversation, message)
    stored = store.load(conversation)
    kept = " ".join(message_text(m) for m in stored.messages)
    exported = to_markdown(stored) + to_json(stored, encoding)
    for text in case.hidden:
        assert text not in prompt, "the next prompt still carries hidden text"
        assert text not in kept, "the history stored hidden text with store_analysis off"
        assert text not in exported, "the default export holds hidden text"
    if case.answer:
        assert case.answer in kept and case.answer.splitlines()[0] in to_markdown(stored)


def test_ask_prints_the_answer_alone(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--replay", str(case.path), "q"]) == 0
    out, err = capsys.readouterr()
    assert out == (case.answer + "\n" if case.answer else "")
    assert "<|" not in out + err
    for text in case.hidden:
        assert text not in out + err
    assert err.count("[no answer] the model gave no answer") == int(case.no_answer)
    if case.preamble:
        assert f"[preamble] {case.preamble}" in err
    assert main(["ask", "--replay", str(case.path), "q", "--show-reasoning"]) == 0
    shown_out, shown_err = capsys.readouterr()
    assert shown_out == out
    for text in case.hidden:
        assert text in shown_err, "--show-reasoning must show what is hidden"


def test_ask_json_hides_hidden_text_in_every_event(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--replay", str(case.path), "q", "--json"]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    answer = "".join(
        line["text"]
        for line in lines
        if line["type"] == "delta" and display_of(line["channel"], line["recipient"]) is Display.ANSWER
    )
    assert answer == (case.answer or "")
    tokens = "".join(line.get("text", "") for line in lines if line["type"] == "token")
    strings = [s for line in lines for s in _strings(line)]
    assert not [s for s in strings if "<|" in s]
    for text in case.hidden:
        assert text not in tokens, "token events leak hidden text"
        assert not [s for s in strings if text in s]
        assert text not in err
    assert len([line for line in lines if line["type"] == "no_answer"]) == int(case.no_answer)
    assert lines[-1]["stop_reason"] == case.reason.value
    calls = [line for line in lines if line["type"] == "tool_call"]
    assert [(c["name"], c["error"] is None) for c in calls] == [(name, ok) for name, _args, ok in case.calls]
    assert main(["ask", "--replay", str(case.path), "q", "--json", "--show-reasoning"]) == 0
    debug = [json.loads(line) for line in capsys.readouterr()[0].splitlines()]
    debug_tokens = "".join(line.get("text", "") for line in debug if line["type"] == "token")
    for text in case.hidden:
        assert text in debug_tokens
