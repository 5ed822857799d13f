"""Every conformance check, in the order the report lists them (Chat Completions, then Responses)."""

from __future__ import annotations

from harmony_chat.conform.checks import chat_reasoning, cot, effort, errors, leaks, responses, structured, tools
from harmony_chat.conform.result import Check


def _ordered(*groups: tuple[Check, ...]) -> tuple[Check, ...]:
    every = [check for group in groups for check in group]
    return tuple(check for api in ("chat", "responses") for check in every if check.api == api)


CHECKS: tuple[Check, ...] = _ordered(
    chat_reasoning.CHECKS,
    responses.CHECKS,
    cot.CHECKS,
    leaks.CHECKS,
    tools.CHECKS,
    effort.CHECKS,
    structured.CHECKS,
    errors.CHECKS,
)
"""All checks; ids are unique."""

__all__ = ["CHECKS"]
