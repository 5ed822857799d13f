"""The adversarial corpus through the real llama.cpp path: each recorded turn is forced token by token.

Generation stops where llama.cpp's sampler stops it (at ``<|return|>`` or ``<|call|>``), so these
runs also check that nothing after a stop token reaches the decoder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.backends.replay import read_recording
from harmony_chat.generation.turn import TurnOptions, run_turn
from harmony_chat.harmony.session import ChatSession
from tests.harmony_corpus import CASES, Case, check_turn
from tests.helpers import ForceTokens

pytestmark = pytest.mark.llama


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> LlamaCppBackend:
    model = LlamaCppBackend(tiny_gguf, context_size=1024)
    model.load()
    return model


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_forced_corpus_turn(case: Case, backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    (sequence,) = read_recording(case.path)
    backend.logits_processor = ForceTokens(sequence)
    session = ChatSession(encoding)
    session.add_user("q")
    options = TurnOptions(
        sampling=SamplingParams(temperature=0.0, max_tokens=len(sequence) + 8, harmony_structure=False)
    )  # recorded outputs, malformed ones too: the decoder must repair them unguided
    events = list(run_turn(session, backend, options))
    check_turn(case, events)
    session.add_user("next")
    prompt = str(encoding.decode(session.render().tokens))
    for text in case.hidden:
        assert text not in prompt
