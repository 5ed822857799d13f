"""Hidden stand-in widgets that lend finished answer blocks the exact styles Textual's Markdown gives them.

A finished block of an answer is drawn once, as lines, instead of living on as a tree of Markdown
widgets (see :mod:`harmony_chat.tui.block_render`). To draw it exactly as Textual would, every
widget the block would have been made of has a stand-in: one widget of the same class at the same
place in the widget tree (so the same CSS rules, theme variables, ``:dark``/``:light``/``:ansi``
states and inherited backgrounds apply), kept hidden. A stand-in is made the first time its place
is needed and then reused for every block of the answer.

A place is a path of kinds from the answer down, e.g. ``("ul", "row", "item", "p")`` for a
paragraph in a bullet list item.
"""

from __future__ import annotations

from collections.abc import Iterable

from markdown_it.token import Token
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Label, Markdown
from textual.widgets._markdown import (  # the block classes Markdown uses (Textual is pinned)
    MarkdownBlockQuote,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownFence,
    MarkdownHorizontalRule,
    MarkdownOrderedList,
    MarkdownParagraph,
    MarkdownTable,
    MarkdownTableCellContents,
    MarkdownTableContent,
)

Place = tuple[str, ...]
"""Kinds from the answer down to one widget."""

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


class StandIns:
    """The hidden stand-ins of one answer, by place."""

    def __init__(self, host: Markdown) -> None:
        self.host = host
        self._widgets: dict[Place, Widget] = {}

    def __getitem__(self, place: Place) -> Widget:
        return self._widgets[place]

    def __contains__(self, place: Place) -> bool:
        return place in self._widgets

    def clear(self) -> None:
        """Forget the stand-ins (after they were removed with the answer's children)."""
        self._widgets.clear()

    async def ensure(self, places: Iterable[Place]) -> None:
        """Mount the stand-ins (and their parents) for ``places`` that are not there yet."""
        for place in sorted(set(places), key=len):
            for depth in range(1, len(place) + 1):
                here = place[:depth]
                if here in self._widgets:
                    continue
                parent = self.host if depth == 1 else self._widgets[here[:-1]]
                widget = self._make(here)
                widget.display = False
                await parent.mount(widget)
                self._widgets[here] = widget

    def _make(self, place: Place) -> Widget:
        kind, level = place[-1], sum(1 for part in place if part in ("ul", "ol", "table", "quote"))
        host = self.host
        if kind == "p":
            return MarkdownParagraph(host, _token("paragraph_open", level))
        if kind in HEADINGS:
            return host.get_block_class(kind)(host, _token("heading_open", level))
        if kind == "hr":
            return MarkdownHorizontalRule(host, _token("hr", level))
        if kind == "ul":
            return _BulletList(host, _token("bullet_list_open", level))
        if kind == "ol":
            return _OrderedList(host, _token("ordered_list_open", level))
        if kind == "quote":
            return MarkdownBlockQuote(host, _token("blockquote_open", level))
        if kind == "row":
            return Horizontal()
        if kind == "item":
            return Vertical()
        if kind == "bullet":
            return MarkdownBullet()
        if kind == "fence":
            return _Fence(host, _token("fence", level), "")
        if kind == "code":
            return Label("", id="code-content", expand=True)
        if kind == "table":
            return _Table(host, _token("table_open", level))
        if kind == "grid":
            return MarkdownTableContent([], [])
        if kind == "th":
            return MarkdownTableCellContents("", classes="header")
        if kind == "td":
            return MarkdownTableCellContents("", classes="row1 cell")
        raise ValueError(f"no stand-in for {place}")


class _Fence(MarkdownFence):
    """A fence stand-in: its code label is a stand-in of its own."""

    def compose(self):  # type: ignore[no-untyped-def]
        """No children: the ``code`` stand-in is mounted in it."""
        return iter(())


class _BulletList(MarkdownBulletList):
    """A bullet list stand-in: its rows are stand-ins of their own."""

    def compose(self):  # type: ignore[no-untyped-def]
        """No children: the ``row`` stand-in is mounted in it."""
        return iter(())


class _OrderedList(MarkdownOrderedList):
    """An ordered list stand-in: its rows are stand-ins of their own."""

    def compose(self):  # type: ignore[no-untyped-def]
        """No children: the ``row`` stand-in is mounted in it."""
        return iter(())


class _Table(MarkdownTable):
    """A table stand-in: its grid is a stand-in of its own."""

    def compose(self):  # type: ignore[no-untyped-def]
        """No children: the ``grid`` stand-in is mounted in it."""
        return iter(())


def _token(kind: str, level: int) -> Token:
    return Token(kind, "", 1, level=level)
