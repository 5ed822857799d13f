"""A served turn's events go out in batches, and the answer's first words after the reasoning are never held back."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Collection, Generator, Sequence

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.generation.turn import TurnOptions
from harmony_chat.harmony.events import ContentDelta
from harmony_chat.harmony.session import ChatSession
from harmony_chat.server import generation
from harmony_chat.server.generation import TurnRun
from tests.helpers import StubBackend, ids

REASONING = "<|channel|>analysis<|message|>Let me think about the sum.<|end|>"
ANSWER_START = "<|start|>assistant<|channel|>final<|message|>Four"
ANSWER_END = " it is.<|return|>"


class Gated(StubBackend):
    """Writes the reasoning and the answer's first word, then waits for the test before the rest."""

    def __init__(self, encoding: HarmonyEncoding) -> None:
        super().__init__()
        self.before = ids(encoding, REASONING + ANSWER_START)
        self.after = ids(encoding, ANSWER_END)
        self.release = threading.Event()

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        yield from self.before
        while not self.release.wait(0.01):
            if should_stop():
                return
        yield from self.after


def test_the_answers_first_word_is_sent_at_once_after_the_reasoning(
    encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reasoning's text started the hold between batches; the answer is a new message, so it is not held."""
    monkeypatch.setattr(generation, "FLUSH_S", 30.0)  # a held batch would wait this long
    backend = Gated(encoding)
    session = ChatSession(encoding)
    session.add_user("What is 2 + 2?")
    run = TurnRun(session, backend, TurnOptions())

    async def first_answer_text() -> str:
        async for batch in run.batches():
            for event in batch:
                if isinstance(event, ContentDelta) and event.channel == "final":
                    return event.text
        return ""

    async def scenario() -> str:
        try:
            return await asyncio.wait_for(first_answer_text(), 10)
        finally:
            backend.release.set()
            run.cancel()
            await run.wait_ended()

    assert asyncio.run(scenario()) == "Four"
