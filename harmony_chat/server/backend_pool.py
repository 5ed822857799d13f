"""How many generations the served model runs at once, and which handle on it each one gets.

The in-process model (llama.cpp, a replay) has one context: one handle, one generation at a
time. A serving engine batches, so ``serve --url`` drives it through N handles (``--parallel``;
by default what the engine reports: llama-server's slots, :data:`DEFAULT_ENGINE_PARALLEL` for
vLLM and SGLang, which schedule requests themselves). On llama-server each handle is pinned to
its own slot (``id_slot``), whose KV cache is its prefix cache. A generation whose prompt continues
what a free handle last generated (that turn's whole prompt, at least, is where the new one
starts) takes that handle, the one sharing the longest prefix if several do: the next turn of a
conversation goes back to the slot that still holds the previous one. Any other prompt takes the
handle used least recently, so a new conversation overwrites the cache least likely to be wanted.

A :class:`LeasedBackend` is what one request's turn generates with: it takes a handle at its first
``generate`` (when the prompt is known), keeps it for the turn's every call (the summaries, a
grammar restart) and gives it back with :meth:`LeasedBackend.release`. The gate in front
(:class:`~harmony_chat.server.limits.GenerationGate`) admits no more turns than there are
handles, so a free one is always there.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import AsyncGenerator, Callable, Collection, Generator, Sequence
from dataclasses import dataclass

from harmony_chat.backends.base import GenerationStats, ModelBackend, ModelInfo, SamplingParams, TokenLogprob
from harmony_chat.errors import HarmonyChatError

DEFAULT_ENGINE_PARALLEL = 16
"""Generations at once on an engine that reports no limit of its own (vLLM, SGLang)."""
MAX_PARALLEL = 1024
"""The most generations ``--parallel`` may ask for."""


class ParallelError(HarmonyChatError):
    """``--parallel`` asks for more than the served model can run at once."""

    exit_code = 2


def shared_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    """How many leading token ids ``first`` and ``second`` have in common (slices compared in C)."""
    low, high = 0, min(len(first), len(second))
    while low < high:  # the longest equal prefix, by halving
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass(slots=True)
class _Handle:
    backend: ModelBackend
    context: list[int]
    """The tokens its last turn left in the engine's cache: prompt, then answer."""
    prompt_length: int = 0
    """How many of them were that turn's prompt (a prompt continues the turn if it starts with those)."""
    used: int = 0
    """When it was last given back (a counter: higher is more recent)."""
    busy: bool = False


class BackendPool:
    """The served model's handles, each generating for one turn at a time.

    Args:
        handles: backends on the same model (the first describes it: name, flags, context).
        reason: why there are this many, for ``/health`` (e.g. ``llama-server's 4 slots``).
    """

    def __init__(self, handles: Sequence[ModelBackend], reason: str) -> None:
        if not handles:
            raise ValueError("a pool needs at least one handle")
        self._handles = [_Handle(backend, []) for backend in handles]
        self.reason = reason
        self._lock = threading.Lock()
        self._clock = 0

    @property
    def size(self) -> int:
        """How many generations may run at once."""
        return len(self._handles)

    @property
    def primary(self) -> ModelBackend:
        """The first handle (what the model is described by)."""
        return self._handles[0].backend

    def lease(self) -> LeasedBackend:
        """A backend for one turn (it takes a handle at its first generation)."""
        return LeasedBackend(self)

    def claim(self, prompt: Sequence[int]) -> int:
        """Take the free handle whose cache ``prompt`` continues, else the least recently used one; return its index.

        Raises:
            RuntimeError: when every handle is busy (the gate admitted more turns than there are handles).
        """
        with self._lock:
            free = [index for index, handle in enumerate(self._handles) if not handle.busy]
            if not free:
                raise RuntimeError("every handle on the model is busy")
            best = min(free, key=lambda index: self._handles[index].used)
            longest = 0
            for index in free:
                handle = self._handles[index]
                length = handle.prompt_length
                if not length or prompt[:length] != handle.context[:length]:
                    continue  # the prompt does not continue this handle's last turn: one compare, no search
                shared = shared_prefix(handle.context, prompt)
                if shared > longest:
                    best, longest = index, shared
            self._handles[best].busy = True
            return best

    def backend(self, index: int) -> ModelBackend:
        """The backend of a claimed handle."""
        return self._handles[index].backend

    def give_back(self, index: int, context: list[int], prompt_length: int) -> None:
        """Free a handle: its turn left ``context`` in the cache, the first ``prompt_length`` being its prompt."""
        with self._lock:
            self._clock += 1
            handle = self._handles[index]
            handle.context, handle.prompt_length, handle.used, handle.busy = context, prompt_length, self._clock, False

    @property
    def busy_handles(self) -> int:
        """Handles generating now."""
        with self._lock:
            return sum(handle.busy for handle in self._handles)


class LeasedBackend(ModelBackend):
    """The model as one turn sees it: a handle of the pool, taken at the first generation.

    The turn's later calls (a summary, the turn resumed after it, a restart under a grammar) run
    on the same handle; what the last of them left in the engine's cache is what the pool
    remembers of the handle.

    Args:
        pool: the pool to take the handle from.
    """

    def __init__(self, pool: BackendPool) -> None:
        self._pool = pool
        self._index: int | None = None
        self._context: list[int] = []
        self._prompt_length = 0
        self._own_stats = GenerationStats()
        self._own_logprobs: deque[TokenLogprob] | None = None
        primary = pool.primary
        self.name = primary.name
        self.supports_json_schema = primary.supports_json_schema
        self.guards_structure = primary.guards_structure
        self.native_generation = primary.native_generation
        self.streams_on_event_loop = primary.streams_on_event_loop
        self.supports_penalties = primary.supports_penalties
        self.supports_logit_bias = primary.supports_logit_bias
        self.supports_logprobs = primary.supports_logprobs
        super().__init__()

    @property
    def handle(self) -> ModelBackend | None:
        """The handle this turn generates with (None before its first generation)."""
        return None if self._index is None else self._pool.backend(self._index)

    @property
    def handle_index(self) -> int | None:
        """Which of the pool's handles this turn took (None before its first generation)."""
        return self._index

    @property
    def last_stats(self) -> GenerationStats:
        """The figures of the handle's latest call."""
        handle = self.handle
        return self._own_stats if handle is None else handle.last_stats

    @last_stats.setter
    def last_stats(self, stats: GenerationStats) -> None:
        self._own_stats = stats

    @property
    def token_logprobs(self) -> deque[TokenLogprob] | None:
        """The log probabilities of the handle's tokens not taken yet."""
        handle = self.handle
        return self._own_logprobs if handle is None else handle.token_logprobs

    @token_logprobs.setter
    def token_logprobs(self, logprobs: deque[TokenLogprob] | None) -> None:
        self._own_logprobs = logprobs

    @property
    def info(self) -> ModelInfo:
        """The served model."""
        return self._pool.primary.info

    def load(self) -> ModelInfo:
        """The model is loaded already (the pool's handles are)."""
        return self.info

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Yield the handle's tokens (the handle is taken at the first call, from the prompt)."""
        if self._index is None:
            self._index = self._pool.claim(prompt)
            self._prompt_length = len(prompt)
        context = list(prompt)
        self._context = context
        yield from _recorded(self._pool.backend(self._index).generate(prompt, sampling, stop_ids, should_stop), context)

    async def agenerate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> AsyncGenerator[list[int], None]:
        """:meth:`generate` on the event loop (the handle is taken the same way)."""
        if self._index is None:
            self._index = self._pool.claim(prompt)
            self._prompt_length = len(prompt)
        context = list(prompt)
        self._context = context
        reads = self._pool.backend(self._index).agenerate(prompt, sampling, stop_ids, should_stop)
        try:
            async for tokens in reads:
                context.extend(tokens)
                yield tokens
        finally:
            await reads.aclose()

    def release(self) -> None:
        """Give the handle back (call once the turn's thread has ended; again: nothing)."""
        if self._index is not None:
            index, self._index = self._index, None
            self._pool.give_back(index, self._context, self._prompt_length)

    def close(self) -> None:
        """Nothing: the handles are the server's."""
        return None


def _recorded(tokens: Generator[int, None, None], context: list[int]) -> Generator[int, None, None]:
    """Yield ``tokens``, appending each to ``context``; closing it closes the handle's stream."""
    try:
        for token in tokens:
            context.append(token)
            yield token
    finally:
        tokens.close()


def pool_for(backend: ModelBackend, parallel: int | None) -> BackendPool:
    """The pool the server generates with: the engine's handles, or the in-process model alone.

    Args:
        backend: the loaded model.
        parallel: generations at once (``--parallel``); None: what the engine reports.

    Raises:
        ParallelError: ``parallel`` above 1 for an in-process model, or beyond the engine's slots.
    """
    from harmony_chat.backends.remote.engine import RemoteBackend
    from harmony_chat.errors import EngineError

    if not isinstance(backend, RemoteBackend):
        if parallel is not None and parallel > 1:
            raise ParallelError(
                f"--parallel {parallel}: the in-process {backend.name} model runs one generation at a time "
                "(it has one context); serve the GGUF with llama-server --parallel N and give serve --url"
            )
        return BackendPool([backend], f"the in-process {backend.name} model runs one generation at a time")
    reported = backend.parallel_slots
    if parallel is not None:
        count, reason = parallel, f"--parallel {parallel}"
    elif reported is not None:
        count, reason = reported, f"{backend.client.label} has {reported} slot{'' if reported == 1 else 's'}"
    else:
        count = DEFAULT_ENGINE_PARALLEL
        reason = f"{backend.client.label} reports no limit; serve's default is {DEFAULT_ENGINE_PARALLEL}"
    try:
        return BackendPool(backend.handles(count), reason)
    except EngineError as error:
        raise ParallelError(f"--parallel {count}: {error}") from None
