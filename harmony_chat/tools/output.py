"""Cap a tool's output before it reaches the model, with a marker that says how much was cut.

A tool can return megabytes; the model's context holds a few thousand tokens of it at best. Every
tool (MCP, and later python or browser) passes its text through ``cap_output``.
"""

from __future__ import annotations

from dataclasses import dataclass

OUTPUT_LIMIT_BYTES = 64 * 1024
"""The most UTF-8 bytes of tool output the model receives."""


@dataclass(frozen=True, slots=True)
class CappedOutput:
    """Text cut to the limit, and whether anything was cut."""

    text: str
    truncated: bool
    total_bytes: int
    """The size of the whole output in UTF-8 bytes."""


def cut_marker(shown_bytes: int, total_bytes: int) -> str:
    """The line appended to a cut output."""
    return (
        f"\n[output cut: {total_bytes - shown_bytes:,} of {total_bytes:,} bytes left out;"
        f" only the first {shown_bytes:,} bytes are shown]"
    )


def cap_output(text: str, limit_bytes: int = OUTPUT_LIMIT_BYTES) -> CappedOutput:
    """Keep at most ``limit_bytes`` UTF-8 bytes of ``text`` (whole characters), then a marker."""
    if limit_bytes < 0:
        raise ValueError("limit_bytes must not be negative")
    # A quick bound: every character is at most 4 bytes, so short texts need no encoding.
    if len(text) * 4 <= limit_bytes:
        return CappedOutput(text, False, len(text.encode("utf-8")))
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return CappedOutput(text, False, len(data))
    head = data[:limit_bytes].decode("utf-8", errors="ignore")
    shown = len(head.encode("utf-8"))
    return CappedOutput(head + cut_marker(shown, len(data)), True, len(data))
