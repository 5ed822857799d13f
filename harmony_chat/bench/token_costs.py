"""Where each token's time goes in harmony-chat's pipeline, on short and long answers, with and without a schema.

Every answer here is a ``final`` message from the same prompt (the header is part of the prompt),
written by the backend under harmony's grammar, decoded and printed as ``ask`` prints it. With a
response format, the answer is written under the JSON grammar of the user's grocery-list schema
(an array of at least 400 strings), which a model cannot finish within the benchmark's lengths,
so both answers run to the same length. Two figures come out:

- :func:`compare_structured`: decode speed with the schema against without it, pairs of runs of
  the same length in alternating order, the ratio the median of the pairs' (nothing is
  instrumented there).
- :func:`token_costs`: one instrumented run per length and format, split into the structure guard
  (following each token, and the masks of header tokens), the JSON guard (asking the grammar about
  each token, and sampling again the tokens it refuses), the decoder, the event dispatch (the
  printer and the grammar switch watching events) and the sampling hand-over (what a token sampled
  through the Python stage costs beyond its mask), each in microseconds per token. The decoder and
  the event dispatch run on the caller's thread while the model generates the next tokens on its
  own (as in a real turn): their time is CPU time beside the model's, not added to each token's.
"""

from __future__ import annotations

import io
import statistics
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.backends.llama_sampler import SamplerCosts
from harmony_chat.bench.pairs import paired_ratio
from harmony_chat.generation.constrained import ConstrainedStream
from harmony_chat.generation.producer import batches_in_background
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.session import ChatSession

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "string"}, "minItems": 400}},
    "required": ["items"],
}
"""A response format no answer of the benchmark's lengths can complete (so none ends early)."""
_clock = time.thread_time
"""The parts are timed in this thread's CPU time, which other processes' load does not stretch."""
QUESTION = "List what I need for a week of groceries, as JSON."
HEADER = "<|channel|>final<|message|>"


@dataclass(frozen=True, slots=True)
class TokenCosts:
    """One answer's figures, in microseconds per generated token."""

    tokens: int
    response_format: bool
    tokens_per_s: float
    structure_mask_us: float
    json_guard_us: float
    decoder_us: float
    event_dispatch_us: float
    sampling_handover_us: float
    resampled: int
    """Tokens the JSON grammar refused, sampled again under it."""

    def as_dict(self) -> dict[str, object]:
        """The figures as plain data, rounded."""
        return {
            "tokens": self.tokens,
            "response_format": self.response_format,
            "tokens_per_s": round(self.tokens_per_s, 2),
            "structure_mask_us": round(self.structure_mask_us, 2),
            "json_guard_us": round(self.json_guard_us, 2),
            "decoder_us": round(self.decoder_us, 2),
            "event_dispatch_us": round(self.event_dispatch_us, 2),
            "sampling_handover_us": round(self.sampling_handover_us, 2),
            "resampled": self.resampled,
        }


@dataclass(frozen=True, slots=True)
class StructuredComparison:
    """Medians over alternating runs: an answer under the response format against the same without it."""

    tokens: int
    runs: int
    free_tokens_per_s: float
    structured_tokens_per_s: float
    ratio: float
    """Structured speed as a fraction of the unstructured one: the median of each pair's."""


class FinalAnswer:
    """One final answer through the pipeline: backend, grammar switch, decoder, printer."""

    def __init__(self, backend: LlamaCppBackend, encoding: Any, tokens: int, structured: bool, seed: int) -> None:
        from harmony_chat.harmony.decoder import StreamDecoder
        from harmony_chat.printing.ask_output import AskPrinter, OutputMode

        session = ChatSession(encoding)
        session.add_user(QUESTION)
        header = list(encoding.encode(HEADER, allowed_special="all"))
        self.prompt = session.render(max_new_tokens=tokens).tokens + header
        self.sampling = SamplingParams(
            temperature=1.0, seed=seed, max_tokens=tokens, json_schema=SCHEMA if structured else None
        )
        self.stream = ConstrainedStream(backend, self.prompt, self.sampling, tk.GENERATION_STOPS, lambda: False, {})
        self.decoder = StreamDecoder(encoding, stop_on_final=False)
        sink = io.StringIO()
        self.printer = AskPrinter(OutputMode(), sink, sink, session)
        for token in header:  # the decoder starts where the prompt ends, on the final message's content
            for event in self.decoder.feed(token):
                self.printer.handle(event)
        self._times: list[float] = []
        backend.llama.reset()

    def run(self) -> tuple[int, float]:
        """Generate the answer; return its length and tokens per second after the first token."""
        count, speed, _, _ = self._generate(measure=False)
        return count, speed

    def measured(self) -> tuple[int, float, float, float]:
        """:meth:`run`, timing the decoder and the event dispatch: length, tokens/s, seconds in each."""
        return self._generate(measure=True)

    def _generate(self, *, measure: bool) -> tuple[int, float, float, float]:
        count, first, last = 0, 0.0, 0.0
        decoding = dispatching = 0.0
        for batch in batches_in_background(self._arrivals(), threading.Event()):  # as run_turn generates
            started = _clock() if measure else 0.0
            events = [event for token in batch for event in self.decoder.feed(token)]
            decoded = _clock() if measure else 0.0
            for event in events:
                self.stream.on_event(event)
                self.printer.handle(event)
            if measure:
                decoding += decoded - started
                dispatching += _clock() - decoded
            count += len(batch)
        if self._times:
            first, last = self._times[0], self._times[-1]
        speed = (len(self._times) - 1) / (last - first) if last > first else 0.0
        return count, speed, decoding, dispatching

    def _arrivals(self) -> Generator[int, None, None]:
        """The stream's tokens, noting when each arrived."""
        self._times = []
        for token in self.stream:
            self._times.append(time.perf_counter())
            yield token


def compare_structured(
    backend: LlamaCppBackend, encoding: Any, tokens: int = 4096, runs: int = 3, seed: int = 7
) -> StructuredComparison:
    """Alternate answers with and without the response format; return the median speeds."""
    speeds: dict[bool, list[float]] = {False: [], True: []}
    FinalAnswer(backend, encoding, min(tokens, 64), True, seed).run()  # warm-up: the grammar is parsed once
    for number in range(runs):
        for structured in (False, True) if number % 2 == 0 else (True, False):
            speeds[structured].append(FinalAnswer(backend, encoding, tokens, structured, seed).run()[1])
    return StructuredComparison(
        tokens,
        runs,
        statistics.median(speeds[False]),
        statistics.median(speeds[True]),
        paired_ratio(speeds[True], speeds[False]),
    )


def token_costs(backend: LlamaCppBackend, encoding: Any, tokens: int, structured: bool, seed: int = 7) -> TokenCosts:
    """One instrumented answer: where each token's time goes."""
    answer = FinalAnswer(backend, encoding, tokens, structured, seed)
    costs = backend.sampler_costs = SamplerCosts()
    try:
        count, speed, decoding, dispatching = answer.measured()
    finally:
        backend.sampler_costs = None
    per_token = 1e6 / max(count, 1)
    return TokenCosts(
        tokens=count,
        response_format=structured,
        tokens_per_s=speed,
        structure_mask_us=(costs.follow_s + costs.stage_s) * per_token,
        json_guard_us=(costs.check_s + costs.resample_s) * per_token,
        decoder_us=decoding * per_token,
        event_dispatch_us=dispatching * per_token,
        sampling_handover_us=costs.handover_s * per_token,
        resampled=costs.resampled,
    )
