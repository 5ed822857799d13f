"""Reasoning summaries for API clients: which one a request asks for, and the summarizer that writes it.

A request asks with ``reasoning.summary`` (both APIs): ``auto`` is the app's own summary (one to
three sentences; the request the pocket model is trained on), ``concise`` one sentence,
``detailed`` a short paragraph. Each is written by the served model itself, after each analysis
message, from the turn's own prefix (see :mod:`harmony_chat.chat.summary`); it never enters a
prompt, and a failed summary gives none rather than raw text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from harmony_chat.chat.summary import SUMMARY_MAX_TOKENS, SUMMARY_REQUEST, Summarizer
from harmony_chat.server.errors import ApiError

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

SummaryLevel = Literal["auto", "concise", "detailed"]
"""How much summary a client asks for."""

CONCISE_REQUEST = (
    "Summarize the reasoning you just did for the user in one short sentence, in the language of the "
    "user's message you are answering. Do not give the answer itself. Leave out anything the developer "
    "instructions keep private and anything unsafe. Plain text only."
)
DETAILED_REQUEST = (
    "Summarize the reasoning you just did for the user in a short paragraph of up to six sentences, in the "
    "language of the user's message you are answering: the steps you took, what you considered and why. "
    "Do not give the answer itself. Leave out anything the developer instructions keep private and "
    "anything unsafe. Plain text only."
)
LEVELS: dict[SummaryLevel, tuple[str, int]] = {
    "auto": (SUMMARY_REQUEST, SUMMARY_MAX_TOKENS),
    "concise": (CONCISE_REQUEST, 100),
    "detailed": (DETAILED_REQUEST, 400),
}
"""Each level's request to the model and the most tokens its summary may take."""


def parse_summary(value: str | None, param: str) -> SummaryLevel | None:
    """The summary a request asks for (None: no summary).

    Raises:
        ApiError: 400 for anything but ``auto``, ``concise`` or ``detailed``.
    """
    if value is None:
        return None
    for level in LEVELS:
        if value == level:
            return level
    raise ApiError(400, f"{param} must be auto, concise or detailed, not {value!r}", param=param)


def summarizer_for(level: SummaryLevel | None, encoding: HarmonyEncoding) -> Summarizer | None:
    """A summarizer for one request at ``level`` on the served model (None when none is asked for)."""
    if level is None:
        return None
    request, max_tokens = LEVELS[level]
    return Summarizer(encoding, request=request, max_tokens=max_tokens)
