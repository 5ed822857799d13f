"""No leaks: the user-facing text holds no harmony markup and no analysis.

Read across the replies of the prompts that make servers leak: a plain answer (streamed too), a
tool call, structured output, long reasoning (high effort), and an answer cut off by the token
limit while the model is still reasoning.
"""

from __future__ import annotations

from dataclasses import dataclass

from harmony_chat.conform import guide
from harmony_chat.conform.readers import (
    analysis_in_answer,
    any_reasoning_text,
    assemble_chat_stream,
    chat_finish,
    chat_message,
    get,
    markup_in,
    output_items,
    output_text,
    quote,
    reasoning_by_field,
    text_of,
)
from harmony_chat.conform.result import Check, Outcome
from harmony_chat.conform.session import ProbeSession
from harmony_chat.conform.transport import Reply


@dataclass(frozen=True, slots=True)
class Said:
    """One reply's user-facing text and its reasoning (any field), for the leak checks."""

    probe: str
    answer: str
    reasoning: str
    cut_off: bool = False


def _chat_said(reply: Reply, cut_off: bool = False) -> Said | None:
    if not reply.ok:
        return None
    if reply.events is not None:
        stream = assemble_chat_stream(reply.events)
        return Said(reply.probe, stream.content, "".join(stream.reasoning.values()), cut_off)
    message = chat_message(reply)
    if message is None:
        return None
    reasoning = "".join(reasoning_by_field(message).values())
    truncated = cut_off and chat_finish(reply) == "length"
    return Said(reply.probe, text_of(message.get("content")), reasoning, truncated)


def _responses_said(reply: Reply, cut_off: bool = False) -> Said | None:
    if not reply.ok:
        return None
    items = output_items(reply)
    return Said(reply.probe, output_text(items), any_reasoning_text(items), cut_off)


def chat_replies(session: ProbeSession) -> list[Said]:
    """The Chat Completions replies of the leak-prone prompts."""
    book = session.book
    probes = [book.chat_plain(), book.chat_plain(stream=True), book.chat_tool(), book.chat_tool(stream=True)]
    probes += [book.chat_structured(), book.chat_effort("high", 0)]
    said = [_chat_said(session.reply(probe)) for probe in probes]
    said.append(_chat_said(session.reply(book.chat_cutoff()), cut_off=True))
    return [entry for entry in said if entry is not None]


def responses_replies(session: ProbeSession) -> list[Said]:
    """The Responses replies of the leak-prone prompts."""
    book = session.book
    probes = [
        book.responses_plain(),
        book.responses_tool(),
        book.responses_structured(),
        book.responses_effort("high", 0),
    ]
    said = [_responses_said(session.reply(probe)) for probe in probes]
    cutoff = session.reply(book.responses_cutoff())
    said.append(_responses_said(cutoff, cut_off=get(cutoff.data, "status") == "incomplete"))
    return [entry for entry in said if entry is not None]


def _no_markup(said: list[Said], where: str) -> Outcome:
    if not said:
        return Outcome.inconclusive("no reply to read (every leak-prone probe failed)")
    found = [
        f"{entry.probe}: {', '.join(markup)} in {quote(entry.answer)}"
        for entry in said
        if (markup := markup_in(entry.answer))
    ]
    if found:
        return Outcome.failed(f"harmony markup in {where}: " + "; ".join(found))
    return Outcome.passed(
        f"no harmony markup in {where} of {len(said)} replies (" + ", ".join(e.probe for e in said) + ")"
    )


def _no_analysis(said: list[Said], where: str) -> Outcome:
    if not said:
        return Outcome.inconclusive("no reply to read (every leak-prone probe failed)")
    leaks = [
        f"{entry.probe}: {quote(entry.answer)}" for entry in said if analysis_in_answer(entry.answer, entry.reasoning)
    ]
    cut = next((entry for entry in said if entry.cut_off), None)
    if cut is not None and cut.answer and not cut.reasoning:
        leaks.append(f"{cut.probe}: cut off while reasoning, {where} holds {quote(cut.answer)} and no reasoning came")
    if leaks:
        return Outcome.failed(f"analysis text in {where}: " + "; ".join(leaks))
    compared = [entry for entry in said if entry.reasoning]
    if not compared:
        return Outcome.inconclusive("no reply carried reasoning to compare the answers with")
    note = ""
    if cut is not None:
        note = f"; cut off while reasoning: {where} {quote(cut.answer)}, reasoning {quote(cut.reasoning, 40)}"
    return Outcome.passed(f"{len(compared)} answers never repeat their reasoning{note}")


def chat_markup(session: ProbeSession) -> Outcome:
    """No harmony tokens or header residue in ``content``."""
    return _no_markup(chat_replies(session), "content")


def chat_analysis(session: ProbeSession) -> Outcome:
    """No analysis in ``content``, even when the answer is cut off mid-reasoning."""
    return _no_analysis(chat_replies(session), "content")


def responses_markup(session: ProbeSession) -> Outcome:
    """No harmony tokens or header residue in ``output_text``."""
    return _no_markup(responses_replies(session), "output_text")


def responses_analysis(session: ProbeSession) -> Outcome:
    """No analysis in ``output_text``."""
    return _no_analysis(responses_replies(session), "output_text")


CHECKS = (
    Check("chat.leak.markup", "no harmony markup in content", "chat", guide.NO_MARKUP, chat_markup),
    Check("chat.leak.analysis", "no analysis in content", "chat", guide.NO_ANALYSIS_IN_ANSWER, chat_analysis),
    Check("responses.leak.markup", "no harmony markup in output_text", "responses", guide.NO_MARKUP, responses_markup),
    Check(
        "responses.leak.analysis", "no analysis in output_text", "responses",
        guide.NO_ANALYSIS_IN_ANSWER, responses_analysis,
    ),
)  # fmt: skip
