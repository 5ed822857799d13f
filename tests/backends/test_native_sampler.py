"""The sampler's native path on the real llama.cpp backend: content under a logit bias, JSON under a checked grammar.

No test processor is installed here, so content tokens are sampled by native chains alone (the
Python stage only sees header tokens, and tokens a grammar refused).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.grammar_check import CANDIDATE
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.backends.llama_sampler import GuardedSampler, SamplerCosts, _refused_specials, cut_candidates
from harmony_chat.generation.turn import TurnOptions, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import RawToken, Recovery
from harmony_chat.harmony.session import ChatSession
from tests.harmony.test_structure_guard import CONTENT_REPAIRS, STRUCTURAL_REPAIRS
from tests.helpers import ids

pytestmark = pytest.mark.llama
GROCERIES: dict[str, object] = {
    "type": "object",
    "properties": {
        "items": {"type": "array", "items": {"type": "string", "maxLength": 8}, "minItems": 2, "maxItems": 3}
    },
    "required": ["items"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> LlamaCppBackend:
    model = LlamaCppBackend(tiny_gguf, context_size=2048)
    model.load()
    return model


def _repairs(backend: LlamaCppBackend, encoding: HarmonyEncoding, guided: bool) -> set[str]:
    repairs: set[str] = set()
    for seed in range(6):
        session = ChatSession(encoding)
        session.add_user("Hello")
        sampling = SamplingParams(temperature=1.5, seed=seed, max_tokens=300, harmony_structure=guided)
        events = list(run_turn(session, backend, TurnOptions(sampling=sampling, stop_on_final=False)))
        repairs |= {event.kind for event in events if isinstance(event, Recovery)}
    return repairs


def test_the_random_model_writes_well_formed_harmony_under_the_native_chains(
    backend: LlamaCppBackend, encoding: HarmonyEncoding
) -> None:
    backend.sampler_costs = costs = SamplerCosts()
    try:
        repairs = _repairs(backend, encoding, guided=True)
    finally:
        backend.sampler_costs = None
    assert not repairs - CONTENT_REPAIRS
    assert costs.native_tokens > costs.python_tokens > 0  # content went native, headers through Python


def test_unguided_the_same_walks_need_structural_repairs(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    assert _repairs(backend, encoding, guided=False) & STRUCTURAL_REPAIRS


def _final_answer(
    backend: LlamaCppBackend, encoding: HarmonyEncoding, seed: int, temperature: float = 1.0
) -> tuple[list[int], SamplerCosts]:
    session = ChatSession(encoding)
    session.add_user("Groceries?")
    prompt = session.render().tokens + ids(encoding, "<|channel|>final<|message|>")
    sampling = SamplingParams(temperature=temperature, seed=seed, max_tokens=400, json_schema=GROCERIES)
    backend.sampler_costs = costs = SamplerCosts()
    try:
        return list(backend.generate(prompt, sampling, tk.GENERATION_STOPS, lambda: False)), costs
    finally:
        backend.sampler_costs = None


def test_a_final_answer_under_the_grammar_is_valid_json_that_ends_on_return(
    backend: LlamaCppBackend, encoding: HarmonyEncoding
) -> None:
    resampled = 0
    for seed in range(4):
        tokens, costs = _final_answer(backend, encoding, seed)
        assert tokens[-1] == tk.RETURN, encoding.decode(tokens)
        assert not [token for token in tokens[:-1] if tk.is_special(token)]  # no special token inside the JSON
        answer = json.loads(encoding.decode(tokens[:-1]))
        assert set(answer) == {"items"} and 2 <= len(answer["items"]) <= 3
        assert all(isinstance(item, str) for item in answer["items"])
        resampled += costs.resampled
    assert resampled > 0  # the random model picked tokens the grammar refused: those were sampled again


def test_the_same_seed_gives_the_same_answer(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    assert _final_answer(backend, encoding, 3)[0] == _final_answer(backend, encoding, 3)[0]


def test_greedy_answers_under_the_grammar_are_valid_too(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    tokens, _ = _final_answer(backend, encoding, 0, temperature=0.0)
    assert tokens[-1] == tk.RETURN and len(json.loads(encoding.decode(tokens[:-1]))["items"]) >= 2


def test_the_native_bias_refuses_every_special_token_but_the_allowed_stops() -> None:
    import llama_cpp

    kept = frozenset({tk.END, tk.RETURN})
    refused = {entry.token for entry in _refused_specials(llama_cpp, kept)}
    assert refused == set(range(tk.FIRST_SPECIAL, tk.VOCAB_SIZE)) - kept
    assert all(entry.bias == float("-inf") for entry in _refused_specials(llama_cpp, kept))


def _seeded_turns(
    backend: LlamaCppBackend, encoding: HarmonyEncoding, frequency: float = 0.0, presence: float = 0.0
) -> list[list[int]]:
    def turn(seed: int) -> list[int]:
        session = ChatSession(encoding)
        session.add_user("Hello")
        sampling = SamplingParams(
            temperature=1.0, seed=seed, max_tokens=120, frequency_penalty=frequency, presence_penalty=presence
        )
        events = run_turn(session, backend, TurnOptions(sampling=sampling, stop_on_final=False))
        return [event.token_id for event in events if isinstance(event, RawToken)]

    return [turn(seed) for seed in (1, 2)]


def test_a_seed_picks_the_same_tokens_as_one_chain_with_a_python_processor(
    backend: LlamaCppBackend, encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seed gives the answer llama-cpp-python's own chain gives.

    The native chains keep their random draws in step, and a header's candidates cut down to the
    words harmony allows pick what the masked full vocabulary picks.
    """
    native = _seeded_turns(backend, encoding)
    assert any(token == tk.MESSAGE for turn in native for token in turn)  # headers closed: both paths ran
    monkeypatch.setattr(GuardedSampler, "create", classmethod(lambda cls, *args: None))  # one chain, Python stage
    assert _seeded_turns(backend, encoding) == native


def test_penalties_count_the_tokens_every_chain_sampled(
    backend: LlamaCppBackend, encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Frequency and presence penalties see the header's tokens in the content and back: as one chain would."""
    native = _seeded_turns(backend, encoding, 0.8, 1.5)
    assert native != _seeded_turns(backend, encoding)  # the penalties change what is sampled
    monkeypatch.setattr(GuardedSampler, "create", classmethod(lambda cls, *args: None))
    assert _seeded_turns(backend, encoding, 0.8, 1.5) == native


def test_cut_candidates_keeps_the_named_records_in_order_at_the_front() -> None:
    buffer = np.zeros(8, dtype=CANDIDATE)
    buffer["id"] = np.arange(8)
    buffer["logit"] = np.arange(8) / 2
    rows = buffer.view(np.uint32).reshape(8, -1)
    assert cut_candidates(rows, np.array([1, 4, 7], dtype=np.intp)) == 3
    assert buffer["id"][:3].tolist() == [1, 4, 7]
    assert buffer["logit"][:3].tolist() == [0.5, 2.0, 3.5]
