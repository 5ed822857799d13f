"""A harmony message's plain text: the one helper every layer uses to read it.

It lives in the format library, the lowest layer, so the decoder, the conversation core, the history
store and the front ends read a message the same way (text parts joined; parts without text, none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai_harmony import Message


def message_text(message: Message) -> str:
    """The plain text of a harmony message: its text parts, joined."""
    return "".join(getattr(part, "text", "") for part in message.content)
