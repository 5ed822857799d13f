"""What reasoning summaries cost: the extra time per turn, measured, and estimated for gpt-oss-20b.

The five-turn chat's questions are asked twice on one loaded model, greedily: in hidden mode and
in summary mode. Greedy decoding makes both give the same answers (the summary pauses the turn,
which resumes unchanged), so the difference of the two turns' wall times is what the summary adds.
A summary evaluates only its request (the conversation and the analysis come from the KV cache),
generates its own tokens, and the turn re-evaluates one token when it resumes; at a model's
speeds that is :func:`summary_seconds`, which the report checks against the measured time and
then applies to gpt-oss-20b.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.bench.chat_bench import USER_TURNS
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.events import ReasoningSummary
from harmony_chat.chat.summary import Summarizer, summary_prompt
from harmony_chat.harmony.session import ChatSession

TYPICAL_SUMMARY_TOKENS = 60
"""About what gpt-oss writes for a one-to-three-sentence summary (the pocket model's learned ones are shorter)."""
GPT_OSS_20B_DECODE_SPEEDS = (10.0, 50.0, 200.0)
"""Decode speeds of gpt-oss-20b the estimate is given for: from a laptop CPU to a fast GPU."""
PROMPT_TO_DECODE = 10.0
"""Prompt processing taken as this many times the decode speed (where it is not measured)."""


def summary_seconds(request_tokens: int, summary_tokens: float, prompt_tps: float, decode_tps: float) -> float:
    """Seconds a summary adds to a turn: its request evaluated, its tokens generated, one token at resume."""
    if prompt_tps <= 0 or decode_tps <= 0:
        return 0.0
    return (request_tokens + 1) / prompt_tps + summary_tokens / decode_tps


@dataclass(frozen=True, slots=True)
class SummaryCost:
    """Medians over the chat's turns in summary mode, against the same turns in hidden mode."""

    turns: int
    summaries: int
    """Summaries written over the turns (one per analysis)."""
    extra_turn_s: float
    """How much longer a turn took in summary mode (wall time)."""
    summary_s: float
    """The summary generation's own time (the turn waited this long)."""
    request_tokens: int
    """Prompt tokens a summary evaluated: its request (the rest was in the KV cache)."""
    reused_tokens: int
    """Prompt tokens a summary took from the KV cache (the conversation and the analysis)."""
    summary_tokens: float
    """Tokens a summary generated on this model."""
    failed: int
    """Summaries that showed nothing (an untrained model writes no clean summary)."""

    def estimate_s(self, prompt_tps: float, decode_tps: float, summary_tokens: float | None = None) -> float:
        """The extra seconds per turn at these speeds (this model's summary length unless given)."""
        tokens = self.summary_tokens if summary_tokens is None else summary_tokens
        return summary_seconds(self.request_tokens, tokens, prompt_tps, decode_tps)

    def as_dict(self, prompt_tps: float, decode_tps: float) -> dict[str, object]:
        """The figures, the estimate from this model's speeds, and the estimates for gpt-oss-20b."""
        return {
            "turns": self.turns,
            "summaries": self.summaries,
            "extra_turn_s": round(self.extra_turn_s, 6),
            "summary_s": round(self.summary_s, 6),
            "request_tokens": self.request_tokens,
            "reused_tokens": self.reused_tokens,
            "summary_tokens": self.summary_tokens,
            "failed": self.failed,
            "estimated_s": round(self.estimate_s(prompt_tps, decode_tps), 6),
            "gpt_oss_20b": [
                {
                    "decode_tokens_per_s": speed,
                    "prompt_tokens_per_s": speed * PROMPT_TO_DECODE,
                    "summary_tokens": TYPICAL_SUMMARY_TOKENS,
                    "extra_turn_s": round(self.estimate_s(speed * PROMPT_TO_DECODE, speed, TYPICAL_SUMMARY_TOKENS), 3),
                }
                for speed in GPT_OSS_20B_DECODE_SPEEDS
            ],
        }


def _chat(backend: LlamaCppBackend, encoding: Any, tokens: int, summarizer: Summarizer | None) -> list[Any]:
    """Run the five-turn chat; return, per turn, (wall seconds, its summaries)."""
    backend.llama.reset()
    session = ChatSession(encoding)
    sampling = SamplingParams(temperature=0.0, max_tokens=tokens)
    conversation = ChatConversation(session, backend, sampling=sampling, summarizer=summarizer, raw_tokens=False)
    turns = []
    for text in USER_TURNS:
        started = time.perf_counter()
        events = list(conversation.send(text))
        seconds = time.perf_counter() - started
        turns.append((seconds, [event for event in events if isinstance(event, ReasoningSummary)]))
    return turns


def bench_summaries(backend: LlamaCppBackend, encoding: Any, tokens: int) -> SummaryCost:
    """Measure the summary's extra time per turn on ``backend`` (``tokens`` per answer at most)."""
    hidden = _chat(backend, encoding, tokens, None)
    summarized = _chat(backend, encoding, tokens, Summarizer(encoding))
    summaries = [summary for _, found in summarized for summary in found]
    figures = [summary.stats for summary in summaries]
    return SummaryCost(
        turns=len(USER_TURNS),
        summaries=len(summaries),
        extra_turn_s=statistics.median(ours[0] - theirs[0] for ours, theirs in zip(summarized, hidden, strict=True)),
        summary_s=statistics.median(summary.seconds for summary in summaries) if summaries else 0.0,
        request_tokens=int(statistics.median(stats.prompt_tokens_evaluated for stats in figures))
        if figures
        else len(summary_prompt(encoding, [])) - 1,
        reused_tokens=int(statistics.median(stats.prompt_tokens_reused for stats in figures)) if figures else 0,
        summary_tokens=statistics.median(stats.generated_tokens for stats in figures) if figures else 0.0,
        failed=sum(1 for summary in summaries if summary.text is None),
    )
