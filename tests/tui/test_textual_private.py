"""Textual's private names are reached in one module; where they are missing, the public way is taken.

Each fallback test hides private Textual modules the way a Textual release without them would (an
import of a name set to None in ``sys.modules`` fails), probes again, and checks the feature works
through Textual's public API; the names come back (and are probed again) afterwards.
"""

from __future__ import annotations

import ast
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.drivers import linux_driver
from textual.widgets.markdown import MarkdownBlock

from harmony_chat.tui import textual_private
from harmony_chat.tui.pasted_text import PASTE_END, PASTE_START, PasteSafeParser
from harmony_chat.tui.widgets.answer import Answer
from harmony_chat.tui.widgets.finished_blocks import FinishedBlocks
from tests.tui.test_answer_view import KITCHEN_SINK, Reference, SideBySide, _both, _text

ROOT = Path(__file__).resolve().parents[2]
TEXTUAL_PRIVATE_MEMBERS = {
    "_parse_markdown",
    "_token_to_content",
    "_update_from_block",
    "_markdown",
    "_file",
    "_display",
    "_compositor",
    "get_inner_outer",
    "XTermParser",
}
"""Private members of Textual's classes and modules the app uses (reached only in ``textual_private``)."""


class Hidden:
    """Hides modules from imports (as a Textual without them would) until :meth:`restore`."""

    def __init__(self) -> None:
        self._saved: dict[str, Any] = {}

    def hide(self, *names: str) -> None:
        """Make ``import name`` fail, then probe Textual again."""
        for name in names:
            self._saved.setdefault(name, sys.modules.get(name))
            sys.modules[name] = None  # type: ignore[assignment]
        textual_private.probe()

    def restore(self) -> None:
        """Bring the modules back and probe again."""
        for name, module in self._saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        textual_private.probe()


@pytest.fixture
def hidden() -> Iterator[Hidden]:
    modules = Hidden()
    try:
        yield modules
    finally:
        modules.restore()
    assert textual_private.line_drawing_missing is None


def test_the_textual_installed_has_every_private_name_the_app_uses() -> None:
    """In the Textual range pyproject allows, every private way is on (else the other tests test the fallback)."""
    assert textual_private.line_drawing_missing is None
    assert textual_private.paste_filter_missing is None
    assert textual_private.driver_output_missing is None


def test_only_textual_private_names_textuals_private_modules() -> None:
    """``textual._x`` and ``textual.widgets._x`` appear in one module of the package."""
    naming = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "harmony_chat").rglob("*.py")
        if any(
            line.lstrip().startswith(("from textual", "import textual")) and "._" in line.split(" import ")[0]
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    )
    assert naming == ["harmony_chat/tui/textual_private.py"]


def test_only_textual_private_uses_private_members_of_textuals_classes() -> None:
    for path in (ROOT / "harmony_chat" / "tui").rglob("*.py"):
        if path.name == "textual_private.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        used |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        assert not used & TEXTUAL_PRIVATE_MEMBERS, (path, used & TEXTUAL_PRIVATE_MEMBERS)


async def test_without_the_private_renderer_answers_render_through_markdown_stream(hidden: Hidden) -> None:
    hidden.hide("textual._styles_cache")
    assert textual_private.line_drawing_missing is not None
    assert "_styles_cache" in textual_private.line_drawing_missing
    app = SideBySide()
    async with app.run_test(size=(72, 300)) as pilot:
        reference, answer = app.query_one(Reference), app.query_one(Answer)
        assert not answer.draws_lines
        await reference.update(KITCHEN_SINK)
        for start in range(0, len(KITCHEN_SINK), 40):  # streamed, as a model writes it
            await answer.write(KITCHEN_SINK[start : start + 40])
        await answer.finish()
        expected, drawn = await _both(pilot)
        assert "Title one" in _text(drawn) and "longer cell text here" in _text(drawn)
        assert drawn == expected
        assert not list(answer.query(FinishedBlocks))  # Textual's own widgets, nothing drawn as lines
        assert any(isinstance(child, MarkdownBlock) for child in answer.children)
        assert answer.source == KITCHEN_SINK


async def test_without_the_private_renderer_a_cited_answer_is_shown_whole_at_the_end(hidden: Hidden) -> None:
    """An answer whose shown text changed under it (a citation resolved) is drawn again, publicly."""
    hidden.hide("textual._resolve")
    app = SideBySide()
    async with app.run_test(size=(72, 60)) as pilot:
        answer = app.query_one(Answer)
        assert not answer.draws_lines
        await answer.write("Otters weigh 14 to 45 kg【0†L1】 and eat urchins.")
        await answer.finish()
        _, drawn = await _both(pilot)
        assert "Otters weigh 14 to 45 kg" in _text(drawn) and "eat urchins" in _text(drawn)
        assert "【" not in _text(drawn)


def test_a_changed_signature_turns_the_private_renderer_off(hidden: Hidden, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual._styles_cache import StylesCache

    def render(self: object, styles: object, size: object, *, padding: object = None) -> list[object]:
        return []

    monkeypatch.setattr(StylesCache, "render", render)
    textual_private.probe()
    missing = textual_private.line_drawing_missing
    assert missing is not None and "content_size" in missing and "opacity" in missing
    monkeypatch.undo()


def test_without_the_input_parser_the_paste_filter_is_skipped_with_a_notice(
    hidden: Hidden, caplog: pytest.LogCaptureFixture
) -> None:
    before = linux_driver.XTermParser  # type: ignore[attr-defined]
    hidden.hide("textual._xterm_parser")
    assert textual_private.paste_filter_missing is not None
    with caplog.at_level(logging.WARNING, logger=textual_private.__name__):
        assert not textual_private.use_input_parser(PasteSafeParser)  # what the driver's input loop asks
    assert any("paste filter is skipped" in record.getMessage() for record in caplog.records)
    assert linux_driver.XTermParser is before  # type: ignore[attr-defined]
    with pytest.raises(textual_private.PrivateApiMissing):
        PasteSafeParser()


def test_with_the_input_parser_the_driver_parses_pastes_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linux_driver, "XTermParser", linux_driver.XTermParser)  # type: ignore[attr-defined]
    assert textual_private.use_input_parser(PasteSafeParser)
    parser = linux_driver.XTermParser(False)  # type: ignore[attr-defined]
    assert isinstance(parser, PasteSafeParser)
    events = list(parser.feed(f"{PASTE_START}a\x1b[31mb{PASTE_END}"))
    assert [type(event).__name__ for event in events] == ["Paste"]


async def test_the_driver_guards_its_output_and_says_so_when_it_cannot(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from textual.app import App

    from harmony_chat.tui.terminal_driver import TerminalDriver, TerminalOutput

    app: App[None] = App()
    guarded = TerminalDriver(app)
    assert guarded.output_guarded and isinstance(guarded._file, TerminalOutput)
    monkeypatch.setattr(textual_private, "driver_output_missing", "AttributeError: LinuxDriver has no _file")
    with caplog.at_level(logging.WARNING, logger=textual_private.__name__):
        unguarded = TerminalDriver(app)
    assert not unguarded.output_guarded and not isinstance(unguarded._file, TerminalOutput)
    assert any("not guarded" in record.getMessage() for record in caplog.records)
