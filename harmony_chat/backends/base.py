"""The backend interface: load, generate token ids from token ids, close, describe the model."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncGenerator, Callable, Collection, Generator, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SamplingParams:
    """How to pick tokens. The defaults follow OpenAI's advice for gpt-oss (temperature 1, top_p 1)."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: int | None = None
    max_tokens: int = 4096
    json_schema: Mapping[str, object] | None = None
    """Constrain the generated text to JSON of this schema (backends with ``supports_json_schema``)."""
    required_calls: tuple[str, ...] | None = None
    """The answer must be a call to one of these functions (``functions.<name>``), after any analysis.

    Honoured by backends with ``guards_structure`` (harmony's grammar allows only those headers);
    :class:`~harmony_chat.generation.constrained.ConstrainedStream` writes the headers itself elsewhere.
    """
    choices: tuple[str, ...] | None = None
    """Constrain the generated text to one of these strings (remote engines; a forced call's name)."""
    ignore_eos: bool = False
    """Keep generating past end-of-generation tokens (remote engines; benchmarks of long streams)."""
    harmony_structure: bool = True
    """Sample under harmony's grammar: special tokens and header words (:mod:`harmony_chat.harmony.structure`).

    Honoured by backends with ``guards_structure`` (llama.cpp in process); False lets a test or a
    measurement see what the model writes unguided.
    """
    frequency_penalty: float = 0.0
    """OpenAI's frequency penalty (-2 to 2): a token is less likely the more often it was generated."""
    presence_penalty: float = 0.0
    """OpenAI's presence penalty (-2 to 2): a token is less likely once it was generated (both penalties:
    backends with ``supports_penalties``)."""
    logit_bias: Mapping[int, float] | None = None
    """Added to the logits of these token ids before sampling (``supports_logit_bias``)."""
    logprobs: int | None = None
    """Report each generated token's log probability and this many top alternatives (0 to 20) in
    :attr:`ModelBackend.token_logprobs` (``supports_logprobs``); None reports none."""


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """A generated token's log probability under the model, and the most likely tokens in its place."""

    token_id: int
    logprob: float
    top: tuple[tuple[int, float], ...] = ()
    """``(token id, log probability)`` pairs, most likely first."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What a loaded model is."""

    name: str
    backend: str
    context_size: int
    gpu_layers: int = 0
    gpu_offload: bool = False
    """Whether any layer actually runs on a GPU."""
    path: str | None = None
    host: str | None = None
    """The serving engine's host (``host:port``) when the model runs remotely, else None."""

    @property
    def device(self) -> str:
        """``GPU`` when layers are offloaded, ``CPU`` otherwise, or ``<engine> @ <host>`` when remote."""
        if self.host is not None:
            return f"{self.backend} @ {self.host}"
        return "GPU" if self.gpu_offload else "CPU"


MIN_TIMED_BURSTS = 8
"""The fewest separate arrivals of a remote stream whose first-to-last time gives a speed."""


@dataclass(slots=True)
class GenerationStats:
    """Measurements of one generation call."""

    prompt_tokens: int = 0
    prompt_tokens_evaluated: int = 0
    """Prompt tokens the model had to evaluate (the rest came from the KV cache)."""
    generated_tokens: int = 0
    ttft_s: float = 0.0
    """Seconds from the call to the first generated token (prompt processing included)."""
    decode_s: float = 0.0
    """Seconds from the first to the last generated token."""
    engine: str | None = None
    """The remote serving engine that generated (None when in-process)."""
    host: str | None = None
    """The remote engine's ``host:port`` (None when in-process)."""
    prompt_tokens_cached: int | None = None
    """Prompt tokens the remote engine reports it served from its prefix cache (None: not reported)."""
    bursts: int | None = None
    """The distinct moments a remote engine's tokens arrived at (None: timed token by token, in process)."""

    @property
    def prompt_tokens_reused(self) -> int:
        """Prompt tokens taken from the KV cache."""
        return self.prompt_tokens - self.prompt_tokens_evaluated

    @property
    def decode_tokens_per_s(self) -> float:
        """Generated tokens per second from the first to the last one (0 when unknown).

        A stream that arrived in fewer than :data:`MIN_TIMED_BURSTS` bursts (a proxy that buffers,
        a short answer sent at once) says nothing about the engine's speed: unknown, not thousands.
        """
        if self.bursts is not None and self.bursts < MIN_TIMED_BURSTS:
            return 0.0
        return self.first_to_last_tokens_per_s

    @property
    def first_to_last_tokens_per_s(self) -> float:
        """Generated tokens per second from the first arrival to the last, however they arrived (0: unknown).

        What ``bench --url`` compares with the engine's own stream, timed the same way on both sides.
        """
        if self.generated_tokens < 2 or self.decode_s <= 0:
            return 0.0
        return (self.generated_tokens - 1) / self.decode_s

    def as_dict(self) -> dict[str, float | int | str | None]:
        """Return the figures as a flat dict (for JSON output); remote runs add engine, host and cache."""
        figures: dict[str, float | int | str | None] = {
            "prompt_tokens": self.prompt_tokens,
            "prompt_tokens_evaluated": self.prompt_tokens_evaluated,
            "prompt_tokens_reused": self.prompt_tokens_reused,
            "generated_tokens": self.generated_tokens,
            "ttft_s": round(self.ttft_s, 6),
            "decode_tokens_per_s": round(self.decode_tokens_per_s, 3),
        }
        if self.engine is not None:
            figures["engine"] = self.engine
            figures["host"] = self.host
            figures["prompt_tokens_cached"] = self.prompt_tokens_cached
            figures["bursts"] = self.bursts
        return figures


class ModelBackend(ABC):
    """A model that continues a prompt of harmony token ids, one token id at a time."""

    name: str = "backend"
    """Short name of the backend kind."""
    supports_json_schema: bool = False
    """Whether ``generate`` honours ``SamplingParams.json_schema`` (grammar-constrained tool arguments)."""
    guards_structure: bool = False
    """Whether ``generate`` honours ``SamplingParams.harmony_structure``."""
    native_generation: bool = False
    """Whether ``generate`` spends most of each token in native code that releases the GIL (llama.cpp in
    process): a turn then generates on a thread of its own while the caller decodes the tokens before."""
    streams_on_event_loop: bool = False
    """Whether :meth:`agenerate` streams on an asyncio event loop (a remote engine's connection): ``serve``
    then runs the turn on its loop, with no thread per generation."""
    supports_penalties: bool = False
    """Whether ``generate`` honours ``SamplingParams.frequency_penalty`` and ``presence_penalty``."""
    supports_logit_bias: bool = False
    """Whether ``generate`` honours ``SamplingParams.logit_bias``."""
    supports_logprobs: bool = False
    """Whether ``generate`` fills :attr:`token_logprobs` when ``SamplingParams.logprobs`` is set."""
    token_logprobs: deque[TokenLogprob] | None = None
    """The log probabilities of the tokens ``generate`` yielded that no one has taken yet, oldest first
    (a new queue per generation that asks for them; a consumer may take them a group of tokens later)."""

    def __init__(self) -> None:
        self.last_stats = GenerationStats()
        """Figures of the latest ``generate`` call, complete once it has ended."""

    @property
    @abstractmethod
    def info(self) -> ModelInfo:
        """What the loaded model is (valid after :meth:`load`)."""

    @abstractmethod
    def load(self) -> ModelInfo:
        """Load the model (may take long: call it from a worker thread).

        Raises:
            harmony_chat.errors.HarmonyChatError: with a one-line reason when it cannot load.
        """

    @abstractmethod
    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Yield generated token ids from ``prompt``.

        Generation ends after a token in ``stop_ids`` (which is yielded), after
        ``sampling.max_tokens`` tokens, or as soon as ``should_stop()`` turns true.
        """

    def agenerate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> AsyncGenerator[list[int], None]:
        """:meth:`generate` on the event loop, the ids of each arrival together (``streams_on_event_loop``)."""
        raise NotImplementedError(f"the {self.name} backend generates on a thread, not on the event loop")

    def prefill(self, tokens: Sequence[int]) -> int:
        """Evaluate ``tokens`` into the KV cache ahead of time; return how many were evaluated.

        Backends without a KV cache do nothing. Called while the user reads an answer, so the next
        turn only evaluates what is new.
        """
        return 0

    def close(self) -> None:
        """Release the model."""
        return None

    async def aclose(self) -> None:
        """Release what :meth:`agenerate` holds on the event loop it ran on (its pooled connections)."""
        return None
