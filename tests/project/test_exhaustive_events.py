"""Every consumer of the event unions matches them exhaustively, and mypy says when one misses a case.

A consumer dispatches with ``match event:`` and ends with ``case _: assert_never(event)``: adding an
event type to a union then fails the type check (``.ci/lint``) in each consumer that does not handle it.
The first test proves the mechanism on the real :data:`~harmony_chat.chat.events.ChatEvent` with mypy
itself (a generated module; only its own errors count, so a dependency's new type hints cannot fail
it); the second keeps the consumers from silently losing their final ``assert_never``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

import pytest

from harmony_chat.chat.events import ChatEvent

ROOT = Path(__file__).resolve().parents[2]

CONSUMERS = {
    "harmony_chat/printing/ask_output.py": [
        "AskPrinter.handle",
        "AskPrinter._text",
        "AskPrinter._loop_event",
        "AskPrinter._json_loop_event",
        "AskPrinter._summary",
        "AskPrinter._json_payload",
    ],
    "harmony_chat/tui/widgets/turn.py": ["AssistantTurn._apply_one", "AssistantTurn._apply_tool_event"],
    "harmony_chat/tui/widgets/inspector.py": ["TokenInspector.record"],
    "harmony_chat/server/turn_output.py": ["TurnReader.feed"],
}
"""The event consumers (module, then ``Class.method``) that must each match their event exhaustively."""


def consumer_module(classes: list[type]) -> tuple[str, dict[int, str]]:
    """A module of one complete consumer of ChatEvent and, per event class, one that misses it.

    Returns the source and, for each consumer that misses a class, the line of its ``assert_never``
    and the class's name.
    """
    lines = [
        "from typing import assert_never",
        "from harmony_chat.chat.events import ChatEvent",
        *(f"from {cls.__module__} import {cls.__name__}" for cls in classes),
    ]
    expected: dict[int, str] = {}
    for missing in [None, *classes]:
        lines += ["", "", f"def consume_{missing.__name__ if missing else 'all'}(event: ChatEvent) -> None:"]
        lines.append("    match event:")
        for cls in classes:
            if cls is not missing:
                lines += [f"        case {cls.__name__}():", "            pass"]
        lines += ["        case _:", "            assert_never(event)"]
        if missing is not None:
            expected[len(lines)] = missing.__name__
    return "\n".join(lines) + "\n", expected


def test_mypy_reports_a_consumer_that_misses_an_event(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    classes = list(get_args(ChatEvent))
    assert len(classes) > 10 and all(isinstance(cls, type) for cls in classes)  # the union, flattened
    source, expected = consumer_module(classes)
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n", encoding="utf-8")  # not the project's (its ``files`` would be checked too)
    stdout, stderr, _ = api.run(
        [
            f"--config-file={config}",
            f"--cache-dir={tmp_path / 'cache'}",
            "--follow-imports=silent",
            "--no-incremental",
            "--python-version=3.11",
            "--no-error-summary",
            "-c",
            source,
        ]
    )
    errors = {int(found[1]): found[2] for found in re.finditer(r"^<string>:(\d+): error: (.*)$", stdout, re.M)}
    assert errors.keys() == expected.keys(), stdout + stderr  # the complete consumer passes; each other fails
    for line, name in expected.items():
        assert f'"assert_never" has incompatible type "{name}"' in errors[line]


def test_the_mypy_probe_has_one_consumer_per_missing_class() -> None:
    class First:
        pass

    class Second:
        pass

    source, expected = consumer_module([First, Second])
    compile(source, "<probe>", "exec")
    assert sorted(expected.values()) == ["First", "Second"]
    for line, name in expected.items():
        assert source.splitlines()[line - 1].strip() == "assert_never(event)"
        assert f"case {name}()" not in source.split(f"def consume_{name}")[1].split("def ")[0]


def _function(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    class_name, method = qualname.split(".")
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == method:
                    return item
    raise AssertionError(f"{qualname} is gone")


def ends_in_assert_never(match: ast.Match) -> bool:
    """Whether the match's last case is ``case _: assert_never(<the subject>)``."""
    last = match.cases[-1]
    if not (isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None and last.guard is None):
        return False
    call = last.body[-1].value if len(last.body) == 1 and isinstance(last.body[-1], ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "assert_never"
        and [ast.dump(arg) for arg in call.args] == [ast.dump(match.subject)]
    )


@pytest.mark.parametrize("path", sorted(CONSUMERS))
def test_each_consumer_ends_its_match_in_assert_never(path: str) -> None:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    for qualname in CONSUMERS[path]:
        function = _function(tree, qualname)
        matches = [node for node in ast.walk(function) if isinstance(node, ast.Match)]
        assert matches, f"{path}: {qualname} does not match its event"
        assert all(ends_in_assert_never(match) for match in matches), f"{path}: {qualname} lacks assert_never"


def _match(source: str) -> ast.Match:
    statement = ast.parse(source).body[0]
    assert isinstance(statement, ast.Match)
    return statement


def test_the_assert_never_check_sees_a_missing_one() -> None:
    head = "match event:\n    case int():\n        pass\n    case _:\n        "
    cases = ["assert_never(event)", "pass", "assert_never(other)", "print(event)\n        assert_never(event)"]
    assert [ends_in_assert_never(_match(head + case + "\n")) for case in cases] == [True, False, False, False]
