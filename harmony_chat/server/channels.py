"""Where generated text goes in an API response, by the app's one visibility policy.

:func:`output_part` maps :mod:`harmony_chat.harmony.visibility` onto the APIs: what the user sees
as an answer or a preamble is content, tool calls are tool calls, and everything the app shows
only in debug views (analysis, text without a channel, unknown channels) is reasoning, which the
client gets only in its reasoning fields, never as content.
"""

from __future__ import annotations

from enum import StrEnum

from harmony_chat.harmony.visibility import Display, display_of


class Part(StrEnum):
    """What a message is to an API client."""

    CONTENT = "content"
    """The answer (``final``) or a preamble (``commentary`` to nobody): text the user may see."""
    TOOL_CALL = "tool_call"
    REASONING = "reasoning"
    """Raw chain of thought, or text that might be: only in ``reasoning`` fields and items."""


def output_part(channel: str | None, recipient: str | None) -> Part:
    """Classify generated text by its message's channel and recipient.

    Preambles are content: harmony says they are meant for the user, and a client that shows
    only ``content`` would otherwise lose them.
    """
    display = display_of(channel, recipient)
    if display is Display.TOOL:
        return Part.TOOL_CALL
    if display in (Display.ANSWER, Display.PREAMBLE):
        return Part.CONTENT
    return Part.REASONING
