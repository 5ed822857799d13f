"""The chain-of-thought rule, black-box: whether earlier reasoning counts in the next prompt.

The same conversation goes twice, with the earlier turn's reasoning sent back and without it, and
the server's own prompt count (``usage.prompt_tokens``, ``usage.input_tokens``) tells whether the
reasoning reached the prompt. After a final answer it must not (equal counts); inside an
unfinished tool loop it must (more tokens with it).
"""

from __future__ import annotations

from harmony_chat.conform import guide
from harmony_chat.conform.checks.common import unanswered
from harmony_chat.conform.probes import REASONING_FIELDS
from harmony_chat.conform.readers import prompt_tokens
from harmony_chat.conform.result import Check, Outcome, Status
from harmony_chat.conform.session import ProbeSession
from harmony_chat.conform.transport import Reply


def _counts(with_it: Reply, without: Reply) -> tuple[int, int] | Outcome:
    """Both prompt counts, or the outcome that says why they cannot be compared."""
    for reply in (with_it, without):
        if (outcome := unanswered(reply, what="reasoning sent back")) is not None:
            return outcome
    counted = prompt_tokens(with_it), prompt_tokens(without)
    if counted[0] is None or counted[1] is None:
        return Outcome.not_offered(f"{with_it.probe}: the reply reports no usage.prompt_tokens (nothing to compare)")
    return counted[0], counted[1]


def _dropped(pairs: list[tuple[str, Reply, Reply]], unit: str) -> Outcome:
    """Equal counts for every way of sending the reasoning back (the first pair is the guide's field)."""
    kept: list[str] = []
    equal: list[str] = []
    for label, with_it, without in pairs:
        counted = _counts(with_it, without)
        if isinstance(counted, Outcome):
            if label == pairs[0][0]:
                return counted
            continue  # a deviating field name the server refuses: nothing kept through it
        if counted[0] != counted[1]:
            kept.append(f"sent as {label}: {unit} {counted[0]} vs {counted[1]} without ({counted[0] - counted[1]:+d})")
        else:
            equal.append(f"{label}: {counted[0]} = {counted[1]}")
    if kept:
        return Outcome.failed("reasoning before a final answer stays in the prompt; " + "; ".join(kept))
    return Outcome.passed(f"{unit} equal with and without the earlier reasoning (" + "; ".join(equal) + ")")


def _kept(first: tuple[str, Reply, Reply], others: list[tuple[str, Reply, Reply]], unit: str) -> Outcome:
    """More tokens with the reasoning than without; if not, say which other field name the server reads."""
    label, with_it, without = first
    counted = _counts(with_it, without)
    if isinstance(counted, Outcome):
        return counted
    if counted[0] > counted[1]:
        return Outcome.passed(f"{unit} {counted[0]} with the reasoning before the call vs {counted[1]} without "
                              f"({counted[0] - counted[1]:+d})")  # fmt: skip
    evidence = f"the reasoning before an unanswered call is dropped: {unit} {counted[0]} with it = {counted[1]} without"
    read: list[str] = []
    for other, other_with, other_without in others:
        other_counted = _counts(other_with, other_without)
        if not isinstance(other_counted, Outcome) and other_counted[0] > other_counted[1]:
            read.append(f"sent as {other} it counts ({other_counted[0] - other_counted[1]:+d})")
    if read:
        evidence += f" (as {label}); " + "; ".join(read)
    return Outcome.failed(evidence)


def chat_dropped(session: ProbeSession) -> Outcome:
    """After a final answer, the earlier reasoning leaves the prompt (whatever field it came back in)."""
    book = session.book
    without = session.reply(book.chat_after_final(None))
    pairs = [(name, session.reply(book.chat_after_final(name)), without) for name in REASONING_FIELDS]
    return _dropped(pairs, "prompt_tokens")


def chat_kept(session: ProbeSession) -> Outcome:
    """Inside a tool loop, the reasoning before the call stays in the prompt."""
    book = session.book
    without = session.reply(book.chat_tool_loop(None))
    first = ("reasoning", session.reply(book.chat_tool_loop("reasoning")), without)
    outcome = _kept(first, [], "prompt_tokens")
    if outcome.status is not Status.FAIL:
        return outcome
    others = [(name, session.reply(book.chat_tool_loop(name)), without) for name in REASONING_FIELDS[1:]]
    return _kept(first, others, "prompt_tokens")  # which name the server reads, as evidence


def responses_dropped(session: ProbeSession) -> Outcome:
    """After a final answer, a reasoning item sent back leaves the prompt."""
    book = session.book
    with_it, without = session.reply(book.responses_after_final(True)), session.reply(book.responses_after_final(False))
    return _dropped([("a reasoning item", with_it, without)], "input_tokens")


def responses_kept(session: ProbeSession) -> Outcome:
    """Inside a tool loop, a reasoning item before the call stays in the prompt."""
    book = session.book
    with_it, without = session.reply(book.responses_tool_loop(True)), session.reply(book.responses_tool_loop(False))
    return _kept(("a reasoning item", with_it, without), [], "input_tokens")


CHECKS = (
    Check("chat.cot.dropped", "CoT dropped after a final answer", "chat", guide.COT_DROPPED_AFTER_FINAL, chat_dropped),
    Check("chat.cot.kept", "CoT kept inside a tool loop", "chat", guide.COT_KEPT_IN_TOOL_LOOP, chat_kept),
    Check(
        "responses.cot.dropped", "CoT dropped after a final answer", "responses",
        guide.COT_DROPPED_AFTER_FINAL, responses_dropped,
    ),
    Check(
        "responses.cot.kept", "CoT kept inside a tool loop", "responses", guide.COT_KEPT_IN_TOOL_LOOP, responses_kept
    ),
)  # fmt: skip
