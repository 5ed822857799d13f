"""Token ids of the o200k_harmony vocabulary that the engine needs to know by heart.

The ids are fixed by the harmony format (see the format guide's table of special tokens);
``tests/harmony/test_tokens.py`` checks them against openai-harmony's own encoding.
"""

from __future__ import annotations

from typing import Final

START: Final = 200006
"""``<|start|>``: opens a message header."""
END: Final = 200007
"""``<|end|>``: closes a finished message."""
MESSAGE: Final = 200008
"""``<|message|>``: ends the header, starts the content."""
CHANNEL: Final = 200005
"""``<|channel|>``: introduces the channel in a header."""
CONSTRAIN: Final = 200003
"""``<|constrain|>``: introduces the content type of a tool call."""
RETURN: Final = 200002
"""``<|return|>``: the model is done (a decode-time stop token)."""
CALL: Final = 200012
"""``<|call|>``: the model calls a tool (a stop token)."""
ENDOFTEXT: Final = 199999
"""``<|endoftext|>``: an end-of-generation token that harmony does not treat as a stop token."""
STARTOFTEXT: Final = 199998
"""``<|startoftext|>``: never expected in a completion."""

ASSISTANT: Final = 173781
"""The ordinary token ``assistant``."""
USER: Final = 1428
"""The ordinary token ``user`` (a user message's header is ``<|start|>user<|message|>``)."""

FIRST_SPECIAL: Final = 199998
"""Every id from here on is special (or reserved)."""
VOCAB_SIZE: Final = 201088
"""Number of token ids a gpt-oss model has (0 .. 201087)."""

MESSAGE_STOPS: Final = frozenset({END, RETURN, CALL})
"""Tokens that close a message inside harmony's parser."""
GENERATION_STOPS: Final = frozenset({RETURN, CALL, ENDOFTEXT})
"""Tokens on which generation stops (``<|end|>`` only separates messages)."""
STRUCTURAL: Final = frozenset({START, END, MESSAGE, CHANNEL, CONSTRAIN, RETURN, CALL})
"""The special tokens that carry harmony structure."""

NAMES: Final[dict[int, str]] = {
    START: "<|start|>",
    END: "<|end|>",
    MESSAGE: "<|message|>",
    CHANNEL: "<|channel|>",
    CONSTRAIN: "<|constrain|>",
    RETURN: "<|return|>",
    CALL: "<|call|>",
    ENDOFTEXT: "<|endoftext|>",
    STARTOFTEXT: "<|startoftext|>",
}
"""Spelled-out text of the named special tokens."""


def is_special(token: int) -> bool:
    """Return whether ``token`` is a special (or reserved) id rather than text."""
    return token >= FIRST_SPECIAL


def is_valid(token: int) -> bool:
    """Return whether ``token`` is an id a gpt-oss model can produce at all."""
    return 0 <= token < VOCAB_SIZE


def is_reserved(token: int) -> bool:
    """Return whether ``token`` is a reserved special id with no meaning in harmony."""
    return token >= FIRST_SPECIAL and token not in NAMES


def special_name(token: int) -> str:
    """Return the spelled-out text of a special token, e.g. ``<|reserved_200020|>``."""
    return NAMES.get(token, f"<|reserved_{token}|>")
