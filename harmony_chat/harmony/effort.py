"""Reasoning effort values: a light module (no openai-harmony import) for the CLI and the UI."""

from __future__ import annotations

from typing import Literal

Effort = Literal["low", "medium", "high"]
EFFORTS: tuple[Effort, ...] = ("low", "medium", "high")
"""Reasoning efforts, in the order a key cycles through them."""


def parse_effort(value: str) -> Effort:
    """Return ``value`` as an effort, or raise ValueError naming the valid ones."""
    lowered = value.strip().lower()
    for effort in EFFORTS:
        if lowered == effort:
            return effort
    raise ValueError(f"unknown reasoning effort {value!r} (choose low, medium or high)")


def next_effort(effort: Effort) -> Effort:
    """Return the effort after ``effort`` in the cycle low -> medium -> high -> low."""
    return EFFORTS[(EFFORTS.index(effort) + 1) % len(EFFORTS)]
