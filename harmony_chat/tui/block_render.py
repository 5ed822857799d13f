"""Draw finished Markdown blocks of an answer as lines, exactly as Textual's Markdown widgets draw them.

Textual's ``Markdown`` makes a tree of widgets per block (a bullet list item alone is four); on a
long answer mounting and laying them out is nearly all of the UI's work. A block that can no longer
change is drawn here once instead: its inline text becomes the same :class:`~textual.content.Content`
Textual builds, rendered with the styles of a hidden stand-in widget at the same place
(:mod:`harmony_chat.tui.block_styles`) through Textual's own line renderer (``StylesCache``, reached
through :mod:`harmony_chat.tui.textual_private`, like every private name), and
the pieces are put together the way Textual's layouts place the widgets (vertical stacks with
collapsing margins, bullets beside items, the table grid with its keylines, code with its
highlighting). Blocks this module does not know raise :class:`Unsupported` and stay widgets.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import cast

from markdown_it.token import Token
from rich.cells import cell_len
from textual.canvas import Canvas, Rectangle
from textual.content import Content
from textual.css.scalar import Scalar
from textual.css.styles import RulesMap
from textual.geometry import Offset, Size, Spacing
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownFence

from harmony_chat.tui.block_styles import Place, StandIns
from harmony_chat.tui.block_tree import Node, Unsupported, bullets
from harmony_chat.tui.textual_private import draw_box, inline_content, resolve_spans


@dataclass
class Drawn:
    """A block drawn at a width: its lines and its margins (which collapse with its neighbours')."""

    lines: list[Strip]
    margin: Spacing


class BlockPainter:
    """Draws blocks with the styles of an answer's stand-ins."""

    MEMO_SIZE = 2048
    """Drawn pieces remembered: bullets, cells and the items of a growing list are drawn once."""

    def __init__(self, stand_ins: StandIns) -> None:
        self.stand_ins = stand_ins
        self.host: Markdown = stand_ins.host
        self._memo: dict[Hashable, list[Strip]] = {}
        self._highlighted: dict[tuple[str, str, bool, bool], Content] = {}

    def forget(self) -> None:
        """Drop what was drawn (the theme changed)."""
        self._memo.clear()
        self._highlighted.clear()

    def _remember(self, key: Hashable, lines: list[Strip]) -> list[Strip]:
        if len(self._memo) >= self.MEMO_SIZE:
            del self._memo[next(iter(self._memo))]
        self._memo[key] = lines
        return lines

    # -- Textual's pieces -----------------------------------------------------------------------

    def _text(self, widget: Widget, visual: Content, width: int, height: int | None = None) -> list[Strip]:
        """A text widget (``Static``) showing ``visual`` in ``width`` cells, as ``Widget._render_content`` does.

        ``height`` is the content height when the layout stretches the widget (a table cell in a taller row).
        """
        key = (id(widget), visual, width, height)
        if (known := self._memo.get(key)) is not None:
            return known
        styles = widget.styles
        content_width = max(0, width - styles.gutter.width)
        if height is None:
            # an empty auto-width heading is no cells wide but still a line high, as in Textual
            height = visual.get_height(_rules(widget), max(1, content_width))
        strips = Visual.to_strips(widget, visual, content_width, height, widget.visual_style)
        return self._remember(key, draw_box(widget, strips, width, height + styles.gutter.height))

    def fill(self, widget: Widget, width: int, height: int) -> list[Strip]:
        """What a container draws of itself (its background) inside its content area, where no child covers it."""
        if not height:
            return []
        key = ("fill", id(widget), width)
        if (line := self._memo.get(key)) is None:
            gutter = widget.styles.gutter
            box = draw_box(widget, [], width + gutter.width, 1 + gutter.height)
            line = self._remember(key, [box[gutter.top].crop(gutter.left, gutter.left + width)])
        return line * height

    def _inline(self, place: Place, token: Token | None) -> Content:
        if token is None:
            return Content("")
        return inline_content(self.stand_ins[place], token)

    # -- blocks ---------------------------------------------------------------------------------

    def draw(self, node: Node, width: int, parent: Place = ()) -> Drawn:
        """Draw one block ``width`` cells wide."""
        if node.kind in ("ul", "ol"):
            return self._list(node, width, (*parent, node.kind))
        if node.kind == "quote":
            return self._quote(node, width, (*parent, "quote"))
        if node.kind == "fence":
            return self._fence(node, width, (*parent, "fence"))
        if node.kind == "table":
            return self._table(node, width, (*parent, "table"))
        place = (*parent, node.kind)
        widget = self.stand_ins[place]
        if node.kind == "hr":
            return Drawn(draw_box(widget, [], width, _fixed_height(widget)), widget.styles.margin)
        visual = self._inline(place, node.inline)
        box_width = width
        if widget.styles.width is not None and widget.styles.width.is_auto:
            box_width = min(width, visual.get_optimal_width(_rules(widget), width) + widget.styles.gutter.width)
        lines = self._text(widget, visual, box_width)
        if box_width < width:
            parent_fill = self.fill(self._parent_widget(parent), width - box_width, len(lines))
            lines = [Strip.join([line, fill]) for line, fill in zip(lines, parent_fill, strict=True)]
        return Drawn(lines, widget.styles.margin)

    def margin(self, node: Node, parent: Place = ()) -> Spacing:
        """The margins of ``node``'s outermost widget (they collapse with its neighbours')."""
        return self.stand_ins[(*parent, node.kind)].styles.margin

    def check(self, node: Node, width: int, parent: Place = ()) -> None:
        """Raise :class:`Unsupported` if ``node`` would not be drawn the same as Textual's widgets at ``width``."""
        if node.kind == "fence":
            fence, label = self.stand_ins[(*parent, "fence")], self.stand_ins[(*parent, "fence", "code")]
            code_width = max((cell_len(line.expandtabs(8)) for line in node.code.splitlines()), default=0)
            if code_width + label.styles.gutter.width > width - fence.styles.gutter.width:
                raise Unsupported("a code line wider than the view (Textual lets it scroll sideways)")
        elif node.kind in ("ul", "ol"):
            here = (*parent, node.kind)
            inner = width - self.stand_ins[here].styles.gutter.width - max(map(cell_len, bullets(node)), default=0)
            for item in node.children:
                for child in item.children:
                    self.check(child, inner, (*here, "row", "item"))
        elif node.kind == "quote":
            here = (*parent, "quote")
            for child in node.children:
                self.check(child, width - self.stand_ins[here].styles.gutter.width, here)

    def _parent_widget(self, parent: Place) -> Widget:
        return self.stand_ins[parent] if parent else self.host

    def stack(self, nodes: Sequence[Node], width: int, parent: Place, fill_widget: Widget) -> Drawn:
        """Blocks one under the other, as Textual's vertical layout places them (margins collapse)."""
        drawn = [self.draw(node, width, parent) for node in nodes]
        lines: list[Strip] = []
        for index, block in enumerate(drawn):
            if index:
                gap = max(drawn[index - 1].margin.bottom, block.margin.top)
                lines += self.fill(fill_widget, width, gap)
            lines += _indent(block, width, self.fill(fill_widget, width, len(block.lines)))
        if not drawn:
            return Drawn([], Spacing())
        return Drawn(lines, Spacing(drawn[0].margin.top, 0, drawn[-1].margin.bottom, 0))

    def _list(self, node: Node, width: int, here: Place) -> Drawn:
        widget = self.stand_ins[here]
        row, bullet = self.stand_ins[(*here, "row")], self.stand_ins[(*here, "row", "bullet")]
        item_place = (*here, "row", "item")
        item = self.stand_ins[item_place]
        symbols = bullets(node)
        inner = max(0, width - widget.styles.gutter.width)
        rows: list[Strip] = []
        for child, symbol in zip(node.children, symbols, strict=True):
            if not child.children:
                continue  # Textual draws an empty item as a row of no height (its bullet too)
            mark = self._text(bullet, Content(symbol), min(inner, Content(symbol).cell_length))
            body_width = max(0, inner - (mark[0].cell_length if mark else 0))
            body = self.stack(child.children, body_width, item_place, item)
            body_lines = _with_margins(body, self.fill(item, body_width, 1))
            height = max(len(mark), len(body_lines))
            background = self.fill(row, inner, height)
            for y in range(height):
                left = mark[y] if y < len(mark) else background[y].crop(0, inner - body_width)
                right = body_lines[y] if y < len(body_lines) else background[y].crop(left.cell_length, inner)
                rows.append(Strip.join([left, right]))
        return Drawn(draw_box(widget, rows, width, len(rows) + widget.styles.gutter.height), widget.styles.margin)

    def _quote(self, node: Node, width: int, here: Place) -> Drawn:
        widget = self.stand_ins[here]
        if not node.children:  # without children the block is a Static showing no text: one line
            return Drawn(self._text(widget, Content(""), width), widget.styles.margin)
        inner = max(0, width - widget.styles.gutter.width)
        body = self.stack(node.children, inner, here, widget)
        lines = _with_margins(body, self.fill(widget, inner, 1))
        return Drawn(draw_box(widget, lines, width, len(lines) + widget.styles.gutter.height), widget.styles.margin)

    def _fence(self, node: Node, width: int, here: Place) -> Drawn:
        fence, label = self.stand_ins[here], self.stand_ins[(*here, "code")]
        app = self.host.app
        code_key = (node.code, node.lexer, app.native_ansi_color, app.current_theme.dark)
        if (code := self._highlighted.get(code_key)) is None:
            if len(self._highlighted) >= 64:
                self._highlighted.clear()
            code = self._highlighted[code_key] = MarkdownFence.highlight(*code_key)
        inner = max(0, width - fence.styles.gutter.width)
        natural = code.get_optimal_width(_rules(label), 0) + label.styles.gutter.width
        # wider code scrolls sideways in Textual; at the start it shows what fits (the answer keeps such
        # blocks as widgets when they are finished, see ``check``; this is for a narrower view later)
        lines = [line.crop(0, inner) for line in self._text(label, code, max(inner, natural))]
        return Drawn(draw_box(fence, lines, width, len(lines) + fence.styles.gutter.height), fence.styles.margin)

    def _table(self, node: Node, width: int, here: Place) -> Drawn:
        table, grid = self.stand_ins[here], self.stand_ins[(*here, "grid")]
        head, cell = self.stand_ins[(*here, "grid", "th")], self.stand_ins[(*here, "grid", "td")]
        columns = len(node.header)
        cells = [(head, self._inline((*here, "grid", "th"), token)) for token in node.header]
        cells += [(cell, self._inline((*here, "grid", "td"), token)) for row in node.rows for token in row]
        inner = max(0, width - table.styles.gutter.width)
        grid_inner = max(0, inner - grid.styles.gutter.width - 2)
        natural = [0] * columns
        minimum = [1] * columns
        for index, (widget, content) in enumerate(cells):
            gutter = widget.styles.gutter.width
            natural[index % columns] = max(
                natural[index % columns], content.get_optimal_width(_rules(widget), 0) + gutter
            )
            minimum[index % columns] = max(minimum[index % columns], content.get_minimal_width(_rules(widget)) + gutter)
        size = Size(grid_inner, 0)
        spans = resolve_spans(
            [Scalar.from_number(value) for value in natural],
            grid_inner,
            grid.styles.grid_gutter_vertical,
            size,
            self.host.app.viewport_size,
            minimum,
        )
        gutter_y = grid.styles.grid_gutter_horizontal
        natural_heights = [
            content.get_height(_rules(widget), max(0, spans[index % columns][1] - widget.styles.gutter.width))
            + widget.styles.gutter.height
            for index, (widget, content) in enumerate(cells)
        ]
        heights = [max(natural_heights[row : row + columns]) for row in range(0, len(cells), columns)]
        # the layout stretches every cell of a row to the row's height (header text sits at the bottom)
        drawn_cells = [
            self._text(
                widget, content, spans[index % columns][1], heights[index // columns] - widget.styles.gutter.height
            )
            for index, (widget, content) in enumerate(cells)
        ]
        offsets, y = [], 1
        for height in heights:
            offsets.append(y)
            y += height + gutter_y
        grid_height = y - gutter_y + 1
        canvas = self._keylines(grid, inner, grid_height, spans, offsets, heights)
        lines = []
        for y, line in enumerate(canvas):
            pieces, x = [], 0
            for row, (top, height) in enumerate(zip(offsets, heights, strict=True)):
                if top <= y < top + height:
                    for column, (left, cell_width) in enumerate(spans):
                        pieces += [line.crop(x, left + 1), drawn_cells[row * columns + column][y - top]]
                        x = left + 1 + cell_width
            pieces.append(line.crop(x, inner))
            lines.append(Strip.join(pieces))
        return Drawn(draw_box(table, lines, width, len(lines) + table.styles.gutter.height), table.styles.margin)

    def _keylines(
        self,
        grid: Widget,
        width: int,
        height: int,
        spans: list[tuple[int, int]],
        tops: list[int],
        heights: list[int],
    ) -> list[Strip]:
        """The grid's own drawing: its background and a keyline box around every cell."""
        key = ("keylines", id(grid), width, height, tuple(spans), tuple(tops), tuple(heights))
        if (known := self._memo.get(key)) is not None:
            return known
        line_style, color = grid.styles.keyline
        color = grid.background_colors[0] + color
        rectangles = [
            Rectangle(Offset(left, top - 1), cell_width + 2, row_height + 2, color, line_style)
            for top, row_height in zip(tops, heights, strict=True)
            for left, cell_width in spans
        ]
        drawing = Canvas(width, height).render(rectangles, grid.rich_style)
        content = Visual.to_strips(grid, visualize(grid, drawing), width, height, grid.visual_style)
        return self._remember(key, draw_box(grid, content, width, height))


def _rules(widget: Widget) -> RulesMap:
    """A widget's styles as the rules a visual measures itself with (as Textual passes them)."""
    return cast("RulesMap", widget.styles)


def _fixed_height(widget: Widget) -> int:
    height, gutter = widget.styles.height, widget.styles.gutter.height
    # border-box sizing: the rule's height holds padding and border, and never less than them
    return max(int(height.value) if height is not None and not height.is_auto else 1, gutter)


def _indent(block: Drawn, width: int, fill: list[Strip]) -> list[Strip]:
    """A block's lines with its left and right margins drawn in the parent's background."""
    left, right = block.margin.left, block.margin.right
    if not left and not right:
        return block.lines
    return [
        Strip.join([back.crop(0, left), line.crop(0, width - left - right), back.crop(width - right, width)])
        for line, back in zip(block.lines, fill, strict=True)
    ]


def _with_margins(body: Drawn, blank: list[Strip]) -> list[Strip]:
    """A stack's lines with its first top and last bottom margins as blank lines (inside a container)."""
    return blank * body.margin.top + body.lines + blank * body.margin.bottom
