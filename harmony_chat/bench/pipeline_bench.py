"""Decode speed of a bare ``Llama.generate`` loop against harmony-chat's full pipeline.

Both run on the same loaded model, the same prompt and the same seeded sampler; runs alternate so
that machine noise hits both alike. Two comparisons:

- a whole turn as ``ask`` runs it (backend, structure guard, decoder, events, the printer writing
  the answer out), from ``<|start|>assistant``: the model writes its headers too. A header's tokens
  are sampled from the few candidates harmony's grammar allows, cheaper than the bare loop's full
  vocabulary, so a model that writes long headers (a random one) makes this figure look better
  than the pipeline's cost per token is;
- content only: both start inside a ``final`` message (its header is part of the prompt), so every
  token is one the bare loop and the pipeline sample alike, and the difference is the pipeline's
  own cost per token.
"""

from __future__ import annotations

import io
import statistics
import time
from dataclasses import dataclass
from typing import Any

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.bench.pairs import paired_ratio
from harmony_chat.generation.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.harmony.session import ChatSession

BENCH_PROMPT = "Write a long, detailed essay about the history of computing, with code examples."


@dataclass(frozen=True, slots=True)
class DecodeComparison:
    """Medians over the runs, in tokens per second, and the pipeline/bare ratios.

    A ratio is the median of each pair's (a bare run and the pipeline's right beside it, in
    alternating order): the machine's speed drifts between pairs more than within one.
    """

    tokens: int
    runs: int
    bare_tokens_per_s: float
    pipeline_tokens_per_s: float
    prompt_tokens: int
    prompt_tokens_per_s: float
    ratio: float
    """Pipeline speed as a fraction of the bare loop's, over a whole turn."""
    content_bare_tokens_per_s: float = 0.0
    content_pipeline_tokens_per_s: float = 0.0
    """The same inside a final message's content (no header tokens)."""
    content_ratio: float = 0.0


def _bare_decode(llm: Any, prompt: list[int], sampling: SamplingParams) -> tuple[float, float]:
    """Return (prompt tokens/s, decode tokens/s) of a plain generate loop from an empty cache."""
    llm.reset()
    llm.set_seed(sampling.seed or 0)
    started = time.perf_counter()
    first = last = started
    count = 0
    for _token in llm.generate(
        prompt, temp=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k, min_p=sampling.min_p
    ):
        last = time.perf_counter()
        if count == 0:
            first = last
        count += 1
        if count >= sampling.max_tokens:
            break
    prompt_speed = len(prompt) / (first - started) if first > started else 0.0
    return prompt_speed, (count - 1) / (last - first) if last > first else 0.0


def _pipeline_decode(backend: LlamaCppBackend, session: ChatSession, sampling: SamplingParams) -> float:
    """Return the decode tokens/s of one ``ask``-style turn (cache reset first, turn not kept)."""
    from harmony_chat.printing.ask_output import AskPrinter, OutputMode

    backend.llama.reset()
    sink = io.StringIO()
    printer = AskPrinter(OutputMode(), sink, sink, session)
    speed = 0.0
    for event in run_turn(session, backend, TurnOptions(sampling=sampling, stop_on_final=False)):
        printer.handle(event)
        if isinstance(event, TurnStats):
            speed = event.stats.decode_tokens_per_s
    del session.history[1:]
    del session.turns[:]
    return speed


def compare_decode(backend: LlamaCppBackend, tokens: int = 256, runs: int = 3, seed: int = 7) -> DecodeComparison:
    """Alternate bare and pipeline runs on ``backend``, whole turns and content only; return the medians."""
    from harmony_chat.bench.token_costs import FinalAnswer

    encoding = backend_encoding(backend)
    session = ChatSession(encoding)
    session.add_user(BENCH_PROMPT)
    prompt = session.render(max_new_tokens=tokens).tokens
    sampling = SamplingParams(temperature=1.0, seed=seed, max_tokens=tokens)
    speeds: dict[str, list[float]] = {"bare": [], "pipeline": [], "prompt": [], "content bare": [], "content": []}
    content = FinalAnswer(backend, encoding, tokens, False, seed)

    def bare() -> None:
        prompt_speed, speed = _bare_decode(backend.llama, prompt, sampling)
        speeds["bare"].append(speed)
        speeds["prompt"].append(prompt_speed)

    def content_bare() -> None:
        speeds["content bare"].append(_bare_decode(backend.llama, content.prompt, content.sampling)[1])

    def pipeline() -> None:
        speeds["pipeline"].append(_pipeline_decode(backend, session, sampling))

    def content_pipeline() -> None:
        speeds["content"].append(FinalAnswer(backend, encoding, tokens, False, seed).run()[1])

    _bare_decode(backend.llama, prompt, sampling)  # warm-up
    for number in range(runs):  # each pair in turn, its two runs in alternating order
        for first, second in ((bare, pipeline), (content_bare, content_pipeline)):
            for run in (first, second) if number % 2 == 0 else (second, first):
                run()
    median = {name: statistics.median(values) for name, values in speeds.items()}
    return DecodeComparison(
        tokens,
        runs,
        median["bare"],
        median["pipeline"],
        len(prompt),
        median["prompt"],
        paired_ratio(speeds["pipeline"], speeds["bare"]),
        median["content bare"],
        median["content"],
        paired_ratio(speeds["content"], speeds["content bare"]),
    )


def backend_encoding(backend: LlamaCppBackend) -> Any:
    """The harmony encoding for ``backend``'s model (vocabulary derived from it if needed)."""
    from harmony_chat.harmony.vocab import load_encoding

    return load_encoding(backend.model_path)
