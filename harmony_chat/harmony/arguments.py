"""Checking a tool call's arguments before anything runs it.

Function tools take JSON. Arguments that are not valid JSON are repaired only when the repair is
unambiguous: the text is a valid start of JSON that stopped early (closing brackets or a closing
quote missing at the very end). ``json-repair`` does the repair; Python's own JSON decoder says
whether the damage is only at the end. Anything else is malformed: the call is never executed and
the model is told why (:func:`malformed_call_result`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import json_repair

_AMBIGUOUS = frozenset({"Expecting value", "Expecting ':' delimiter"})
"""Decoder errors at the end that mean a value or a key's value is missing, not just closers."""


@dataclass(frozen=True, slots=True)
class CheckedArguments:
    """The outcome of checking one call's arguments."""

    parsed: Any = None
    """The arguments as JSON values (repaired when ``repaired``); None when not JSON or malformed."""
    repaired: bool = False
    error: str | None = None
    """Why the arguments are unusable; the call must not run when set."""


def expects_json(name: str, content_type: str | None) -> bool:
    """Return whether a call to ``name`` with ``content_type`` must carry JSON arguments."""
    return name.startswith("functions.") or "json" in (content_type or "").lower()


def _only_truncated(text: str, error: json.JSONDecodeError) -> bool:
    """Whether the decoder found nothing wrong before the text simply stopped."""
    if error.msg.startswith("Unterminated string"):
        before = text[: error.pos].rstrip()
        return before.endswith((":", "["))  # a value string cut off, never a key
    return error.pos >= len(text.rstrip()) and error.msg not in _AMBIGUOUS


def check_arguments(text: str, name: str, content_type: str | None) -> CheckedArguments:
    """Parse, repair or reject the arguments of a call to ``name``."""
    if not expects_json(name, content_type):
        return CheckedArguments()
    try:
        return CheckedArguments(json.loads(text))
    except json.JSONDecodeError as error:
        if text.strip().startswith(("{", "[")) and _only_truncated(text, error):
            repaired = json_repair.loads(text)
            if isinstance(repaired, (dict, list)):
                return CheckedArguments(repaired, repaired=True)
        return CheckedArguments(error=f"the arguments are not valid JSON ({error.msg} at character {error.pos})")


def malformed_call_result(error: str) -> str:
    """The tool result to send the model for a call that was not run."""
    return json.dumps({"error": f"the call was not run: {error}; send the call again with valid JSON arguments"})
