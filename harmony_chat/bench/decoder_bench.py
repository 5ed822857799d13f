"""How long the stream decoder takes per token, on a long realistic harmony completion."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from openai_harmony import HarmonyEncoding

from harmony_chat.harmony.decoder import StreamDecoder

_PARAGRAPH = (
    "The user wants a careful explanation with code. Consider caching, eviction and the prefix rule; "
    "then check edge cases such as empty input, unicode (naïve café, 東京, 🙂) and very long lines. "
)
_ANSWER = (
    "## Plan\n\n1. Render the prompt once.\n2. Reuse the **KV cache** for the shared prefix.\n\n"
    "```python\ndef lcp(a: list[int], b: list[int]) -> int:\n    n = 0\n    for x, y in zip(a, b):\n"
    "        if x != y:\n            break\n        n += 1\n    return n\n```\n\n"
    "| turn | reused |\n|---|---|\n| 2 | 95% |\n\n"
)


def sample_completion(encoding: HarmonyEncoding, target_tokens: int = 20000) -> list[int]:
    """Return a long completion: analysis, a preamble, then a Markdown-heavy final answer."""
    analysis = _PARAGRAPH * max(1, target_tokens // 80)
    answer = _ANSWER * max(1, target_tokens // 200)
    text = (
        f"<|channel|>analysis<|message|>{analysis}<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Working on it.<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>{answer}<|return|>"
    )
    return list(encoding.encode(text, allowed_special="all"))


@dataclass(frozen=True, slots=True)
class DecoderResult:
    """Decoder cost per token (median of several passes)."""

    tokens: int
    microseconds_per_token: float
    passes: int


def bench_decoder(encoding: HarmonyEncoding, tokens: list[int] | None = None, passes: int = 5) -> DecoderResult:
    """Feed a whole completion through fresh decoders and time it, raw token events included."""
    tokens = tokens or sample_completion(encoding)
    timings = []
    for _ in range(passes):
        decoder = StreamDecoder(encoding, stop_on_final=False)
        started = time.perf_counter()
        for token in tokens:
            decoder.feed(token)
        timings.append(time.perf_counter() - started)
    return DecoderResult(len(tokens), statistics.median(timings) / len(tokens) * 1e6, passes)
