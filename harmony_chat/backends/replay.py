"""Replay and record generated token streams, for tests, demos, screenshots and bug reports.

A recording is either a ``.txt`` file of harmony text with special tokens written literally
(``<|channel|>final<|message|>Hi<|return|>``; turns separated by a line holding only
``=====``), or a ``.json`` list of token ids (a list of such lists for several turns).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Generator, Sequence
from pathlib import Path

from harmony_chat.backends.base import GenerationStats, ModelBackend, ModelInfo, SamplingParams
from harmony_chat.errors import ReplayError
from harmony_chat.harmony import tokens as tk
from harmony_chat.private_files import write_private_text

TURN_SEPARATOR = "\n=====\n"
"""Separates turns in a ``.txt`` recording."""


def _common_prefix(left: Sequence[int], right: Sequence[int]) -> int:
    count = 0
    for a, b in zip(left, right, strict=False):
        if a != b:
            break
        count += 1
    return count


def read_recording(path: Path) -> list[list[int]]:
    """Read the turns of a recording.

    Raises:
        ReplayError: if the file is missing, unreadable or malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ReplayError(f"cannot read replay file {path}: {error}") from error
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ReplayError(f"{path} is not valid JSON: {error.msg} at line {error.lineno}") from error
        except RecursionError as error:  # nested deeper than Python's stack
            raise ReplayError(f"{path} must hold a list of token ids per turn; it nests too deeply") from error
        turns = data if data and all(isinstance(item, list) for item in data) else [data]
        for turn in turns:
            if not isinstance(turn, list) or not all(isinstance(t, int) and tk.is_valid(t) for t in turn):
                raise ReplayError(f"{path} must hold a list of token ids (0..{tk.VOCAB_SIZE - 1}) per turn")
        return turns
    from harmony_chat.harmony.vocab import load_encoding

    encoding = load_encoding()
    return [
        encoding.encode(chunk.strip("\n"), allowed_special="all")
        for chunk in text.split(TURN_SEPARATOR)
        if chunk.strip()
    ]


def write_recording(path: Path, turns: Sequence[Sequence[int]]) -> None:
    """Write ``turns`` as a ``.json`` or ``.txt`` recording (chosen by the suffix), a 0600 file (it holds a chat)."""
    if path.suffix == ".json":
        data: object = list(turns[0]) if len(turns) == 1 else [list(turn) for turn in turns]
        write_private_text(path, json.dumps(data) + "\n")
        return
    from harmony_chat.harmony.vocab import load_encoding

    encoding = load_encoding()
    write_private_text(path, TURN_SEPARATOR.join(encoding.decode(list(turn)) for turn in turns) + "\n")


class SteppingClock:
    """A clock that advances a fixed step per reading, so replayed timings are repeatable."""

    def __init__(self, step: float = 0.02) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        """Advance one step and return the time."""
        self.now += self.step
        return self.now


class ReplayBackend(ModelBackend):
    """Plays back recorded turns, one per ``generate`` call (cycling), as if a model produced them.

    It mimics a KV cache so that reuse figures look like a real backend's.

    Args:
        path: the recording (or give ``turns`` directly).
        turns: recorded token ids per turn.
        delay_s: pause before each token, to look like a live model.
        context_size: the context size to report.
        name: the model name to report.
        clock: the time source for the reported timings (a fake one makes them repeatable).
        chooser: picks the turn to play from the prompt (None: play the turns in order, cycling).
    """

    name = "replay"

    def __init__(
        self,
        path: Path | None = None,
        *,
        turns: Sequence[Sequence[int]] | None = None,
        delay_s: float = 0.0,
        context_size: int = 131072,
        name: str | None = None,
        clock: Callable[[], float] = time.perf_counter,
        chooser: Callable[[Sequence[int]], int | None] | None = None,
    ) -> None:
        super().__init__()
        self.clock = clock
        self.chooser = chooser
        self.path = path
        self._turns = [list(turn) for turn in turns] if turns is not None else []
        self.delay_s = delay_s
        self._context_size = context_size
        self._name = name or (path.stem if path else "replay")
        self._next_turn = 0
        self._cached: list[int] = []
        self._info: ModelInfo | None = None

    @property
    def info(self) -> ModelInfo:
        """What the replayed 'model' is."""
        if self._info is None:
            raise RuntimeError("the recording is not loaded")
        return self._info

    def load(self) -> ModelInfo:
        """Read the recording."""
        if self.path is not None:
            self._turns = read_recording(self.path)
        if not self._turns:
            raise ReplayError(f"{self.path or 'the recording'} holds no turns")
        self._info = ModelInfo(
            name=self._name,
            backend=self.name,
            context_size=self._context_size,
            path=str(self.path) if self.path else None,
        )
        return self._info

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Yield the next recorded turn's token ids."""
        chosen = self.chooser(prompt) if self.chooser is not None else None
        turn = self._turns[(self._next_turn if chosen is None else chosen) % len(self._turns)]
        self._next_turn += 1
        reused = min(_common_prefix(self._cached, prompt), max(len(prompt) - 1, 0))
        stats = self.last_stats = GenerationStats(
            prompt_tokens=len(prompt), prompt_tokens_evaluated=len(prompt) - reused
        )
        self._cached = list(prompt)
        started = self.clock()
        first = started
        for token in turn:
            if stats.generated_tokens >= sampling.max_tokens or should_stop():
                break
            if self.delay_s:
                time.sleep(self.delay_s)
            now = self.clock()
            if stats.generated_tokens == 0:
                first = now
                stats.ttft_s = now - started
            stats.generated_tokens += 1
            stats.decode_s = now - first
            if token in stop_ids:
                yield token
                break
            self._cached.append(token)
            yield token

    def prefill(self, tokens: Sequence[int]) -> int:
        """Pretend to evaluate ``tokens``, so replayed reuse figures follow a real backend's."""
        new = len(tokens) - _common_prefix(self._cached, tokens)
        self._cached = list(tokens)
        return new


class RecordingBackend(ModelBackend):
    """Wraps another backend and writes every completion it generates to a recording file.

    A call that continues the previous one (its prompt is that call's prompt plus what it
    generated, as when a tool call's arguments switch to a grammar) extends the same completion,
    so a recorded tool loop replays one completion per generation step.
    """

    def __init__(self, inner: ModelBackend, path: Path) -> None:
        super().__init__()
        self.inner = inner
        self.path = path
        self.name = inner.name
        self.supports_json_schema = inner.supports_json_schema
        self.supports_penalties = inner.supports_penalties
        self.native_generation = inner.native_generation
        self._turns: list[list[int]] = []
        self._last_prompt: list[int] = []

    @property
    def info(self) -> ModelInfo:
        """The wrapped backend's model."""
        return self.inner.info

    def load(self) -> ModelInfo:
        """Load the wrapped backend."""
        return self.inner.load()

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Pass tokens through, then append the completion to the recording."""
        prompt = list(prompt)
        previous = self._turns[-1] if self._turns else None
        if previous is not None and previous and prompt == self._last_prompt + previous:
            turn = previous  # a continuation of the same completion
        else:
            turn = []
            self._turns.append(turn)
            self._last_prompt = prompt
        try:
            for token in self.inner.generate(prompt, sampling, stop_ids, should_stop):
                turn.append(token)
                yield token
        finally:
            self.last_stats = self.inner.last_stats
            try:
                write_recording(self.path, self._turns)
            except OSError as error:
                raise ReplayError(f"cannot write recording {self.path}: {error.strerror}") from error

    def prefill(self, tokens: Sequence[int]) -> int:
        """Prefill the wrapped backend."""
        return self.inner.prefill(tokens)

    def close(self) -> None:
        """Close the wrapped backend."""
        self.inner.close()
