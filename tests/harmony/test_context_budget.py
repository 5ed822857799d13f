"""The context budget: small contexts still answer, and the prefill matches the next prompt exactly."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.errors import ContextOverflowError
from harmony_chat.generation.turn import PromptReady, TurnOptions, TurnStats, prefill_next_turn, run_turn
from harmony_chat.harmony.events import StopReason
from harmony_chat.harmony.session import ChatSession
from tests.helpers import ids

ANSWER = "<|channel|>final<|message|>" + "An answer of some words. " * 8 + "<|return|>"


class PrefillRecorder(ReplayBackend):
    """A replay backend that remembers every prompt and prefill it is given."""

    def __init__(self, turns: Sequence[Sequence[int]], context_size: int) -> None:
        super().__init__(turns=turns, context_size=context_size)
        self.prefills: list[list[int]] = []
        self.prompts: list[list[int]] = []

    def prefill(self, tokens: Sequence[int]) -> int:
        self.prefills.append(list(tokens))
        return super().prefill(tokens)

    def generate(self, prompt, sampling, stop_ids, should_stop):  # type: ignore[no-untyped-def]
        self.prompts.append(list(prompt))
        return super().generate(prompt, sampling, stop_ids, should_stop)


def _turn(session: ChatSession, backend: ReplayBackend, max_tokens: int) -> tuple[PromptReady, TurnStats]:
    events = list(run_turn(session, backend, TurnOptions(sampling=SamplingParams(max_tokens=max_tokens))))
    ready = next(e for e in events if isinstance(e, PromptReady))
    stats = events[-1]
    assert isinstance(stats, TurnStats)
    return ready, stats


def test_a_small_context_answers_with_the_room_left(encoding: HarmonyEncoding) -> None:
    """``--ctx 4096`` with ``max_tokens`` 4096 used to refuse every message."""
    backend = ReplayBackend(turns=[ids(encoding, ANSWER)], context_size=4096)
    backend.load()
    session = ChatSession(encoding, context_size=4096)
    session.add_user("What is 2 + 2?")
    ready, stats = _turn(session, backend, max_tokens=4096)
    prompt_tokens = len(ready.prompt.tokens)
    assert ready.answer_capped and ready.max_tokens == 4096 - prompt_tokens == ready.prompt.answer_room
    assert stats.reason is StopReason.RETURN and stats.max_tokens == ready.max_tokens
    assert session.history[-1].content[0].text.startswith("An answer")


def test_the_answer_cap_is_what_generation_runs_with(encoding: HarmonyEncoding) -> None:
    backend = ReplayBackend(turns=[ids(encoding, ANSWER)], context_size=512)
    backend.load()
    session = ChatSession(encoding, context_size=512)
    session.add_user("word " * 440)
    ready, stats = _turn(session, backend, max_tokens=4096)
    assert 0 < ready.max_tokens < 60 and ready.max_tokens + len(ready.prompt.tokens) == 512
    assert stats.reason is StopReason.LENGTH and stats.stats.generated_tokens == ready.max_tokens


def test_a_big_enough_context_keeps_the_full_answer_limit(encoding: HarmonyEncoding) -> None:
    backend = ReplayBackend(turns=[ids(encoding, ANSWER)], context_size=16384)
    backend.load()
    session = ChatSession(encoding, context_size=16384)
    session.add_user("Hi")
    ready, stats = _turn(session, backend, max_tokens=4096)
    assert not ready.answer_capped and ready.max_tokens == 4096 and stats.max_tokens == 4096


def test_only_a_prompt_that_does_not_fit_is_refused(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, context_size=300)
    session.add_user("word " * 200)
    assert session.render(max_new_tokens=4096).answer_room
    session.add_user("word " * 400)
    with pytest.raises(ContextOverflowError, match="shorten the message"):
        session.render(max_new_tokens=1)


def test_small_contexts_still_keep_history(encoding: HarmonyEncoding) -> None:
    """Half the context at most is reserved for the answer, so earlier turns stay in the prompt."""
    backend = ReplayBackend(turns=[ids(encoding, ANSWER)], context_size=4096)
    backend.load()
    session = ChatSession(encoding, context_size=4096)
    for question in ("First question?", "Second question?", "Third question?"):
        session.add_user(question)
        ready, _ = _turn(session, backend, max_tokens=4096)
    assert ready.prompt.evicted_turns == 0
    assert "First question?" in encoding.decode(ready.prompt.tokens)


def test_prefill_is_exactly_the_next_prompt_once_old_turns_are_left_out(encoding: HarmonyEncoding) -> None:
    """The prefill used to render without answer room, keeping turns the real prompt drops."""
    answer = ids(encoding, ANSWER)
    backend = PrefillRecorder([answer], context_size=800)
    backend.load()
    session = ChatSession(encoding, context_size=800)
    evictions = 0
    for n in range(16):
        session.add_user(f"Question {n}?")
        ready, _ = _turn(session, backend, max_tokens=200)
        if backend.prefills:
            prefilled = backend.prefills[-1]
            assert backend.prompts[-1][: len(prefilled)] == prefilled, f"turn {n}: the prefill was wasted"
        evictions = max(evictions, ready.prompt.evicted_turns)
        prefill_next_turn(session, backend)
    assert evictions > 0, "the test must reach the turns where old ones are left out"
