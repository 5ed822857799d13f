"""A remote engine's own token stream against harmony-chat's pipeline on top of it, side by side.

``raw`` sends exactly the request the backend sends and reads the server-sent events with plain
httpx, counting ids: the engine's speed as any client sees it. ``pipeline`` is what ``ask`` runs:
the remote backend (worker thread, cancellation checks), the harmony decoder, events and the
printer. Both use the same prompt and seeded sampler, and runs alternate so that server load and
network noise hit both alike. Both ask the engine to ignore its end-of-generation tokens (and
refuse the stop tokens), so each run streams the requested number of tokens, not however short
an answer the model would write. After the warm-up the prompt is in the engine's prefix cache for
both, so the time to first token measures the round trip more than prompt processing.
"""

from __future__ import annotations

import io
import json
import statistics
import time
from dataclasses import asdict, dataclass
from typing import IO

import httpx

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote.engine import RemoteBackend, StreamState
from harmony_chat.backends.remote.transport import parse_body
from harmony_chat.errors import EngineError
from harmony_chat.generation.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.session import ChatSession
from harmony_chat.text_safety import visible

BENCH_PROMPT = "Write a long, detailed essay about the history of computing, with code examples."


@dataclass(frozen=True, slots=True)
class StreamFigures:
    """One run: tokens received, seconds to the first, tokens per second after it."""

    tokens: int
    ttft_s: float
    tokens_per_s: float


@dataclass(frozen=True, slots=True)
class RemoteComparison:
    """Medians over the runs of the raw engine stream and of harmony-chat's pipeline."""

    engine: str
    host: str
    model: str
    prompt_tokens: int
    max_tokens: int
    runs: int
    raw: StreamFigures
    pipeline: StreamFigures

    @property
    def ratio(self) -> float:
        """Pipeline decode speed as a fraction of the raw stream's."""
        return self.pipeline.tokens_per_s / self.raw.tokens_per_s if self.raw.tokens_per_s else 0.0

    def as_dict(self) -> dict[str, object]:
        """The figures as a JSON-ready dict."""
        return {**asdict(self), "ratio": round(self.ratio, 4)}


def _figures(count: int, started: float, first: float, last: float) -> StreamFigures:
    speed = (count - 1) / (last - first) if count > 1 and last > first else 0.0
    return StreamFigures(count, first - started if count else 0.0, speed)


def raw_stream(backend: RemoteBackend, prompt: list[int], sampling: SamplingParams) -> StreamFigures:
    """Send the backend's request with plain httpx and time the ids as they arrive (no decoding).

    Raises:
        EngineError: when the engine answers with an error status.
    """
    path, body = backend.build_request(prompt, sampling, tk.GENERATION_STOPS)
    client = backend.client
    state = StreamState()
    count = 0
    started = first = last = time.perf_counter()
    with httpx.Client(timeout=client.timeout, trust_env=False) as http:
        with http.stream("POST", client.url + path, json=body, headers=client.auth_headers()) as response:
            if response.status_code >= 400:
                raise client.status_error(response.status_code, parse_body(response.read()), "benchmarking")
            for line in response.iter_lines():
                if not line.startswith("data:") or line == "data: [DONE]":
                    continue
                new = backend.parse_event(json.loads(line[5:]), state)
                if new:
                    last = time.perf_counter()
                    if count == 0:
                        first = last
                    count += len(new)
    return _figures(count, started, first, last)


def pipeline_stream(backend: RemoteBackend, session: ChatSession, sampling: SamplingParams) -> StreamFigures:
    """Run one ``ask``-style turn through ``backend`` (the turn is not kept) and return its figures."""
    from harmony_chat.printing.ask_output import AskPrinter, OutputMode

    sink = io.StringIO()
    printer = AskPrinter(OutputMode(), sink, sink, session)
    figures = StreamFigures(0, 0.0, 0.0)
    for event in run_turn(session, backend, TurnOptions(sampling=sampling, stop_on_final=False)):
        printer.handle(event)
        if isinstance(event, TurnStats):
            stats = event.stats
            figures = StreamFigures(stats.generated_tokens, stats.ttft_s, stats.first_to_last_tokens_per_s)
    del session.history[1:]
    del session.turns[:]
    return figures


def compare_remote(backend: RemoteBackend, tokens: int = 256, runs: int = 3, seed: int = 7) -> RemoteComparison:
    """Alternate raw and pipeline runs against the connected ``backend`` and return the medians.

    Raises:
        EngineError: when the engine fails during the runs.
    """
    from harmony_chat.harmony.vocab import load_encoding

    if runs < 1:
        raise EngineError("the remote benchmark needs at least one run")
    info = backend.info
    session = ChatSession(load_encoding())
    session.add_user(BENCH_PROMPT)
    prompt = session.render(max_new_tokens=tokens).tokens
    sampling = SamplingParams(temperature=1.0, seed=seed, max_tokens=tokens, ignore_eos=True)
    raw_stream(backend, prompt, sampling)  # warm-up: the prompt lands in the engine's prefix cache
    raws: list[StreamFigures] = []
    pipelines: list[StreamFigures] = []
    for _ in range(runs):
        raws.append(raw_stream(backend, prompt, sampling))
        pipelines.append(pipeline_stream(backend, session, sampling))
    return RemoteComparison(
        info.backend, info.host or "", info.name, len(prompt), tokens, runs, _median(raws), _median(pipelines)
    )


def _median(figures: list[StreamFigures]) -> StreamFigures:
    return StreamFigures(
        int(statistics.median(f.tokens for f in figures)),
        statistics.median(f.ttft_s for f in figures),
        statistics.median(f.tokens_per_s for f in figures),
    )


def print_remote_report(comparison: RemoteComparison, out: IO[str], as_json: bool) -> None:
    """Print the comparison as a table, or as one JSON object."""
    if as_json:
        print(json.dumps(comparison.as_dict()), file=out)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    title = f"harmony-chat bench --url: {comparison.model} on {comparison.engine} @ {comparison.host}"
    table = Table(title=Text(visible(title)))  # the engine's words are text, never markup or escapes
    for column in ("stream", "tokens", "time to first token", "tokens/s"):
        table.add_column(column, justify="right" if column != "stream" else "left")
    for label, figures in (("engine, raw token ids", comparison.raw), ("harmony-chat pipeline", comparison.pipeline)):
        table.add_row(label, str(figures.tokens), f"{figures.ttft_s * 1000:.0f} ms", f"{figures.tokens_per_s:.1f}")
    table.caption = f"pipeline / raw: {comparison.ratio:.1%} (medians of {comparison.runs} runs)"
    Console(file=out, width=100).print(table)
