"""One line for a bad setting: what is wrong, and where (the config file's line, or the variable).

pydantic reports where a bad value sits as a path (``("model", "context")``); this module finds
the line of the config file that wrote it, or the ``HARMONY_CHAT_`` environment variable that set
it, and words the problem for a person.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from harmony_chat.errors import HarmonyChatError


class ConfigError(HarmonyChatError):
    """The config file cannot be read or holds a bad value (or an environment variable does)."""


_TABLE = re.compile(r"^\[\s*([^\]]+?)\s*\]")
_TYPES = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "finite_number": "a finite number",
}


def _key_pattern(key: str) -> str:
    """A TOML key as written: bare or quoted."""
    escaped = re.escape(key)
    return rf"(?:{escaped}|\"{escaped}\"|'{escaped}')"


def line_of(text: str, section: str, key: str | None = None) -> int:
    """Return the line (1-based) where ``section``'s ``key`` is written, or the section itself; 0 if neither.

    Understands ``[section]`` tables, ``key = value`` lines inside them, and dotted keys at the top
    (``section.key = value``) or a whole ``section = {...}`` written inline.
    """
    current = ""
    header = inline = 0
    key_re = re.compile(rf"^{_key_pattern(key)}\s*=") if key is not None else None
    dotted_re = re.compile(rf"^{_key_pattern(section)}\s*\.\s*{_key_pattern(key)}\s*=") if key is not None else None
    whole_re = re.compile(rf"^{_key_pattern(section)}\s*(=|\.)")
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if table := _TABLE.match(stripped):
            current = table.group(1).strip().strip("\"'")
            if current == section and not header:
                header = number
            continue
        if current == section and key_re is not None and key_re.match(stripped):
            return number
        if current == "":
            if dotted_re is not None and dotted_re.match(stripped):
                return number
            if whole_re.match(stripped) and not inline:
                inline = number
    return header or inline


def environment_variable(location: Sequence[str], prefix: str) -> str | None:
    """The environment variable that set the value at ``location``, if one is set."""
    names = {name.upper(): name for name in os.environ}
    for depth in range(len(location), 0, -1):
        candidate = (prefix + "__".join(location[:depth])).upper()
        if candidate in names:
            return names[candidate]
    return None


def describe(error: ErrorDetails) -> str:
    """Word one pydantic error for a person (without where it is)."""
    location = [str(part) for part in error["loc"]]
    kind = error["type"]
    context = error.get("ctx") or {}
    name = ".".join(part for part in location if part != "[key]")
    if kind == "extra_forbidden":
        if len(location) == 1 and isinstance(error.get("input"), dict):
            return f"unknown section [{location[0]}]"
        if len(location) == 1:
            return f"unknown setting {location[0]!r} outside any [section]"
        return f"unknown setting {location[-1]!r} in [{location[0]}]"
    if kind in _TYPES:
        return f"{name} must be {_TYPES[kind]}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"[{name}] must be a table"
    if kind == "literal_error":
        return f"{name} must be {str(context.get('expected', '')).replace(chr(39), '')}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        words = {"greater_than_equal": "at least", "greater_than": "more than", "less_than_equal": "at most"}
        limit = next(iter(context.values()), "")
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)  # "at most 2", not "at most 2.0"
        return f"{name} must be {words.get(kind, 'less than')} {limit}"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{name}: {message}" if kind == "value_error" and "[key]" not in location else message


def explain(
    error: ValidationError,
    path: object,
    text: str,
    prefix: str,
    renamed: Mapping[tuple[str, str], tuple[str, str]] | None = None,
) -> ConfigError:
    """Return the first problem in ``error`` as a one-line :class:`ConfigError` naming where it is.

    ``renamed`` maps where a value was checked to where the user wrote it (a moved key read at its
    old place: ``("sampling", "seed")`` to ``("model", "seed")``), so the error names what was written.
    """
    first = error.errors()[0]
    written = (renamed or {}).get((str(first["loc"][0]), str(first["loc"][1]))) if len(first["loc"]) > 1 else None
    if written is not None:
        first["loc"] = (*written, *first["loc"][2:])
    location = [str(part) for part in first["loc"] if part != "[key]"]
    what = describe(first)
    variable = environment_variable(location, prefix)
    if variable is not None:
        return ConfigError(f"environment variable {variable}: {what}")
    line = line_of(text, location[0], location[1] if len(location) > 1 else None) if location else 0
    return ConfigError(f"config file {path}, line {line}: {what}" if line else f"config file {path}: {what}")
