"""Why a JSON schema cannot be enforced as a grammar: the one error the schema check and the pattern rewrite raise."""

from __future__ import annotations

from harmony_chat.errors import HarmonyChatError


class UnenforceableSchema(HarmonyChatError, ValueError):
    """A JSON schema harmony-chat cannot enforce as a grammar.

    Attributes:
        path: where in the schema, as a JSON pointer (``#/properties/name/pattern``).
        reason: why.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"the JSON schema cannot be enforced at {path}: {reason}")
        self.path = path
        self.reason = reason
