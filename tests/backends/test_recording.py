"""``--record``'s wrapper: it offers what the backend it wraps offers, and records what that one generated."""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Sequence
from pathlib import Path

from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.replay import RecordingBackend, ReplayBackend, read_recording
from tests.helpers import ids


class PenalisingReplay(ReplayBackend):
    """A replay that takes penalties (as llama.cpp and the engines do) and keeps the sampling it was given."""

    supports_penalties = True

    def __init__(self, turns: Sequence[Sequence[int]]) -> None:
        super().__init__(turns=turns)
        self.given: list[SamplingParams] = []

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        self.given.append(sampling)
        yield from super().generate(prompt, sampling, stop_ids, should_stop)


def test_a_recording_takes_the_penalties_its_backend_takes_and_passes_them_on(
    tmp_path: Path, encoding: HarmonyEncoding
) -> None:
    answer = ids(encoding, "<|channel|>final<|message|>Hi.<|return|>")
    inner = PenalisingReplay([answer])
    recording = RecordingBackend(inner, tmp_path / "turns.txt")
    assert (
        recording.supports_penalties
        and not RecordingBackend(ReplayBackend(turns=[[1]]), tmp_path / "x").supports_penalties
    )
    sampling = SamplingParams(frequency_penalty=0.5, presence_penalty=0.25)
    assert list(recording.generate([1, 2], sampling, set(), lambda: False)) == answer
    assert inner.given == [sampling]
    assert read_recording(tmp_path / "turns.txt") == [answer]
