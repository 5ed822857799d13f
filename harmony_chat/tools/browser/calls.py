"""Read the model's browser calls: the function from the recipient, the arguments from its JSON text.

gpt-oss writes ``browser.search`` / ``browser.open`` / ``browser.find`` with a JSON object; numbers
may come as ``3.0`` or ``"3"``, and ``open``'s ``id`` is a link number or a URL. Anything unusable is
an ``ArgumentError`` whose message tells the model what a valid call looks like.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Literal

FUNCTIONS = ("search", "open", "find")
Function = Literal["search", "open", "find"]
EXAMPLES = {
    "search": '{"query": "sea otter weight", "topn": 5}',
    "open": '{"id": 3} (a link on the newest page), {"id": "https://example.com/"}, {"cursor": 2, "loc": 40}',
    "find": '{"pattern": "weight", "cursor": 2}',
}


class ArgumentError(Exception):
    """The call cannot be read; the message is for the model."""


@dataclass(frozen=True)
class SearchCall:
    """``browser.search``."""

    query: str
    topn: int | None = None


@dataclass(frozen=True)
class OpenCall:
    """``browser.open``: a link id (int), a URL (str) or nothing (scroll), on ``cursor``'s page."""

    id: int | str = -1
    cursor: int = -1
    loc: int = -1
    num_lines: int = -1
    view_source: bool = False


@dataclass(frozen=True)
class FindCall:
    """``browser.find``."""

    pattern: str
    cursor: int = -1


Call = SearchCall | OpenCall | FindCall


def function_of(recipient: str) -> str:
    """The function part of a browser recipient (``browser.open`` → ``open``), or ``""``."""
    name = recipient.strip().split(" ", 1)[0].split("<", 1)[0]
    return name.split(".", 1)[1] if name.startswith("browser.") else ""


def _integer(arguments: dict[str, object], key: str, default: int) -> int:
    value = arguments.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool):
        raise ArgumentError(f"`{key}` must be a whole number, not {json.dumps(value)}")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise ArgumentError(f"`{key}` must be a whole number, not {json.dumps(value)[:80]}")


def _text(arguments: dict[str, object], key: str) -> str:
    value = arguments.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(f"`{key}` is required and must be a non-empty string")
    return value


def _link_id(value: object) -> int | str:
    if value is None:
        return -1
    if isinstance(value, str):
        text = value.strip()
        return int(text) if text.lstrip("-").isdigit() else text
    if isinstance(value, bool):
        raise ArgumentError("`id` must be a link number or a URL string")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    raise ArgumentError("`id` must be a link number or a URL string")


def parse_call(recipient: str, arguments: str) -> Call:
    """The call the model made; raise ``ArgumentError``."""
    function = function_of(recipient)
    if function not in FUNCTIONS:
        raise ArgumentError(
            f"Unknown function: `{recipient.strip()}`. The browser has browser.search, browser.open and browser.find."
        )
    text = arguments.strip()
    try:
        parsed = json.loads(text) if text else {}
    except ValueError as error:
        raise ArgumentError(
            f"Invalid function arguments for browser.{function}: not JSON ({error}). Example: {EXAMPLES[function]}"
        ) from error
    if not isinstance(parsed, dict):
        raise ArgumentError(
            f"Invalid function arguments for browser.{function}: expected a JSON object. Example: {EXAMPLES[function]}"
        )
    if function == "search":
        topn = _integer(parsed, "topn", _integer(parsed, "top_n", 0))
        return SearchCall(_text(parsed, "query"), topn if topn > 0 else None)
    if function == "find":
        return FindCall(_text(parsed, "pattern"), _integer(parsed, "cursor", -1))
    view_source = parsed.get("view_source", False)
    return OpenCall(
        id=_link_id(parsed.get("id")),
        cursor=_integer(parsed, "cursor", -1),
        loc=_integer(parsed, "loc", -1),
        num_lines=_integer(parsed, "num_lines", -1),
        view_source=view_source is True or view_source == "true",
    )


def as_url(text: str) -> str:
    """A URL the model gave, with ``https://`` added when it wrote a bare host (``example.com/page``)."""
    stripped = text.strip()
    if "://" in stripped or ":" in stripped.split("/", 1)[0]:
        return stripped
    host = stripped.split("/", 1)[0]
    return f"https://{stripped}" if "." in host and " " not in host else stripped
