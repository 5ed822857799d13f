"""How long the structure guard takes per token: harmony's grammar (special tokens, header words) in the sampler.

The guard runs inside llama.cpp's sampler on every token (:mod:`~harmony_chat.backends.llama_sampler`):
in content only special tokens are refused, by a native logit bias, so Python only follows the
token; in a header, where the words are held to harmony's grammar too, the candidate buffer is cut
down to the tokens the grammar allows. Timed here on its own, on the decoder benchmark's long
completion, with a candidate buffer laid out as llama.cpp hands it to a sampler (id, logit and
probability per token) and filled afresh before each header token, so the figure does not depend
on what a model happens to sample.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.grammar_check import CANDIDATE
from harmony_chat.backends.llama_sampler import HarmonyStage, StructureMask
from harmony_chat.bench.decoder_bench import sample_completion
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.structure import Place, StructureGuard

PROMPT = "<|start|>user<|message|>Explain the KV cache.<|end|><|start|>assistant"
HEADERS = (
    "<|channel|>analysis<|message|>Need the weather.<|end|>"
    "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}<|call|>"
    "<|start|>assistant<|channel|>analysis to=python code<|message|>print(1)<|call|>"
    "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
)
"""Five messages with every kind of header (the guard follows each as if it were one completion)."""


@dataclass(frozen=True, slots=True)
class GuardResult:
    """The guard's cost per token (median of several passes)."""

    tokens: int
    microseconds_per_token: float
    passes: int
    header_tokens: int = 0
    header_microseconds_per_token: float = 0.0
    """The same for header tokens alone (tool calls' headers included), where header words are ruled too."""


class _Buffer:
    """A full candidate buffer in token-id order, as llama.cpp fills it before each sampling."""

    def __init__(self) -> None:
        fresh = np.zeros(tk.VOCAB_SIZE, dtype=CANDIDATE)
        fresh["id"] = np.arange(tk.VOCAB_SIZE)
        self._fresh = fresh.view(np.uint32).reshape(tk.VOCAB_SIZE, -1)
        self.rows = self._fresh.copy()
        self.records = self.rows.view(CANDIDATE).reshape(-1)
        self.size = tk.VOCAB_SIZE

    def refill(self) -> None:
        if self.size != tk.VOCAB_SIZE:
            self.rows[: self.size] = self._fresh[: self.size]
            self.size = tk.VOCAB_SIZE


def _step(stage: HarmonyStage, buffer: _Buffer, token: int) -> None:
    """What the sampler does with harmony's grammar for one token: rule the next one, then follow the token."""
    if stage.content_stops() is None:  # else a native logit bias refuses the specials
        buffer.size = stage.rule(buffer.records, buffer.rows)
    stage.follow(token)


def _stage(encoding: HarmonyEncoding, prompt: list[int]) -> HarmonyStage:
    """The sampler's stage for harmony's grammar alone (no JSON grammar, no extra processor)."""
    return HarmonyStage(StructureMask(StructureGuard(encoding, prompt), len(prompt)), None, frozenset())


def bench_guard(encoding: HarmonyEncoding, tokens: list[int] | None = None, passes: int = 5) -> GuardResult:
    """Run a fresh guard over a whole completion, as the sampler drives it."""
    prompt = list(encoding.encode(PROMPT, allowed_special="all"))
    completion = tokens or sample_completion(encoding)
    buffer = _Buffer()
    timings = []
    for _ in range(passes):
        stage = _stage(encoding, prompt)
        total = 0.0
        for token in completion:
            buffer.refill()
            started = time.perf_counter()
            _step(stage, buffer, token)
            total += time.perf_counter() - started
        timings.append(total)
    header_tokens, header_seconds = _headers(encoding, prompt, buffer, passes)
    return GuardResult(
        len(completion),
        statistics.median(timings) / len(completion) * 1e6,
        passes,
        header_tokens,
        header_seconds / header_tokens * 1e6,
    )


def _headers(encoding: HarmonyEncoding, prompt: list[int], buffer: _Buffer, passes: int) -> tuple[int, float]:
    """Header tokens in a tool-calling completion, and the median time a fresh guard spends on them (warm)."""
    completion: NDArray[np.intc] = np.array(encoding.encode(HEADERS, allowed_special="all"), dtype=np.intc)
    warm = _stage(encoding, prompt)
    for token in completion:  # the header states' first use
        buffer.refill()
        _step(warm, buffer, int(token))
    totals: list[float] = []
    counted = 0
    for _ in range(passes):
        stage = _stage(encoding, prompt)
        assert stage.mask is not None
        guard = stage.mask.guard
        total, counted = 0.0, 0
        for token in completion:
            buffer.refill()
            header = guard.place is Place.HEADER
            started = time.perf_counter()
            _step(stage, buffer, int(token))
            if header:
                total += time.perf_counter() - started
                counted += 1
        totals.append(total)
    return counted, statistics.median(totals)
