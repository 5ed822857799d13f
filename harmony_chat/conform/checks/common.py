"""What the checks share: turning a reply that is not a plain success into the right outcome."""

from __future__ import annotations

from harmony_chat.conform.result import Outcome, Status
from harmony_chat.conform.transport import Reply


def unanswered(reply: Reply, *, refused: Status = Status.FAIL, what: str = "the request") -> Outcome | None:
    """None for a 2xx reply read whole; else the outcome that says why there is nothing to judge.

    A broken connection or a timeout is inconclusive; a 5xx fails (the server broke on a valid
    request); a 4xx is ``refused`` (a failure unless the check says the server may decline, as
    with tools a server was not started with).
    """
    if reply.failure:
        return Outcome.inconclusive(reply.summary())
    if 200 <= reply.status < 300:
        return None
    if reply.status >= 500:
        return Outcome.failed(f"{reply.summary()}: the server broke on {what}")
    verb = "refused" if refused is Status.FAIL else "declined"
    return Outcome(refused, f"{reply.summary()}: the server {verb} {what}")


def field_note(name: str) -> str:
    """Whose convention a reasoning field name is."""
    return {
        "reasoning": "the guide's name (OpenRouter's)",
        "reasoning_content": "DeepSeek's name, used by llama.cpp and SGLang",
        "thinking": "Ollama's native-API and Anthropic's name",
    }.get(name, "not a known name")
