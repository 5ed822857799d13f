"""Where generated text goes in an API response: the server's one channel decision.

Everything the server decides about a harmony channel is in :func:`output_part`, so it can follow
the app's visibility policy (``harmony_chat.harmony.visibility``) in one place once that lands:
answers and preambles are content, tool calls are tool calls, everything else (analysis, text
without a channel, unknown channels) is reasoning, which the client gets only in its reasoning
fields, never as content.
"""

from __future__ import annotations

from enum import StrEnum

from harmony_chat.harmony.header import addresses_tool


class Part(StrEnum):
    """What a message is to an API client."""

    CONTENT = "content"
    """The answer (``final``) or a preamble (``commentary`` to nobody): text the user may see."""
    TOOL_CALL = "tool_call"
    REASONING = "reasoning"
    """Raw chain of thought, or text that might be: only in ``reasoning`` fields and items."""


def output_part(channel: str | None, recipient: str | None) -> Part:
    """Classify generated text by its message's channel and recipient.

    Preambles (``commentary`` without a recipient) are content: harmony says they are meant for
    the user, and a client that shows only ``content`` would otherwise lose them.
    """
    if addresses_tool(recipient):
        return Part.TOOL_CALL
    if channel in ("final", "commentary"):
        return Part.CONTENT
    return Part.REASONING
