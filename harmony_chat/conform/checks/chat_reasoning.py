"""Reasoning on Chat Completions: the field it comes in, streamed or not, its exclusion, sending it back."""

from __future__ import annotations

from harmony_chat.conform import guide
from harmony_chat.conform.checks.common import field_note, unanswered
from harmony_chat.conform.readers import assemble_chat_stream, chat_message, markup_in, quote, reasoning_by_field
from harmony_chat.conform.result import Check, Outcome
from harmony_chat.conform.session import ProbeSession


def _verdict(found: dict[str, str], content: str, where: str) -> Outcome:
    """Pass when ``reasoning`` carries it; fail naming the field it came in otherwise."""
    if "reasoning" in found:
        others = [name for name in found if name != "reasoning"]
        mirror = f"; also mirrored as {', '.join(others)}" if others else ""
        return Outcome.passed(
            f"{where}reasoning = {quote(found['reasoning'])} ({len(found['reasoning'])} chars){mirror}"
        )
    if found:
        name, text = next(iter(found.items()))
        return Outcome.failed(
            f"the reasoning came as {where}{name} ({field_note(name)}), not {where}reasoning: {quote(text)}"
        )
    leaked = markup_in(content)
    if leaked:
        return Outcome.failed(
            f"no reasoning field; harmony text is in content instead ({', '.join(leaked)}): {quote(content)}"
        )
    return Outcome.failed(f"no reasoning in any field ({', '.join(('reasoning', 'reasoning_content', 'thinking'))})")


def reasoning_field(session: ProbeSession) -> Outcome:
    """``message.reasoning`` holds the analysis."""
    reply = session.reply(session.book.chat_plain())
    if (outcome := unanswered(reply)) is not None:
        return outcome
    message = chat_message(reply)
    if message is None:
        return Outcome.failed(f"{reply.probe}: no choices[0].message in the reply")
    content = message.get("content") if isinstance(message.get("content"), str) else ""
    return _verdict(reasoning_by_field(message), str(content), "message.")


def reasoning_delta(session: ProbeSession) -> Outcome:
    """Streamed deltas carry the analysis as ``delta.reasoning``."""
    reply = session.reply(session.book.chat_plain(stream=True))
    if (outcome := unanswered(reply)) is not None:
        return outcome
    if reply.events is None:
        return Outcome.failed(f"{reply.probe}: a stream was asked for, but one JSON body came back")
    stream = assemble_chat_stream(reply.events)
    if stream.error:
        return Outcome.failed(f"{reply.probe}: the stream sent an error: {stream.error}")
    outcome = _verdict(stream.reasoning, stream.content, "delta.")
    if outcome.status == "pass":
        return Outcome.passed(f"{outcome.evidence}, over {stream.chunks} chunks")
    return outcome


def reasoning_exclude(session: ProbeSession) -> Outcome:
    """``reasoning: {exclude: true}`` removes the reasoning (and only the reasoning)."""
    plain = session.reply(session.book.chat_plain())
    plain_message = chat_message(plain) if plain.ok else None
    if plain_message is None or not reasoning_by_field(plain_message):
        return Outcome.inconclusive("the server sends no reasoning even without exclude: nothing to remove")
    reply = session.reply(session.book.chat_exclude())
    if (outcome := unanswered(reply, what="reasoning: {exclude: true}")) is not None:
        return outcome
    message = chat_message(reply)
    if message is None:
        return Outcome.failed(f"{reply.probe}: no choices[0].message in the reply")
    found = reasoning_by_field(message)
    if found:
        name, text = next(iter(found.items()))
        return Outcome.failed(
            f"with reasoning: {{exclude: true}} the reasoning still came as message.{name}: {quote(text)}"
        )
    content = message.get("content")
    if not isinstance(content, str) or not content:
        return Outcome.failed("with reasoning: {exclude: true} the answer went too (content empty)")
    return Outcome.passed(f"no reasoning field; content = {quote(content)}")


def reasoning_input(session: ProbeSession) -> Outcome:
    """Assistant messages may carry their ``reasoning`` back (after an answer and before a call)."""
    replies = [
        session.reply(session.book.chat_after_final("reasoning")),
        session.reply(session.book.chat_tool_loop("reasoning")),
    ]
    problems = [outcome for reply in replies if (outcome := unanswered(reply, what="reasoning sent back")) is not None]
    if problems:
        return problems[0]
    return Outcome.passed(
        "accepted on an answered turn and on a tool call (" + ", ".join(f"HTTP {r.status}" for r in replies) + ")"
    )


CHECKS = (
    Check("chat.reasoning", "reasoning in message.reasoning", "chat", guide.CHAT_REASONING_FIELD, reasoning_field),
    Check("chat.reasoning.stream", "reasoning in delta.reasoning", "chat", guide.CHAT_REASONING_DELTA, reasoning_delta),
    Check(
        "chat.reasoning.exclude", "reasoning: {exclude: true} removes it", "chat",
        guide.CHAT_REASONING_EXCLUDE, reasoning_exclude,
    ),
    Check(
        "chat.reasoning.input", "reasoning sent back is accepted", "chat", guide.CHAT_REASONING_INPUT, reasoning_input
    ),
)  # fmt: skip
