"""An answer's Markdown blocks as a small tree, the way Textual's ``Markdown`` turns tokens into widgets.

:func:`parse_blocks` follows ``Markdown._parse_markdown``: one node per block widget Textual would
make (paragraphs, headings, rules, lists and their items, quotes, code, tables), with the inline
token each shows. Anything else raises :class:`Unsupported`, and the answer keeps Textual's widget.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from markdown_it.token import Token
from textual.widgets import Markdown

from harmony_chat.tui.block_styles import Place


class Unsupported(Exception):
    """A block this renderer does not draw (it stays a Textual widget)."""


@dataclass
class Node:
    """One block of an answer, as Textual's Markdown would make a widget of it."""

    kind: str
    """``p``, ``h1``…``h6``, ``hr``, ``ul``, ``ol``, ``li``, ``quote``, ``fence``, ``table``."""
    inline: Token | None = None
    children: list[Node] = field(default_factory=list)
    bullet: str = ""
    code: str = ""
    lexer: str = ""
    header: list[Token | None] = field(default_factory=list)
    rows: list[list[Token | None]] = field(default_factory=list)


_OPEN = {
    "paragraph_open": "p",
    "bullet_list_open": "ul",
    "ordered_list_open": "ol",
    "list_item_open": "li",
    "blockquote_open": "quote",
    "table_open": "table",
}
_TABLE_PARTS = ("thead_open", "tbody_open", "tr_open", "th_open", "td_open")


def parse_blocks(tokens: Sequence[Token]) -> list[Node]:
    """The top-level blocks of ``tokens`` (markdown-it), as Textual's ``Markdown._parse_markdown`` sees them."""
    done: list[Node] = []
    stack: list[Node] = []
    cell: list[Token | None] | None = None
    for token in tokens:
        kind = token.type
        if kind == "heading_open":
            stack.append(Node(token.tag))
        elif kind in _OPEN:
            node = Node(_OPEN[kind])
            if kind == "list_item_open":
                node.bullet = token.info
            stack.append(node)
        elif kind in _TABLE_PARTS:
            if not stack or stack[-1].kind != "table":
                raise Unsupported(kind)
            table = stack[-1]
            if kind == "tr_open":
                cell = None
                if table.header:
                    table.rows.append([])
            elif kind in ("th_open", "td_open"):
                cell = table.header if kind == "th_open" else table.rows[-1]
                cell.append(None)
        elif kind in ("thead_close", "tbody_close", "tr_close", "th_close", "td_close"):
            cell = None if kind != "tr_close" else cell
        elif kind.endswith("_close"):
            node = stack.pop()
            (stack[-1].children if stack else done).append(node)
        elif kind == "inline":
            if cell is not None:
                cell[-1] = token
            elif stack:
                stack[-1].inline = token
        elif kind in ("fence", "code_block"):
            node = Node("fence", code=token.content.rstrip(), lexer=token.info)
            (stack[-1].children if stack else done).append(node)
        elif kind == "hr":
            (stack[-1].children if stack else done).append(Node("hr"))
        else:
            raise Unsupported(kind)
    for node in done:
        if node.kind == "table" and node.rows and not node.rows[-1]:
            node.rows.pop()
        if node.kind == "table" and (not node.header or any(len(row) != len(node.header) for row in node.rows)):
            raise Unsupported("a table without a header or with ragged rows")
    return done


def places(node: Node, parent: Place = ()) -> Iterator[Place]:
    """The stand-in places drawing ``node`` needs."""
    if node.kind in ("ul", "ol"):
        here = (*parent, node.kind)
        yield from (here, (*here, "row"), (*here, "row", "bullet"), (*here, "row", "item"))
        for item in node.children:
            for child in item.children:
                yield from places(child, (*here, "row", "item"))
    elif node.kind == "quote":
        yield (*parent, "quote")
        for child in node.children:
            yield from places(child, (*parent, "quote"))
    elif node.kind == "fence":
        yield from ((*parent, "fence"), (*parent, "fence", "code"))
    elif node.kind == "table":
        here = (*parent, "table")
        yield from (here, (*here, "grid"), (*here, "grid", "th"), (*here, "grid", "td"))
    else:
        yield (*parent, node.kind)


def bullets(node: Node) -> list[str]:
    """The bullet of each item, as Textual's list widgets write them."""
    if node.kind == "ol":
        try:
            start = int(node.children[0].bullet) if node.children else 1
        except ValueError:
            start = 1
        size = max((len(f"{number}. ") for number in range(start, start + len(node.children))), default=0)
        return [f"{number}. ".rjust(size + 1) for number in range(start, start + len(node.children))]
    return [item.bullet for item in node.children]


def assign_bullets(nodes: list[Node], depth: int = 0, bullets: Sequence[str] = Markdown.BULLETS) -> None:
    """Give unordered items their bullet: Textual picks it by how deep the item sits in other unordered items."""
    for node in nodes:
        if node.kind == "ul":
            for item in node.children:
                item.bullet = bullets[depth % len(bullets)]
                assign_bullets(item.children, depth + 1, bullets)
        elif node.kind == "ol":
            for item in node.children:
                assign_bullets(item.children, depth, bullets)
        else:
            assign_bullets(node.children, depth, bullets)
