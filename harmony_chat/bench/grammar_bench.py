"""What grammar-constrained tool arguments cost: decode time per token with and without the schema.

The prompt ends inside a ``<|constrain|>json`` call header, so both runs write tool arguments; the
constrained run samples under llama.cpp's grammar for the schema (as the tool loop does). Greedy,
from the same prompt, KV cache reused, medians over the runs.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

from openai_harmony import ToolDescription

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.session import ChatSession

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["query", "limit"],
}
HEADER = "<|channel|>commentary to=functions.search <|constrain|>json<|message|>"


@dataclass(frozen=True, slots=True)
class GrammarCost:
    """Milliseconds per generated argument token, free and under the grammar (medians)."""

    free_ms_per_token: float
    constrained_ms_per_token: float
    tokens: int

    @property
    def extra_ms_per_token(self) -> float:
        """What the grammar adds to each argument token."""
        return self.constrained_ms_per_token - self.free_ms_per_token


def _ms_per_token(backend: LlamaCppBackend, prompt: list[int], sampling: SamplingParams) -> tuple[float, int]:
    list(backend.generate(prompt, SamplingParams(temperature=0.0, max_tokens=1), tk.GENERATION_STOPS, lambda: False))
    count, first, last = 0, 0.0, 0.0
    for _ in backend.generate(prompt, sampling, tk.GENERATION_STOPS, lambda: False):
        last = time.perf_counter()
        if count == 0:
            first = last
        count += 1
    return ((last - first) * 1000 / (count - 1) if count > 1 else 0.0), count


def grammar_cost(backend: LlamaCppBackend, encoding: Any, tokens: int = 48, runs: int = 3) -> GrammarCost:
    """Measure decode time per argument token with and without the JSON-schema grammar."""
    session = ChatSession(encoding, functions=[ToolDescription.new("search", "Search.", SCHEMA)])
    session.add_user("Search the docs for grammar sampling, and show ten results.")
    prompt = session.render().tokens + list(encoding.encode(HEADER, allowed_special="all"))
    free = SamplingParams(temperature=0.0, max_tokens=tokens)
    constrained = SamplingParams(temperature=0.0, max_tokens=tokens, json_schema=SCHEMA)
    free_runs, constrained_runs, counts = [], [], []
    for _ in range(runs):
        ms, count = _ms_per_token(backend, prompt, free)
        free_runs.append(ms)
        ms, count = _ms_per_token(backend, prompt, constrained)
        constrained_runs.append(ms)
        counts.append(count)
    count = int(statistics.median(counts))
    return GrammarCost(statistics.median(free_runs), statistics.median(constrained_runs), count)
