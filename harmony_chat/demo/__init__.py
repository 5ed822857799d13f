"""The demo's assets, shipped in the package; here, the recorded conversations that ``--replay-demo`` replays.

- ``pocket.py``, ``pocket-gpt-oss.gguf``, ``pocket-gpt-oss.json``: the pocket gpt-oss that ``--demo``
  runs (the app's default model), its manifest, date and suggested questions;
- ``conversation.txt``: three recorded gpt-oss turns, for ``--replay-demo``, screenshots and tests;
- ``weather.py``, ``weather_server.py``: the made-up weather the pocket model's ``get_weather`` tool
  serves through a real MCP server.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

DEMO_QUESTIONS = (
    "How do I reverse a linked list in Python?",
    "Why is the sky blue? Keep it short.",
    "Plan a tiny CLI that counts words in a file.",
)
"""What each recorded turn answers, in order; the welcome screen suggests them."""


def choose_demo_turn(prompt: Sequence[int]) -> int | None:
    """Pick the recorded answer whose question best matches the prompt's last user message."""
    from harmony_chat.harmony.vocab import load_encoding

    text = load_encoding().decode(list(prompt))
    asked = text.rsplit("<|start|>user<|message|>", 1)[-1].split("<|end|>", 1)[0]
    words = set(re.findall(r"[a-z]+", asked.lower()))
    scores = [len(words & set(re.findall(r"[a-z]+", question.lower()))) for question in DEMO_QUESTIONS]
    best = max(range(len(scores)), key=scores.__getitem__)
    return best if scores[best] >= 2 else None


def demo_recording() -> Path:
    """Return the bundled recording (three turns, harmony text with special tokens)."""
    return Path(str(files("harmony_chat.demo") / "conversation.txt"))
