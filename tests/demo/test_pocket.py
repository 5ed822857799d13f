"""The pocket gpt-oss as users meet it: ``ask --demo`` answers, its tool loop and KV reuse, through llama.cpp."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.cli import main
from harmony_chat.demo.pocket import POCKET_DATE, pocket_model_path
from harmony_chat.generation.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.harmony.session import ChatSession
from training.pocket.data import FACTS, WEATHER, WEATHER_TOOL

GREEDY = ["--temperature", "0"]


def ask(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["ask", "--demo", *GREEDY, *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.llama
@pytest.mark.parametrize("index", range(len(FACTS)))
def test_answers_its_training_questions_exactly(capsys: pytest.CaptureFixture[str], index: int) -> None:
    question, final, *_ = FACTS[index]
    code, out, err = ask(capsys, question)
    assert code == 0 and out == final + "\n"
    assert "analysis" not in out


@pytest.mark.llama
def test_low_and_high_effort_differ_in_analysis_not_in_answer(capsys: pytest.CaptureFixture[str]) -> None:
    question, final, low, medium, high = FACTS[1]
    _, out_low, err_low = ask(capsys, question, "--effort", "low", "--show-reasoning")
    _, out_high, err_high = ask(capsys, question, "--effort", "high", "--show-reasoning")
    assert out_low == out_high == final + "\n"
    assert f"[reasoning] {low}\n" in err_low
    assert any(f"[reasoning] {text}\n" in err_high for text in (medium, high)) and low != medium != high


@pytest.mark.llama
def test_tool_call_then_answer_from_the_result(
    capsys: pytest.CaptureFixture[str], encoding: HarmonyEncoding, tmp_path: Path
) -> None:
    city, result, final = WEATHER[0]
    start = ChatSession(encoding, functions=[WEATHER_TOOL], start_date=POCKET_DATE)
    start.add_user(f"What's the weather in {city}?")
    conversation = tmp_path / "weather.json"
    start.save(conversation)
    code, out, _ = ask(capsys, "--conversation", str(conversation), "--json", "--save-conversation", str(conversation))
    events = [json.loads(line) for line in out.splitlines()]
    calls = [event for event in events if event["type"] == "tool_call"]
    assert code == 0 and len(calls) == 1 and calls[0]["name"] == "functions.get_weather"
    assert json.loads(calls[0]["arguments"]) == {"location": city}
    assert events[-1]["stop_reason"] == "call"
    assert any(e["type"] == "delta" and e["channel"] == "commentary" and not e["recipient"] for e in events)
    data = json.loads(conversation.read_text())
    data["messages"].append(
        {
            "role": "tool",
            "name": "functions.get_weather",
            "recipient": "assistant",
            "channel": "commentary",
            "content": [{"type": "text", "text": result}],
        }
    )
    conversation.write_text(json.dumps(data))
    code, out, _ = ask(capsys, "--conversation", str(conversation))
    assert code == 0 and out == final + "\n"


@pytest.mark.llama
def test_two_turn_chat_reuses_the_kv_cache(encoding: HarmonyEncoding) -> None:
    backend = LlamaCppBackend(pocket_model_path(), context_size=2048)
    backend.load()
    session = ChatSession(encoding, start_date=POCKET_DATE)
    options = TurnOptions(sampling=SamplingParams(temperature=0.0, max_tokens=200))
    try:
        session.add_user("What is 2 + 2?")
        first = [e for e in run_turn(session, backend, options) if isinstance(e, TurnStats)][0]
        session.add_user("And what is that times 3?")
        events = list(run_turn(session, backend, options))
    finally:
        backend.close()
    second = events[-1]
    assert isinstance(second, TurnStats) and first.stats.prompt_tokens_reused == 0
    assert session.history[-1].content[0].text == "4 × 3 = 12."
    assert second.stats.prompt_tokens_reused >= first.stats.prompt_tokens
    assert second.stats.prompt_tokens_evaluated == second.stats.prompt_tokens - second.stats.prompt_tokens_reused
    assert second.stats.prompt_tokens_evaluated < 40
