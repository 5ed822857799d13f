"""Effort, statistically: the model reasons longer at high effort than at low, over ``--samples`` runs.

Each sample's reasoning is measured in reasoning tokens when the server reports them for every
sample, in characters of reasoning otherwise. The verdict uses the probability of superiority
(the share of low/high pairs where the high run reasoned longer, ties counting half): a pass
needs it at :data:`PASS_AT` or above and a higher mean; at :data:`FAIL_AT` or below with no higher
mean the effort made no difference; between the two, the runs do not settle it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from statistics import mean

from harmony_chat.conform import guide
from harmony_chat.conform.checks.common import unanswered
from harmony_chat.conform.readers import (
    any_reasoning_text,
    chat_message,
    output_items,
    reasoning_by_field,
    reasoning_tokens,
)
from harmony_chat.conform.result import Check, Outcome
from harmony_chat.conform.session import ProbeSession
from harmony_chat.conform.transport import Probe, Reply

PASS_AT = 0.75
FAIL_AT = 0.5
LEVELS = ("low", "high")


@dataclass(frozen=True, slots=True)
class Measured:
    """One sample's reasoning: its length in tokens (if reported) and characters."""

    tokens: int | None
    chars: int


def superiority(low: list[float], high: list[float]) -> float:
    """P(a high sample exceeds a low one), ties counting half."""
    pairs = [(a, b) for a in low for b in high]
    return sum(1.0 if b > a else 0.5 if b == a else 0.0 for a, b in pairs) / len(pairs)


def _measure_chat(reply: Reply) -> Measured:
    message = chat_message(reply) or {}
    return Measured(reasoning_tokens(reply), len("".join(reasoning_by_field(message).values())))


def _measure_responses(reply: Reply) -> Measured:
    return Measured(reasoning_tokens(reply), len(any_reasoning_text(output_items(reply))))


def _verdict(samples: dict[str, list[Measured]]) -> Outcome:
    every = [sample for level in LEVELS for sample in samples[level]]
    by_tokens = all(sample.tokens for sample in every)
    unit = "reasoning tokens" if by_tokens else "reasoning chars"
    values = {
        level: [float(s.tokens if by_tokens and s.tokens else s.chars) for s in samples[level]] for level in LEVELS
    }
    if not any(values["low"] + values["high"]):
        return Outcome.inconclusive("no reasoning came back at either effort, so nothing to measure")
    share = superiority(values["low"], values["high"])
    low_mean, high_mean = mean(values["low"]), mean(values["high"])
    numbers = "; ".join(
        f"{level} {', '.join(f'{v:g}' for v in values[level])} (mean {mean(values[level]):.1f})" for level in LEVELS
    )
    evidence = f"{unit}: {numbers}; P(high > low) = {share:.2f}, n = {len(values['low'])} each"
    if share >= PASS_AT and high_mean > low_mean:
        return Outcome.passed(evidence)
    if share <= FAIL_AT and high_mean <= low_mean:
        return Outcome.failed(f"effort makes no difference: {evidence}")
    return Outcome.inconclusive(f"no clear difference (more --samples may settle it): {evidence}")


def _run(session: ProbeSession, build: Callable[[str, int], Probe], measure: Callable[[Reply], Measured]) -> Outcome:
    samples: dict[str, list[Measured]] = {level: [] for level in LEVELS}
    for sample in range(session.samples):
        for level in LEVELS:
            reply = session.reply(build(level, sample))
            if (outcome := unanswered(reply, what=f"effort {level}")) is not None:
                return outcome
            samples[level].append(measure(reply))
    return _verdict(samples)


def chat_effort(session: ProbeSession) -> Outcome:
    """``reasoning_effort: low`` vs ``high``."""
    return _run(session, session.book.chat_effort, _measure_chat)


def responses_effort(session: ProbeSession) -> Outcome:
    """``reasoning: {effort: low}`` vs ``high``."""
    return _run(session, session.book.responses_effort, _measure_responses)


CHECKS = (
    Check("chat.effort", "reasoning grows from low to high effort", "chat", guide.EFFORT, chat_effort),
    Check("responses.effort", "reasoning grows from low to high effort", "responses", guide.EFFORT, responses_effort),
)
