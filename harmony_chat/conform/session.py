"""One audit's probes and their replies: each named request is sent once, whichever checks read it.

Checks share replies (the leak checks read the answers the reasoning checks asked for), so the
session keeps every reply by probe name. It also knows when an API is missing altogether, so
every check of that API says "not offered" with the one reply that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harmony_chat.conform.probes import CHAT, ProbeBook
from harmony_chat.conform.prompts import Prompts
from harmony_chat.conform.transport import Probe, Reply, Transport

MISSING_ROUTE = (404, 405, 501)
"""Statuses that, with no OpenAI error naming a parameter or the model, mean the endpoint is not there."""


@dataclass
class ProbeSession:
    """The transport, the probe book, the replies so far, and the run's settings.

    Args:
        transport: where probes go.
        model: the model name every request carries.
        prompts: what the probes say.
        samples: how many times the effort check asks at each effort.
    """

    transport: Transport
    model: str
    prompts: Prompts = field(default_factory=Prompts)
    samples: int = 3
    replies: dict[str, Reply] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.book = ProbeBook(self.model, self.prompts)

    def reply(self, probe: Probe) -> Reply:
        """The reply to ``probe``, sent on first use."""
        if probe.name not in self.replies:
            self.replies[probe.name] = self.transport.send(probe)
        return self.replies[probe.name]

    def missing_endpoint(self, path: str) -> Reply | None:
        """The reply that shows ``path`` is not served (None when it is, or when that cannot be told)."""
        probe = self.book.chat_plain() if path == CHAT else self.book.responses_plain()
        reply = self.reply(probe)
        if reply.status not in MISSING_ROUTE:
            return None
        error = reply.data.get("error") if isinstance(reply.data, dict) else None
        if isinstance(error, dict) and (error.get("param") or "model" in str(error.get("message", "")).lower()):
            return None  # the route is there; it refused the request (wrong model name, a parameter)
        return reply
