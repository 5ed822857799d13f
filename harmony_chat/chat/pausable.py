"""The model of one turn, pausable between two tokens so another generation can run on it.

A reasoning summary is written by the same model while the turn is under way: the turn's stream
is closed (so llama.cpp's lock and KV cache are free), the summary is generated from the same
prefix, and the turn resumes from exactly the tokens it had when it next asks for one. The turn
itself never notices: its figures are those of one call, and the resume costs one re-evaluated
token, as the KV cache still holds the turn's prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Sequence
from dataclasses import replace

from harmony_chat.backends.base import GenerationStats, ModelBackend, ModelInfo, SamplingParams


def _merge(into: GenerationStats, calls: Sequence[GenerationStats]) -> None:
    """Keep ``into`` the figures of one call over ``calls``: the first's prompt, every call's tokens."""
    if not calls:
        return
    first = calls[0]
    into.prompt_tokens = first.prompt_tokens
    into.prompt_tokens_evaluated = first.prompt_tokens_evaluated
    into.prompt_tokens_cached = first.prompt_tokens_cached
    into.engine, into.host = first.engine, first.host
    into.ttft_s = first.ttft_s
    into.generated_tokens = sum(call.generated_tokens for call in calls)
    into.decode_s = first.decode_s + sum(call.ttft_s + call.decode_s for call in calls[1:])
    into.bursts = None if any(call.bursts is None for call in calls) else sum(call.bursts or 0 for call in calls)


class PausableBackend(ModelBackend):
    """Wraps the conversation's model for its turns; :meth:`pause` frees the model between two tokens.

    Args:
        inner: the model (it stays the conversation's: :meth:`close` leaves it open).
    """

    def __init__(self, inner: ModelBackend) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.supports_json_schema = inner.supports_json_schema
        self.context: list[int] = []
        """The token ids of the latest call so far: its prompt, then what was generated."""
        self.resumes: list[GenerationStats] = []
        """The inner model's figures of every resumed stream (each re-evaluates about one token)."""
        self._stream: Generator[int, None, None] | None = None
        self._paused = False

    @property
    def info(self) -> ModelInfo:
        """The wrapped model."""
        return self.inner.info

    @property
    def streaming(self) -> bool:
        """Whether a turn's stream is open (so :meth:`pause` has something to pause)."""
        return self._stream is not None

    def load(self) -> ModelInfo:
        """Load the wrapped model."""
        return self.inner.load()

    def pause(self) -> None:
        """Close the model's open stream; the turn resumes from the same tokens when it asks for the next one."""
        if self._stream is not None:
            self._paused = True
            self._stream.close()
            self._stream = None

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Yield the inner model's tokens; after a :meth:`pause`, reopen its stream from the tokens so far."""
        self.context = list(prompt)
        start = len(self.context)
        stats = self.last_stats = GenerationStats(prompt_tokens=len(self.context))
        calls: list[GenerationStats] = []
        while True:
            left = sampling.max_tokens - (len(self.context) - start)
            if left <= 0:
                return
            self._paused = False
            stream = self._stream = self.inner.generate(
                list(self.context), replace(sampling, max_tokens=left), stop_ids, should_stop
            )
            resumed = bool(calls)
            try:
                for token in stream:
                    if len(calls) == 0 or calls[-1] is not self.inner.last_stats:
                        calls.append(self.inner.last_stats)
                        if resumed:
                            self.resumes.append(self.inner.last_stats)
                    self.context.append(token)
                    _merge(stats, calls)
                    yield token
                    if token in stop_ids:
                        return
                    if self._paused:
                        break
                else:
                    return
            finally:
                stream.close()
                self._stream = None
                _merge(stats, calls)

    def prefill(self, tokens: Sequence[int]) -> int:
        """Prefill the wrapped model."""
        return self.inner.prefill(tokens)

    def close(self) -> None:
        """Nothing: the wrapped model belongs to the conversation."""
        return None
