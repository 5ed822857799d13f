"""Recorded gpt-oss conversations bundled for demo mode, screenshots and tests."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DEMO_QUESTIONS = (
    "How do I reverse a linked list in Python?",
    "Why is the sky blue? Keep it short.",
    "Plan a tiny CLI that counts words in a file.",
)
"""What each recorded turn answers, in order; the welcome screen suggests them."""


def demo_recording() -> Path:
    """Return the bundled recording (three turns, harmony text with special tokens)."""
    return Path(str(files("harmony_chat.demo") / "conversation.txt"))
