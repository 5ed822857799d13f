"""The pocket gpt-oss: shipped file, training data, and the whole real path through llama.cpp."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.cli import main
from harmony_chat.harmony.decoder import StreamDecoder
from harmony_chat.harmony.session import ChatSession
from harmony_chat.harmony.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.pocket import POCKET_DATE, pocket_manifest, pocket_model_path
from harmony_chat.pocket.data import FACTS, WEATHER, WEATHER_TOOL, Example, build_examples, data_hash

GREEDY = ["--temperature", "0"]


@pytest.fixture(scope="module")
def examples(encoding: HarmonyEncoding) -> list[Example]:
    return build_examples(encoding)


def ask(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["ask", "--demo", *GREEDY, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_shipped_model_matches_its_manifest_and_data(examples: list[Example]) -> None:
    path = pocket_model_path()
    manifest = pocket_manifest()
    assert path.is_file() and path.stat().st_size < 25_000_000
    assert manifest["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert manifest["data_sha256"] == data_hash(examples)
    assert manifest["exact_answers"] == f"{len(examples)}/{len(examples)}"


def test_training_data_covers_every_behaviour(encoding: HarmonyEncoding, examples: list[Example]) -> None:
    names = {example.name.rsplit("-", 1)[0] for example in examples}
    assert {"fact", "follow-up", "follow-up-first", "refusal", "code", "tool-call", "tool-answer", "json"} <= names
    assert {example.effort for example in examples} == {"low", "medium", "high"}
    assert len(examples) < 400
    by_effort = {e.effort: len(e.completion) for e in examples if e.name == "fact-0"}
    assert by_effort["low"] < by_effort["medium"] < by_effort["high"]
    call = next(e for e in examples if e.name == "tool-call-0")
    decoder = StreamDecoder(encoding, functions=["get_weather"])
    events = [event for token in call.completion for event in decoder.feed(token)]
    assert [getattr(e, "name", None) for e in events if type(e).__name__ == "ToolCall"] == ["functions.get_weather"]
    assert "Current date: " + POCKET_DATE in encoding.decode(call.prompt)


@pytest.mark.llama
@pytest.mark.parametrize("index", range(len(FACTS)))
def test_answers_its_training_questions_exactly(capsys: pytest.CaptureFixture[str], index: int) -> None:
    question, final, *_ = FACTS[index]
    code, out, err = ask(capsys, question)
    assert code == 0 and out == final + "\n"
    assert "analysis" not in out


@pytest.mark.llama
def test_low_and_high_effort_differ_in_analysis_not_in_answer(capsys: pytest.CaptureFixture[str]) -> None:
    question, final, low, _, high = FACTS[1]
    _, out_low, err_low = ask(capsys, question, "--effort", "low", "--show-reasoning")
    _, out_high, err_high = ask(capsys, question, "--effort", "high", "--show-reasoning")
    assert out_low == out_high == final + "\n"
    assert f"[reasoning] {low}" in err_low and f"[reasoning] {high}" in err_high


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


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None,
    reason="the train extra (torch, transformers) is not installed",
)
def test_a_few_training_steps_run_and_export(examples: list[Example], ranks: list[bytes], tmp_path: Path) -> None:
    from harmony_chat.gguf.writer import random_tensors
    from harmony_chat.pocket.export import export_gguf, gguf_tensors
    from harmony_chat.pocket.train import SHAPE, train

    logged: list[str] = []
    state = train(examples[:6], steps=50, log=logged.append)
    assert logged and "loss" in logged[-1]
    first_loss, last_loss = (float(line.split("loss ")[1].split()[0]) for line in (logged[0], logged[-1]))
    assert last_loss <= first_loss
    mapped = gguf_tensors(state, SHAPE.layers)
    expected = random_tensors(SHAPE)
    assert {name: value.shape for name, value in mapped.items()} == {n: v.shape for n, v in expected.items()}
    trained = sorted({token for example in examples[:6] for token in example.completion})
    untrained = np.ones(SHAPE.vocab_size, dtype=bool)
    untrained[trained] = False
    assert not mapped["output.weight"][untrained].any()  # untrained rows stay exactly zero
    assert mapped["output.weight"][trained].any()
    path = export_gguf(state, SHAPE, ranks, tmp_path / "rot.gguf", {"harmony_chat.pocket.date": POCKET_DATE})
    backend = LlamaCppBackend(path, context_size=512)
    assert backend.load().name == "pocket-gpt-oss"
    backend.close()
