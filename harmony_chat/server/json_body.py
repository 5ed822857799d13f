r"""A request body read as JSON that the rest of the server can trust: an object, shallow, valid Unicode.

``json.loads`` accepts what later breaks the server: nesting deep enough to exhaust Python's
recursion (``[[[[...``: a RecursionError) and lone UTF-16 surrogates (``"\ud800"``), which no
UTF-8 encoder, harmony's included, can write. Both are the client's mistake and get a 400.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harmony_chat.server.errors import ApiError

MAX_DEPTH = 100
"""The deepest nesting of arrays and objects a body may have (JSON schemas of tools included)."""


def parse_object(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object.

    Raises:
        ApiError: 400 when it is not JSON, not an object, nested deeper than :data:`MAX_DEPTH`,
            or holds a string that is not valid Unicode (a lone surrogate).
    """
    try:
        data = json.loads(raw)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as error:
        raise ApiError(400, f"the body is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    check_depth(data)
    if _MAY_HOLD_SURROGATES.search(raw):
        check_text(data)
    return data


_MAY_HOLD_SURROGATES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
"""A surrogate escape (``\\ud800``), or a surrogate written in UTF-8 (which ``json.loads`` lets through)."""


def _too_deep() -> ApiError:
    return ApiError(400, f"the body is nested deeper than {MAX_DEPTH} levels")


def check_depth(data: object) -> None:
    """Walk the arrays and objects of ``data`` (without recursion).

    Raises:
        ApiError: 400 when they nest deeper than :data:`MAX_DEPTH`.
    """
    level: list[Any] = [data]
    depth = 0
    while level:
        if depth > MAX_DEPTH:
            raise _too_deep()
        deeper: list[Any] = []
        for value in level:
            children = value.values() if type(value) is dict else value
            deeper.extend([child for child in children if type(child) is list or type(child) is dict])
        level = deeper
        depth += 1


def check_text(data: object) -> None:
    """Walk the strings of ``data`` (keys included) for lone surrogates, which no encoder can write.

    Raises:
        ApiError: 400 naming the place of the first one.
    """
    pending: list[tuple[object, tuple[str, ...]]] = [(data, ())]
    while pending:
        value, where = pending.pop()
        if isinstance(value, str):
            _check_text(value, where)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_text(key, where)
                pending.append((item, (*where, key)))
        elif isinstance(value, list):
            pending.extend((item, (*where, str(index))) for index, item in enumerate(value))


def _check_text(text: str, where: tuple[str, ...]) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        place = ".".join(where) or None
        code = ord(text[error.start])
        message = f"{place or 'the body'}: a lone surrogate (\\u{code:04x}) is not valid Unicode text"
        raise ApiError(400, message, param=place) from None
