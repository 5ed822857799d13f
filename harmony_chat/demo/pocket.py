"""The pocket gpt-oss the demo runs: its shipped GGUF, its manifest, its pinned date and suggested questions.

A tiny model of the real gpt-oss architecture that llama.cpp runs like any gpt-oss GGUF; it only
knows the conversations it was trained on. What it answers and how well: ``docs/pocket-model.md``;
how it is trained and measured: ``training/pocket/`` in the repository (not part of the package).
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

POCKET_NAME = "pocket-gpt-oss"
POCKET_DATE = "2026-11-21"
"""The conversation date every training prompt carries; chats on the pocket model use it too."""
POCKET_QUESTIONS = (
    "What is the capital of France?",
    "Who wrote Romeo and Juliet?",
    "Write a Python function that adds two numbers.",
    "What is 1234 * 5678?",
    "What's the weather in Tokyo?",
)
"""Questions to suggest, in any order: the pocket model answers these (and the rest of what it was
trained on); the last two call the python tool and the demo weather tool, after the user approves."""


def pocket_dir() -> Path:
    """The folder holding the shipped model and its manifest."""
    return Path(str(files("harmony_chat.demo")))


def pocket_model_path() -> Path:
    """The shipped pocket GGUF."""
    return pocket_dir() / f"{POCKET_NAME}.gguf"


def pocket_manifest() -> dict[str, object]:
    """What is recorded about the shipped model (hashes, training settings, measured rates); {} if missing."""
    path = pocket_dir() / f"{POCKET_NAME}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
