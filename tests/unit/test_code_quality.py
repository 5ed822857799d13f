"""Every module says what it is for.

Lint and type checks (ruff check, ruff format --check, mypy) run in ``.ci/lint`` with the versions pinned
in constraints.txt, not here: a user's pytest must not fail because a dependency shipped new type hints.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_modules_are_documented() -> None:
    """Every module says what it is for (a module is one responsibility, whatever its length)."""
    paths = [*(ROOT / "harmony_chat").rglob("*.py"), *(ROOT / "training").rglob("*.py")]
    assert any(path.parts[-3:] == ("training", "pocket", "train.py") for path in paths)
    for path in paths:
        assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), f"{path} lacks a module docstring"
