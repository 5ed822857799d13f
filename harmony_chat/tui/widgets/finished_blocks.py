"""The finished part of an answer: blocks drawn once as lines, in one widget (see ``block_render``).

One widget holds any number of finished blocks, so a long answer is a handful of widgets instead of
thousands, and its layout is one height. Lines are drawn for the widget's width when first needed
and again only when the width or the theme changes.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.geometry import Size, Spacing
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown

from harmony_chat.tui.block_render import BlockPainter, Drawn
from harmony_chat.tui.block_tree import Node


class FinishedBlocks(Widget):
    """Finished blocks of an answer, drawn exactly as Textual's Markdown widgets would draw them."""

    DEFAULT_CSS = "FinishedBlocks { height: auto; width: 1fr; }"

    def __init__(self, painter: BlockPainter) -> None:
        super().__init__()
        self._painter = painter
        self.nodes: list[Node] = []
        """The blocks shown, in order."""
        self._drawn: list[Drawn] = []
        self._lines: list[Strip] = []
        self._width = -1

    def on_mount(self) -> None:
        """Redraw when the theme changes (the stand-ins' styles change with it)."""
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._invalidate())

    def on_unmount(self) -> None:
        """Leave the theme signal (its callback would keep this widget alive)."""
        self.app.theme_changed_signal.unsubscribe(self)

    def add(self, nodes: list[Node]) -> None:
        """Show more finished blocks after those already shown (drawn when next laid out)."""
        self.nodes += nodes
        self._changed()

    def replace(self, nodes: list[Node]) -> None:
        """Show ``nodes`` instead (the block being written, drawn again as it grows)."""
        self.nodes = list(nodes)
        self._drawn, self._lines = [], []
        self._changed()

    def _changed(self) -> None:
        if self.nodes:
            margin = Spacing(self._painter.margin(self.nodes[0]).top, 0, self._painter.margin(self.nodes[-1]).bottom, 0)
            if self.styles.margin != margin:
                self.styles.margin = margin
        self.refresh(layout=True)

    def _invalidate(self) -> None:
        """Draw again (the theme changed; the stand-ins' styles follow it once the CSS is refreshed)."""
        self._painter.forget()
        self._width = -1
        self.refresh(layout=True)
        self.call_after_refresh(self._redraw_after_css)

    def _redraw_after_css(self) -> None:
        self._painter.forget()
        self._width = -1
        self._changed()

    def _ensure(self, width: int) -> None:
        """Draw what is not drawn yet at ``width`` (everything, when the width changed)."""
        if width != self._width:
            self._width, self._drawn, self._lines = width, [], []
        for node in self.nodes[len(self._drawn) :]:
            drawn = self._painter.draw(node, width)
            if self._drawn:
                gap = max(self._drawn[-1].margin.bottom, drawn.margin.top)
                self._lines += self._painter.fill(self, width, gap)
            self._drawn.append(drawn)
            self._lines += drawn.lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """As many lines as the blocks take at ``width``."""
        self._ensure(width)
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        """One line of the drawn blocks (the part of a mouse selection on it highlighted)."""
        width = self.size.width
        self._ensure(width)
        line = self._lines[y] if y < len(self._lines) else Strip.blank(width)
        selection = self.text_selection
        span = selection.get_span(y) if selection is not None else None
        if span is None:
            return line
        start, end = span
        end = line.cell_length if end == -1 else min(end, line.cell_length)
        if start >= end:
            return line
        style = self.screen.get_component_rich_style("screen--selection")
        selected = Strip(Segment.apply_style(line.crop(start, end), post_style=style))
        return Strip.join([line.crop(0, start), selected, line.crop(end)])

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text shown under a mouse selection, as drawn (bullets and table lines included)."""
        text = "\n".join(line.text.rstrip() for line in self._lines)
        return selection.extract(text), "\n"

    async def action_link(self, href: str) -> None:
        """A link was clicked: tell the answer, as a Markdown block would."""
        answer = self.query_ancestor(Markdown)
        self.post_message(Markdown.LinkClicked(answer, href))
