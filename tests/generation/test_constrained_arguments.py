"""Tool arguments under a JSON-schema grammar on the real llama.cpp backend (tiny random model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai_harmony import HarmonyEncoding, ToolDescription

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.generation.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import RawToken, ToolCall
from harmony_chat.harmony.session import ChatSession
from tests.helpers import ids

pytestmark = pytest.mark.llama
SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"location": {"type": "string", "maxLength": 12}, "unit": {"enum": ["c", "f"]}},
    "required": ["location", "unit"],
    "additionalProperties": False,
}
HEADER = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"


class ForceHeader:
    """Forces the call's header, then lets the (random) model write the arguments itself.

    With ``tempt``, the arguments are written by a model that badly wants to end the message
    (``<|end|>``, ``<|call|>``) at once: llama.cpp's grammar alone would let it, inside a string.
    """

    def __init__(self, header: list[int], prompt_length: int, tempt: bool = False) -> None:
        self.header = header
        self.prompt_length = prompt_length
        self.tempt = tempt

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        position = len(input_ids) - self.prompt_length
        if position >= len(self.header):
            if self.tempt:
                scores[tk.END] += 50.0
                scores[tk.CALL] += 50.0
            return scores
        forced = np.full_like(scores, -np.inf)
        forced[self.header[position]] = 0.0
        return forced


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> LlamaCppBackend:
    model = LlamaCppBackend(tiny_gguf, context_size=1024)
    model.load()
    return model


def _call(
    backend: LlamaCppBackend, encoding: HarmonyEncoding, schemas: dict[str, dict[str, object]], tempt: bool = False
) -> list[object]:
    session = ChatSession(encoding, functions=[ToolDescription.new("get_weather", "Weather.", SCHEMA)])
    session.add_user("Weather in Paris?")
    prompt = session.render().tokens
    backend.logits_processor = ForceHeader(ids(encoding, HEADER), len(prompt), tempt)
    options = TurnOptions(sampling=SamplingParams(temperature=1.0, seed=7, max_tokens=80), tool_schemas=schemas)
    try:
        return list(run_turn(session, backend, options))
    finally:
        backend.logits_processor = None


def test_arguments_follow_the_schema_under_the_grammar(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    events = _call(backend, encoding, {"functions.get_weather": SCHEMA})
    (call,) = [e for e in events if isinstance(e, ToolCall)]
    arguments = json.loads(call.arguments)
    assert set(arguments) == {"location", "unit"} and arguments["unit"] in ("c", "f")
    assert isinstance(arguments["location"], str) and len(arguments["location"]) <= 12
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.reason.value == "call"
    raw = [e for e in events if isinstance(e, RawToken)]
    assert stats.stats.generated_tokens == len(raw) > len(ids(encoding, HEADER))  # both calls are counted


def test_special_tokens_cannot_cut_the_json_short(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    events = _call(backend, encoding, {"functions.get_weather": SCHEMA}, tempt=True)
    (call,) = [e for e in events if isinstance(e, ToolCall)]
    arguments = json.loads(call.arguments)  # whole: the message could only end once the JSON was complete
    assert set(arguments) == {"location", "unit"} and call.runnable and not call.repaired


def test_without_the_grammar_the_random_model_writes_no_valid_arguments(
    backend: LlamaCppBackend, encoding: HarmonyEncoding
) -> None:
    events = _call(backend, encoding, {})
    calls = [e for e in events if isinstance(e, ToolCall)]
    parsed: object = None
    if calls:
        try:
            parsed = json.loads(calls[0].arguments)
        except ValueError:
            parsed = None
    assert not (isinstance(parsed, dict) and set(parsed) == {"location", "unit"})
