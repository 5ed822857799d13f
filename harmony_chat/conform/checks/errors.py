"""Errors: a bad request gets a 4xx whose body is OpenAI's error object."""

from __future__ import annotations

from collections.abc import Mapping

from harmony_chat.conform import guide
from harmony_chat.conform.readers import quote
from harmony_chat.conform.result import Check, Outcome
from harmony_chat.conform.session import ProbeSession
from harmony_chat.conform.transport import Probe, Reply


def shape_problem(data: object, text: str) -> str | None:
    """What keeps an error body from OpenAI's ``{"error": {"message": str, "type": str, ...}}`` (None: nothing)."""
    if not isinstance(data, Mapping):
        return f"the body is not JSON: {quote(text, 50)}" if text else "the body is empty"
    error = data.get("error")
    if isinstance(error, Mapping):
        missing = [key for key in ("message", "type") if not isinstance(error.get(key), str)]
        return f"error.{' and error.'.join(missing)} missing or not a string" if missing else None
    if isinstance(error, str):
        return f"error is a bare string: {quote(error, 50)}"
    if "message" in data:
        return f'a flat error object (keys {", ".join(sorted(data))}), not nested under "error"'
    return f"no error object (keys {', '.join(sorted(data)) or 'none'})"


def _judge(probe: Probe, reply: Reply) -> tuple[bool | None, str]:
    """(True: a 4xx in OpenAI's shape, False: not, None: no answer to judge) and a line of evidence."""
    short = probe.name.rsplit(".", 1)[-1]
    if reply.failure:
        return None, f"{short}: {reply.failure}"
    if not 400 <= reply.status < 500:
        verdict = "accepted" if reply.status < 300 else "a server error"
        return False, f"{short}: HTTP {reply.status} ({verdict}, not a 4xx)"
    problem = shape_problem(reply.data, reply.text)
    return problem is None, f"{short}: {reply.status}" + (f", {problem}" if problem else " ok")


def _run(session: ProbeSession, probes: list[Probe]) -> Outcome:
    judged = [_judge(probe, session.reply(probe)) for probe in probes]
    evidence = "; ".join(line for _, line in judged)
    if any(ok is False for ok, _ in judged):
        return Outcome.failed(evidence)
    if any(ok is None for ok, _ in judged):
        return Outcome.inconclusive(evidence)
    return Outcome.passed(evidence)


def chat_errors(session: ProbeSession) -> Outcome:
    """Broken JSON, no messages, an unknown role, a string temperature."""
    return _run(session, session.book.chat_errors())


def responses_errors(session: ProbeSession) -> Outcome:
    """Broken JSON, an unknown previous response, an unknown item type."""
    return _run(session, session.book.responses_errors())


CHECKS = (
    Check("chat.errors", "bad requests get 4xx in OpenAI's shape", "chat", guide.ERROR_SHAPE, chat_errors),
    Check(
        "responses.errors", "bad requests get 4xx in OpenAI's shape", "responses", guide.ERROR_SHAPE, responses_errors
    ),
)
