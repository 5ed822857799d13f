"""How long the structure guard takes per token: harmony's grammar (special tokens, header words) as a logits mask.

The guard runs inside llama.cpp's sampler on every token (``backends/llama_cpp.py``,
:class:`~harmony_chat.backends.llama_cpp.StructureMask`). Timed here on its own, on the decoder
benchmark's long completion, with the logits laid out as llama.cpp hands them to a logits processor
(id, logit and probability per token, the logits a strided view), so the figure does not depend on
what a model happens to sample.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.llama_sampler import StructureMask
from harmony_chat.bench.decoder_bench import sample_completion
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.structure import Place, StructureGuard

_CANDIDATE = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
"""llama.cpp's ``llama_token_data``, as llama-cpp-python views it."""
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
    """The same for header tokens alone (tool calls' headers included), where header words are masked too."""


def bench_guard(encoding: HarmonyEncoding, tokens: list[int] | None = None, passes: int = 5) -> GuardResult:
    """Run a fresh guard over a whole completion, masking a full vocabulary of logits per token."""
    prompt = list(encoding.encode(PROMPT, allowed_special="all"))
    completion = tokens or sample_completion(encoding)
    ids = np.array([*prompt, *completion], dtype=np.intc)
    candidates = np.zeros(tk.VOCAB_SIZE, dtype=_CANDIDATE)
    logits = candidates["logit"]
    timings = []
    for _ in range(passes):
        mask = StructureMask(StructureGuard(encoding, prompt), len(prompt))
        started = time.perf_counter()
        for end in range(len(prompt), len(ids)):
            mask(ids[:end], logits)
        timings.append(time.perf_counter() - started)
    header_tokens, header_seconds = _headers(encoding, prompt, candidates["logit"], passes)
    return GuardResult(
        len(completion),
        statistics.median(timings) / len(completion) * 1e6,
        passes,
        header_tokens,
        header_seconds / header_tokens * 1e6,
    )


def _headers(encoding: HarmonyEncoding, prompt: list[int], logits: np.ndarray, passes: int) -> tuple[int, float]:
    """Header tokens in a tool-calling completion, and the median time a fresh guard spends on them (warm)."""
    completion = list(encoding.encode(HEADERS, allowed_special="all"))
    ids = np.array([*prompt, *completion], dtype=np.intc)
    StructureMask(StructureGuard(encoding, prompt), len(prompt))(ids, logits)  # the header states' first use
    totals: list[float] = []
    counted = 0
    for _ in range(passes):
        guard = StructureGuard(encoding, prompt)
        mask = StructureMask(guard, len(prompt))
        total, counted = 0.0, 0
        for end in range(len(prompt), len(ids)):
            started = time.perf_counter()
            mask(ids[:end], logits)
            if guard.place is Place.HEADER:
                total += time.perf_counter() - started
                counted += 1
        totals.append(total)
    return counted, statistics.median(totals)
