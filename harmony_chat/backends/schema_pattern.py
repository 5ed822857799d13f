"""A JSON Schema ``pattern`` rewritten as llama-cpp-python's grammar converter reads it, or refused.

The converter copies a pattern's pieces into the grammar nearly as they are, so only what it writes
correctly, and what a JSON string can hold unescaped, gets through: literal characters, ``.``,
positive classes, the escapes for digits, word characters and spaces (a space only), escaped
punctuation, groups, alternation and quantifiers. A pattern is anchored at both ends (``^…$``); one without anchors
matches anywhere in the string, as JSON Schema says, so it becomes ``^.*(pattern).*$``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from harmony_chat.backends.schema_errors import UnenforceableSchema

_PATTERN_ESCAPES = {"d": "[0-9]", "w": "[a-zA-Z0-9_]", "s": "[ ]"}
"""Pattern escapes the grammar writes as classes (``\\s`` as a space only: a raw tab or newline is not JSON)."""
_ESCAPED_LITERALS = frozenset(".-/(){}*+?|$")
_CLASS_CHARS = re.compile(r"[A-Za-z0-9 _\-.,:;!#%&'@=<>~`/+*?(){}|$]")
"""Characters a pattern's class may hold as they are."""


def written_pattern(pattern: Any, where: str) -> str:
    """The pattern as the converter reads it (anchored both ends, escapes as classes), or a refusal."""
    if not isinstance(pattern, str):
        raise UnenforceableSchema(where, "a pattern must be a string")
    body = pattern
    start = body.startswith("^")
    end = body.endswith("$") and not body.endswith("\\$")
    body = body[1 if start else 0 : len(body) - 1 if end else len(body)]
    written = "".join(_pattern_parts(body, where, pattern))
    if not start:
        written = ".*" + ("(" + written + ")" if not end else written)
    if not end:
        written = ("(" + written + ")" if start else written) + ".*"
    return f"^{written}$"


def _pattern_parts(body: str, where: str, pattern: str) -> Iterator[str]:
    """The pattern's pieces, rewritten where the converter needs it; refuse what it cannot write."""
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            escaped = body[index + 1 : index + 2]
            if escaped in _PATTERN_ESCAPES:
                yield _PATTERN_ESCAPES[escaped]
            elif escaped in _ESCAPED_LITERALS:
                yield f"[{escaped}]" if escaped != "-" else "-"
            else:
                raise UnenforceableSchema(where, f"the escape \\{escaped} in pattern {pattern!r} is not supported")
            index += 2
        elif char == "[":
            close = body.find("]", index + 1)
            if close < 0:
                raise UnenforceableSchema(where, f"unbalanced brackets in pattern {pattern!r}")
            yield _pattern_class(body[index + 1 : close], where, pattern)
            index = close + 1
        elif char in "^$" or char == '"' or ord(char) < 32:
            raise UnenforceableSchema(where, f"{char!r} in the middle of pattern {pattern!r} is not supported")
        elif char == "(" and body[index + 1 : index + 3] == "?:":
            yield "("
            index += 3
        elif char == "(" and body[index + 1 : index + 2] == "?":
            raise UnenforceableSchema(where, f"lookarounds and named groups in pattern {pattern!r} are not supported")
        elif char in "*+?" and body[index + 1 : index + 2] in ("?", "+"):
            raise UnenforceableSchema(
                where, f"lazy and possessive quantifiers in pattern {pattern!r} are not supported"
            )
        else:
            yield char
            index += 1


def _pattern_class(inside: str, where: str, pattern: str) -> str:
    """A pattern's ``[...]`` class with only characters a JSON string holds as they are."""
    if inside.startswith("^"):
        raise UnenforceableSchema(where, f"negated classes in pattern {pattern!r} are not supported")
    written = []
    index = 0
    while index < len(inside):
        char = inside[index]
        if char == "\\":
            escaped = inside[index + 1 : index + 2]
            mapped = {"d": "0-9", "w": "a-zA-Z0-9_", "s": " ", ".": ".", "-": "\\-", "/": "/"}.get(escaped)
            if mapped is None:
                raise UnenforceableSchema(where, f"the escape \\{escaped} in pattern {pattern!r} is not supported")
            written.append(mapped)
            index += 2
            continue
        if not _CLASS_CHARS.fullmatch(char) and not ord(char) > 127:
            raise UnenforceableSchema(where, f"{char!r} in a class of pattern {pattern!r} is not supported")
        written.append(char)
        index += 1
    if not written:
        raise UnenforceableSchema(where, f"an empty class in pattern {pattern!r}")
    return "[" + "".join(written) + "]"
