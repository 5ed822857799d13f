"""The pocket gpt-oss's training set and shipped file: manifest, data hash, generators, held-out prompts."""

from __future__ import annotations

import hashlib
from dataclasses import asdict

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.demo.pocket import POCKET_DATE, pocket_manifest, pocket_model_path
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.decoder import StreamDecoder
from training.pocket.data import FACTS, QUOTED_FACTS, Example, build_examples, data_hash
from training.pocket.heldout import KINDS, held_out_prompts, is_held_out, normalized
from training.pocket.texts import FALLBACKS
from training.pocket.train import Recipe
from training.pocket.unseen import UNSEEN
from training.pocket.vocab import training_vocab


@pytest.fixture(scope="module")
def examples(encoding: HarmonyEncoding) -> list[Example]:
    """The whole training set (about a minute to render in two processes)."""
    return build_examples(encoding, workers=2)


@pytest.mark.slow
def test_shipped_model_matches_its_manifest_and_data(examples: list[Example]) -> None:
    path = pocket_model_path()
    manifest = pocket_manifest()
    assert path.is_file() and path.stat().st_size < 25_000_000
    assert manifest["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert manifest["data_sha256"] == data_hash(examples)
    assert manifest["examples"] == len(examples)
    recipe, measured = manifest["recipe"], manifest["measured"]
    assert isinstance(recipe, dict) and isinstance(measured, dict)
    assert isinstance(manifest["train_seconds"], int) and manifest["train_seconds"] < 20 * 60
    assert recipe == asdict(Recipe())  # the code's recipe is the one the shipped model was trained with
    guided = {"temperature 0", "temperature 1"}  # evaluate.py --record, greedy and sampled, as the app samples
    assert guided <= set(measured) <= guided | {f"{name}, unguided" for name in guided}  # and the model alone


def test_training_data_covers_every_behaviour(encoding: HarmonyEncoding, sample: list[Example]) -> None:
    names = {example.name for example in sample}
    kinds = {name.rsplit("-", 1)[0] if name.rsplit("-", 1)[-1].isdigit() else name for name in names}
    assert {
        "fact",
        "follow-up",
        "refusal",
        "code",
        "fallback",
        "greeting",
        "arithmetic-call",
        "arithmetic-answer",
        "python-failed-call",
        "weather-call",
        "weather-answer",
        "weather-failed-call",
        "json",
        "unseen",
    } <= kinds
    assert any(name.startswith("summary-") for name in names)
    assert {example.effort for example in sample} == {"low", "medium", "high"}
    assert set(range(1, 7)) <= {example.turn for example in sample if not example.bare}
    call = next(e for e in sample if e.name == "weather-call" and not e.bare)
    decoder = StreamDecoder(encoding, functions=["get_weather"])
    events = [event for token in call.completion for event in decoder.feed(token)]
    assert [getattr(e, "name", None) for e in events if type(e).__name__ == "ToolCall"] == ["functions.get_weather"]
    assert "Current date: " + POCKET_DATE in encoding.decode(call.prompt)
    python = next(e for e in sample if e.name == "arithmetic-call" and not e.bare)
    assert "to=python code<|message|>print(" in encoding.decode(python.completion)


def test_two_processes_render_the_same_examples(encoding: HarmonyEncoding) -> None:
    small = {"conversations": 150, "copies": 30, "bare_copies": 30, "unseen": 10, "greetings": 20, "seed": 5}
    small |= {"known": 10, "unknown": 10, "pastes": 10, "quoted": 10}
    alone = build_examples(encoding, **small)
    assert build_examples(encoding, **small, workers=2) == alone


def test_greeting_chats_end_in_a_greeting_at_first_and_later_turns(
    encoding: HarmonyEncoding, sample: list[Example]
) -> None:
    """The greetings block: 80 chats that end in a greeting (half start with it), beside the other chats' greetings."""
    greetings = [example for example in sample if example.name == "greeting"]
    assert len(greetings) >= 80
    assert {example.turn for example in greetings} >= {1, 2}
    for example in greetings:
        answer = encoding.decode(example.completion)
        assert "Hi! I'm the pocket gpt-oss" in answer and "to=" not in answer


def test_paste_chats_end_in_long_pasted_text_and_the_fallback(encoding: HarmonyEncoding) -> None:
    """The pastes block: chats that end in a long pasted text (half after earlier turns), answered with the fallback."""
    pasted = build_examples(
        encoding, conversations=0, copies=0, bare_copies=0, unseen=0, pastes=24, quoted=0, unanalysed=0, seed=3
    )
    assert len(pasted) == 24 and {example.name for example in pasted} == {"fallback"}
    assert {example.turn for example in pasted} >= {1, 2}
    for example in pasted:
        text = last_user_text(encoding, example.prompt)
        assert len(text) >= 40, text  # prose, code, a trace or data (the shortest are a one-line query)
        assert not is_held_out(text)
        answer = encoding.decode(example.completion)
        assert "I only know a few questions" in answer and "to=" not in answer


def test_quoted_chats_end_in_a_question_the_fallback_names(encoding: HarmonyEncoding) -> None:
    """The quoted block: the fallback's example questions, answered as trained, half first and half without tools."""
    quoted = build_examples(
        encoding, conversations=0, copies=0, bare_copies=0, unseen=0, quoted=24, unanalysed=0, seed=3
    )
    assert len(quoted) == 24
    questions = {FACTS[index][0]: FACTS[index][1] for index in QUOTED_FACTS}
    assert set(questions) == {"What is the capital of France?", "Who wrote Romeo and Juliet?"}
    assert all(f'"{question}"' in FALLBACKS[0] for question in questions)  # the fallback without tools
    firsts = without_tools = 0
    for example in quoted:
        asked = last_user_text(encoding, example.prompt).lower()
        (question,) = [question for question in questions if question.split()[-1].rstrip("?").lower() in asked]
        answer = encoding.decode(example.completion)
        assert answer.endswith(f"<|channel|>final<|message|>{questions[question]}<|return|>"), answer
        firsts += example.turn == 1
        without_tools += "# Tools" not in encoding.decode(example.prompt)
    assert firsts == 12 and without_tools >= 12


def test_unseen_places_reach_the_model_as_the_stand_in(encoding: HarmonyEncoding, sample: list[Example]) -> None:
    """Weather questions about places no other example names: their names are outside the vocabulary."""
    vocab = training_vocab(encoding, sample)
    unseen = [example for example in sample if example.name == UNSEEN]
    assert len(unseen) == 60
    held_out = {normalized(city) for city in held_out_prompts()["weather_cities"]}
    for example in unseen:
        asked = last_user_text(encoding, example.prompt)
        assert " in " in asked  # every weather question names its place after "in"
        assert (vocab.compact(encoding.encode(asked, allowed_special=set())) == vocab.unknown).any(), asked
        assert not any(f" {city} " in f" {normalized(asked)} " for city in held_out)
        answer = encoding.decode(example.completion)
        assert "I only know a few questions" in answer and "to=" not in answer


def last_user_text(encoding: HarmonyEncoding, prompt: list[int]) -> str:
    """The text of the prompt's last user message."""
    starts = [i for i in range(len(prompt) - 1) if prompt[i] == tk.START and prompt[i + 1] == tk.USER]
    body = prompt[starts[-1] + 3 :]
    text: str = encoding.decode(body[: body.index(tk.END)])
    return text


@pytest.mark.slow
def test_no_held_out_prompt_or_city_is_trained_on(encoding: HarmonyEncoding, examples: list[Example]) -> None:
    asked = {normalized(last_user_text(encoding, example.prompt)) for example in examples}
    held_out = held_out_prompts()
    kinds = [kind for kind in KINDS if kind != "weather_cities"]  # every list of prompts (cities are names)
    leaked = {normalized(prompt) for kind in kinds for prompt in held_out[kind] if normalized(prompt) in asked}
    assert leaked == set()
    weather = {
        normalized(last_user_text(encoding, example.prompt)) for example in examples if example.name == "weather-call"
    }
    cities = {normalized(city) for city in held_out["weather_cities"]}
    assert len(weather) > 1000
    assert not [text for text in weather if any(f" {city} " in f" {text} " for city in cities)]
