"""``harmony-chat bench``: run the benchmarks on one loaded model and report them."""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.bench.chat_bench import TurnFigures, harmony_chat_turns, template_turns
from harmony_chat.bench.decoder_bench import DecoderResult, bench_decoder
from harmony_chat.bench.grammar_bench import GrammarCost, grammar_cost
from harmony_chat.bench.guard_bench import GuardResult, bench_guard
from harmony_chat.bench.pipeline_bench import DecodeComparison, backend_encoding, compare_decode
from harmony_chat.bench.summary_bench import PROMPT_TO_DECODE, TYPICAL_SUMMARY_TOKENS, SummaryCost, bench_summaries
from harmony_chat.bench.token_costs import StructuredComparison, TokenCosts, compare_structured, token_costs
from harmony_chat.text_safety import visible


@dataclass(frozen=True, slots=True)
class BenchSettings:
    """What to benchmark with."""

    model: Path
    tokens: int = 256
    runs: int = 3
    ctx: int = 4096
    gpu_layers: int = 0
    threads: int | None = None
    chat_tokens: int = 64
    """Tokens generated per turn of the five-turn chat."""
    long_tokens: int = 4096
    """The long answers of the per-token breakdown and of the structured-answer comparison."""

    @property
    def model_context(self) -> int:
        """The context the model is loaded with: ``ctx``, or more when the long answers need it."""
        return max(self.ctx, self.long_tokens + LONG_ANSWER_ROOM)


LONG_ANSWER_ROOM = 512
"""Context beside a long answer (its prompt)."""


@dataclass(frozen=True, slots=True)
class BenchReport:
    """Every figure of one run."""

    settings: BenchSettings
    model_name: str
    device: str
    machine: str
    decoder: DecoderResult
    guard: GuardResult
    decode: DecodeComparison
    chat: list[TurnFigures]
    template_chat: list[TurnFigures] | None
    """``create_chat_completion``'s turns, None when the model carries no chat template."""
    grammar: GrammarCost
    summaries: SummaryCost
    token_costs: list[TokenCosts]
    """Where each token's time goes: short and long answers, with and without a response format."""
    structured: StructuredComparison

    def as_dict(self) -> dict[str, object]:
        """Return the report as plain data (``--json``)."""
        return {
            "model": self.model_name,
            "device": self.device,
            "machine": self.machine,
            "settings": {**asdict(self.settings), "model": str(self.settings.model)},
            "decoder_us_per_token": round(self.decoder.microseconds_per_token, 3),
            "decoder_tokens": self.decoder.tokens,
            "prompt_tokens": self.decode.prompt_tokens,
            "prompt_tokens_per_s": round(self.decode.prompt_tokens_per_s, 2),
            "bare_decode_tokens_per_s": round(self.decode.bare_tokens_per_s, 2),
            "pipeline_decode_tokens_per_s": round(self.decode.pipeline_tokens_per_s, 2),
            "pipeline_ratio": round(self.decode.ratio, 4),
            "content_bare_decode_tokens_per_s": round(self.decode.content_bare_tokens_per_s, 2),
            "content_pipeline_decode_tokens_per_s": round(self.decode.content_pipeline_tokens_per_s, 2),
            "content_pipeline_ratio": round(self.decode.content_ratio, 4),
            "structure_guard_us_per_token": round(self.guard.microseconds_per_token, 3),
            "structure_guard_header_us_per_token": round(self.guard.header_microseconds_per_token, 3),
            "chat_tokens_per_turn": self.settings.chat_tokens,
            "chat_turns": [_turn(figure) for figure in self.chat],
            "template_chat_turns": [_turn(figure) for figure in self.template_chat] if self.template_chat else None,
            "grammar_free_ms_per_token": round(self.grammar.free_ms_per_token, 3),
            "grammar_constrained_ms_per_token": round(self.grammar.constrained_ms_per_token, 3),
            "grammar_extra_ms_per_token": round(self.grammar.extra_ms_per_token, 3),
            "summary": self.summaries.as_dict(self.decode.prompt_tokens_per_s, self.decode.bare_tokens_per_s),
            "token_costs": [costs.as_dict() for costs in self.token_costs],
            "structured_tokens": self.structured.tokens,
            "structured_free_tokens_per_s": round(self.structured.free_tokens_per_s, 2),
            "structured_tokens_per_s": round(self.structured.structured_tokens_per_s, 2),
            "structured_ratio": round(self.structured.ratio, 4),
        }


def _turn(figure: TurnFigures) -> dict[str, float | int]:
    return {
        "turn": figure.turn,
        "prompt_tokens": figure.prompt_tokens,
        "evaluated": figure.evaluated,
        "prefilled_before": figure.prefilled,
        "reused_share": round(figure.reused_share, 4),
        "ttft_s": round(figure.ttft_s, 6),
    }


BENCH_STEPS = (
    "loading the model",
    "the stream decoder",
    "the structure guard",
    "decoding speed",
    "chat turns",
    "chat turns through the model's template",
    "grammar cost",
    "reasoning summaries",
    "per-token cost",
    "structured output",
)
"""What ``run_bench`` measures, in order (the progress lines name them)."""


def run_bench(settings: BenchSettings, progress: Callable[[str], None] = lambda line: None) -> BenchReport:
    """Load the model once and run every benchmark on it, saying each step on ``progress`` as it starts."""
    steps = iter(enumerate(BENCH_STEPS, 1))

    def step() -> None:
        number, name = next(steps)
        progress(f"bench {number}/{len(BENCH_STEPS)}: {name}")

    step()
    backend = LlamaCppBackend(
        settings.model, context_size=settings.model_context, gpu_layers=settings.gpu_layers, threads=settings.threads
    )
    info = backend.load()
    try:
        encoding = backend_encoding(backend)
        step()
        decoder = bench_decoder(encoding)
        step()
        guard = bench_guard(encoding)
        step()
        decode = compare_decode(backend, tokens=settings.tokens, runs=settings.runs)
        step()
        chat = harmony_chat_turns(backend, encoding, settings.chat_tokens)
        step()
        template_chat = template_turns(backend, settings.chat_tokens)
        step()
        grammar = grammar_cost(backend, encoding, runs=settings.runs)
        step()
        summaries = bench_summaries(backend, encoding, settings.chat_tokens)
        step()
        costs = [
            token_costs(backend, encoding, length, structured)
            for length in (settings.tokens, settings.long_tokens)
            for structured in (False, True)
        ]
        step()
        structured = compare_structured(backend, encoding, settings.long_tokens, settings.runs)
    finally:
        backend.close()
    machine = f"{platform.machine()} {platform.processor() or platform.system()}".strip()
    return BenchReport(
        settings,
        info.name,
        info.device,
        machine,
        decoder,
        guard,
        decode,
        chat,
        template_chat,
        grammar,
        summaries,
        costs,
        structured,
    )


def print_report(report: BenchReport, out: IO[str], as_json: bool) -> None:
    """Print a rich table, or one JSON object."""
    if as_json:
        print(json.dumps(report.as_dict()), file=out)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    title = f"harmony-chat bench: {report.model_name} on {report.device}"
    table = Table(title=Text(visible(title)))  # the model file's words are text, never markup or escapes
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("note")
    data = report.as_dict()
    table.add_row("prompt processing", f"{data['prompt_tokens_per_s']} tok/s", f"{data['prompt_tokens']} tokens")
    table.add_row("decode, bare Llama.generate", f"{data['bare_decode_tokens_per_s']} tok/s", "a whole turn")
    table.add_row(
        "decode, harmony-chat pipeline", f"{data['pipeline_decode_tokens_per_s']} tok/s", "ask's turn, headers included"
    )
    table.add_row("pipeline / bare", f"{data['pipeline_ratio']:.1%}", "target >= 98%")
    table.add_row("content, bare", f"{data['content_bare_decode_tokens_per_s']} tok/s", "inside a final message")
    table.add_row("content, pipeline", f"{data['content_pipeline_decode_tokens_per_s']} tok/s", "the same, no header")
    table.add_row("content, pipeline / bare", f"{data['content_pipeline_ratio']:.1%}", "target >= 98%")
    table.caption = f"tok/s: medians of {report.settings.runs} runs; ratios: the median of the pairs' (side by side)"
    table.add_row("decoder cost", f"{data['decoder_us_per_token']} µs/token", "target < 20 µs")
    table.add_row(
        "harmony's grammar, every token",
        f"{data['structure_guard_us_per_token']} µs/token",
        "the structure guard, every token",
    )
    table.add_row(
        "harmony's grammar, header tokens",
        f"{data['structure_guard_header_us_per_token']} µs/token",
        "candidates cut to the allowed words",
    )
    table.add_row(
        "tool arguments under the JSON grammar",
        f"+{data['grammar_extra_ms_per_token']} ms/token",
        f"{data['grammar_constrained_ms_per_token']} vs {data['grammar_free_ms_per_token']} ms free",
    )
    console = Console(file=out, width=max(Console(file=out).width, 100))
    console.print(table)
    chat = Table(title=f"five-turn chat, {report.settings.chat_tokens} tokens per turn")
    for column in (
        "turn",
        "prompt",
        "evaluated",
        "reused",
        "TTFT",
        "cc prompt",
        "cc evaluated",
        "cc reused",
        "cc TTFT",
    ):
        chat.add_column(column, justify="right")
    template = report.template_chat or []
    for index, ours in enumerate(report.chat):
        theirs = template[index] if index < len(template) else None
        row = [
            str(ours.turn),
            str(ours.prompt_tokens),
            str(ours.evaluated),
            f"{ours.reused_share:.0%}",
            f"{ours.ttft_s * 1000:.1f} ms",
        ]
        row += (
            [
                str(theirs.prompt_tokens),
                str(theirs.evaluated),
                f"{theirs.reused_share:.0%}",
                f"{theirs.ttft_s * 1000:.1f} ms",
            ]
            if theirs
            else ["-"] * 4
        )
        chat.add_row(*row)
    console.print(chat)
    console.print("cc = llama-cpp-python's create_chat_completion with the model's chat template")
    if report.template_chat is None:
        console.print("The model carries no chat template, so create_chat_completion was not compared.")
    _print_summary_cost(console, data["summary"])  # type: ignore[arg-type]
    _print_token_costs(console, report)


def _print_token_costs(console: Any, report: BenchReport) -> None:
    """Where each token's time goes, and a structured answer's speed against an unstructured one."""
    from rich.table import Table

    table = Table(title="per-token cost, µs per generated token (a final answer, one run each)")
    for column in ("tokens", "format", "tok/s", "structure", "JSON guard", "decoder", "events", "hand-over"):
        table.add_column(column, justify="right")
    for costs in report.token_costs:
        table.add_row(
            str(costs.tokens),
            "json_schema" if costs.response_format else "text",
            f"{costs.tokens_per_s:.1f}",
            f"{costs.structure_mask_us:.1f}",
            f"{costs.json_guard_us:.1f}" + (f" ({costs.resampled} resampled)" if costs.response_format else ""),
            f"{costs.decoder_us:.1f}",
            f"{costs.event_dispatch_us:.1f}",
            f"{costs.sampling_handover_us:.1f}",
        )
    console.print(table)
    structured = report.structured
    console.print(
        f"{structured.tokens}-token answer under a response format: {structured.structured_tokens_per_s:.1f} tok/s "
        f"against {structured.free_tokens_per_s:.1f} without, {structured.ratio:.1%} (target >= 95%, "
        f"the median of {structured.runs} pairs of runs)"
    )


def _print_summary_cost(console: Any, cost: dict[str, Any]) -> None:
    """The reasoning summary's cost per turn: measured here, estimated from speeds, and for gpt-oss-20b."""
    from rich.table import Table

    table = Table(title="reasoning summaries (summary mode against hidden mode, same chat, greedy)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("note")
    table.add_row("extra time per turn", f"{cost['extra_turn_s'] * 1000:.1f} ms", f"median of {cost['turns']} turns")
    table.add_row("summary generation", f"{cost['summary_s'] * 1000:.1f} ms", "the turn waits this long")
    table.add_row("prompt evaluated", f"{cost['request_tokens']} tokens", "the summary request only")
    table.add_row("prompt reused", f"{cost['reused_tokens']} tokens", "conversation and analysis, from the KV cache")
    shown = f"{cost['summaries'] - cost['failed']} of {cost['summaries']} summaries clean enough to show"
    table.add_row("summary tokens", f"{cost['summary_tokens']}", shown)
    table.add_row("estimate from this model's speeds", f"{cost['estimated_s'] * 1000:.1f} ms", "check of the formula")
    for row in cost["gpt_oss_20b"]:
        note = f"{row['summary_tokens']}-token summary, prompt at {PROMPT_TO_DECODE:g}x decode speed"
        table.add_row(f"gpt-oss-20b at {row['decode_tokens_per_s']:g} tok/s", f"{row['extra_turn_s']:.2f} s", note)
    console.print(table)
    console.print(
        f"Estimates: (request + 1) / prompt tok/s + summary tokens / decode tok/s; gpt-oss writes about "
        f"{TYPICAL_SUMMARY_TOKENS} tokens for one to three sentences."
    )
