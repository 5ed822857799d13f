"""The structure guard in the real llama.cpp sampler: a model prone to special tokens still writes harmony."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.demo.pocket import pocket_model_path
from harmony_chat.generation.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import MessageFinished, RawToken, Recovery, StopReason
from harmony_chat.harmony.session import ChatSession
from tests.harmony.test_structure_guard import CONTENT_REPAIRS, STRUCTURAL_REPAIRS

pytestmark = pytest.mark.llama
BOOSTED = np.array(sorted({*tk.STRUCTURAL, tk.ENDOFTEXT}), dtype=np.intp)


class BoostSpecials:
    """Makes the harmony special tokens likely everywhere, as a badly trained model would (on the pocket model)."""

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        scores[BOOSTED] = scores.max() + 2.0
        return scores


@pytest.fixture(scope="module")
def backend() -> LlamaCppBackend:
    model = LlamaCppBackend(pocket_model_path(), context_size=1024)
    model.load()
    model.logits_processor = BoostSpecials()
    return model


def _turns(backend: LlamaCppBackend, encoding: HarmonyEncoding, guided: bool) -> list[Sequence[object]]:
    """Turns that ended on a stop token (a turn cut by the token limit may end inside a header)."""
    turns: list[Sequence[object]] = []
    for seed in range(16):
        session = ChatSession(encoding)
        session.add_user("Hello")
        sampling = SamplingParams(temperature=1.0, seed=seed, max_tokens=150, harmony_structure=guided)
        events = list(run_turn(session, backend, TurnOptions(sampling=sampling, stop_on_final=False)))
        stats = events[-1]
        assert isinstance(stats, TurnStats)
        if stats.reason is not StopReason.LENGTH:
            turns.append(events)
    assert len(turns) >= 8
    return turns


def test_guided_sampling_writes_only_well_formed_messages(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    turns = _turns(backend, encoding, guided=True)
    repairs = {e.kind for events in turns for e in events if isinstance(e, Recovery)}
    assert not repairs - CONTENT_REPAIRS  # no misplaced special token, and no header word to repair
    specials = sum(e.special for events in turns for e in events if isinstance(e, RawToken))
    messages = sum(isinstance(e, MessageFinished) for events in turns for e in events)
    assert specials > 40 and messages > 12  # the boost made it write structure, and the guard kept it in place


def test_the_same_model_unguided_needs_repairs(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    turns = _turns(backend, encoding, guided=False)
    repairs = {e.kind for events in turns for e in events if isinstance(e, Recovery)}
    assert len(repairs & STRUCTURAL_REPAIRS) >= 3
