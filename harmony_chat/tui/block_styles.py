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

from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any, cast

from markdown_it.token import Token
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Label, Markdown
from textual.widgets.markdown import MarkdownBlock

from harmony_chat.tui.textual_private import bullet_widget, table_cell_widget, table_grid_widget

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
            return host.get_block_class("paragraph_open")(host, _token("paragraph_open", level))
        if kind in HEADINGS:
            return host.get_block_class(kind)(host, _token("heading_open", level))
        if kind == "hr":
            return host.get_block_class("hr")(host, _token("hr", level))
        if kind == "ul":
            return _childless(host.get_block_class("bullet_list_open"))(host, _token("bullet_list_open", level))
        if kind == "ol":
            return _childless(host.get_block_class("ordered_list_open"))(host, _token("ordered_list_open", level))
        if kind == "quote":
            return host.get_block_class("blockquote_open")(host, _token("blockquote_open", level))
        if kind == "row":
            return Horizontal()
        if kind == "item":
            return Vertical()
        if kind == "bullet":
            return bullet_widget()
        if kind == "fence":
            fence: Any = _childless(host.get_block_class("fence"))  # MarkdownFence: (markdown, token, code)
            return cast(Widget, fence(host, _token("fence", level), ""))
        if kind == "code":
            return Label("", id="code-content", expand=True)
        if kind == "table":
            return _childless(host.get_block_class("table_open"))(host, _token("table_open", level))
        if kind == "grid":
            return table_grid_widget()
        if kind == "th":
            return table_cell_widget("header")
        if kind == "td":
            return table_cell_widget("row1 cell")
        raise ValueError(f"no stand-in for {place}")


def _no_children(_widget: Widget) -> Iterator[Widget]:
    """A stand-in's compose: its children are stand-ins of their own, mounted into it."""
    return iter(())


@cache
def _childless(block: type[MarkdownBlock]) -> type[MarkdownBlock]:
    """``block`` composing no children (a list's rows, a table's grid, a fence's code are stand-ins of their own)."""
    return type(f"StandIn{block.__name__}", (block,), {"compose": _no_children})


def _token(kind: str, level: int) -> Token:
    return Token(kind, "", 1, level=level)
