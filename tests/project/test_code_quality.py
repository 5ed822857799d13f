"""Every module says what it is for; every set of allowed values is written once.

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


def literal_value_sets(source: str) -> list[tuple[frozenset[object], int]]:
    """Each ``Literal[...]`` of two values or more in ``source``: its values and its line."""
    found: list[tuple[frozenset[object], int]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Subscript):
            continue
        name = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", None)
        members = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        values = frozenset(member.value for member in members if isinstance(member, ast.Constant))
        if name == "Literal" and len(values) > 1:
            found.append((values, node.lineno))
    return found


def test_each_set_of_allowed_values_is_written_once() -> None:
    """The same ``Literal`` values in two places are one type written twice (say, in the settings and its owner)."""
    where: dict[frozenset[object], list[str]] = {}
    for path in sorted((ROOT / "harmony_chat").rglob("*.py")):
        for values, line in literal_value_sets(path.read_text(encoding="utf-8")):
            where.setdefault(values, []).append(f"{path.relative_to(ROOT)}:{line}")
    assert len(where) > 10  # the scan sees the package's Literals (efforts, reasoning and approval modes, ...)
    assert {values: places for values, places in where.items() if len(places) > 1} == {}


def test_the_literal_scan_sees_a_repeated_set_in_any_order() -> None:
    source = 'A = Literal["x", "y"]\nb: typing.Literal["y", "x"] = "x"\nc: Literal["x"]\n'
    assert literal_value_sets(source) == [(frozenset({"x", "y"}), 1), (frozenset({"x", "y"}), 2)]
