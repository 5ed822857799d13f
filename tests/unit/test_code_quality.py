"""The project stays ruff- and mypy-clean (checked in CI, since CI runs this suite)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "."], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_modules_are_documented() -> None:
    """Every module says what it is for (a module is one responsibility, whatever its length)."""
    paths = [*(ROOT / "harmony_chat").rglob("*.py"), *(ROOT / "training").rglob("*.py")]
    assert any(path.parts[-3:] == ("training", "pocket", "train.py") for path in paths)
    for path in paths:
        assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), f"{path} lacks a module docstring"
