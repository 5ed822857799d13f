"""The final answer: streamed Markdown drawn as lines, citations as numbered links, links never actions.

Textual's ``Markdown`` keeps a widget tree per block, and its ``append`` re-parses only from the
last top-level block on: every block before it can no longer change. :class:`Answer` takes the
same stream (Textual's ``MarkdownStream`` calls its ``append``) and draws the finished blocks once,
as lines, in :class:`~harmony_chat.tui.widgets.finished_blocks.FinishedBlocks`; the block being
written is drawn the same way, again as it grows, in a second one; when the answer ends it is
finished too. Blocks the line renderer does not know (and code wider than the view, which Textual
lets scroll sideways) stay Textual's widgets. What is drawn is the same either way: tests compare
the two cell by cell. Drawing lines takes Textual's private names
(:mod:`~harmony_chat.tui.textual_private`); where a Textual release lacks them, the answer is plain
Textual ``Markdown`` fed by ``MarkdownStream`` (the public way: the same on screen, slower).

The model's text is kept as written (:attr:`Answer.raw`); what is shown is its Markdown with
control characters made visible and citations ``【cursor†Lx-Ly】`` turned into numbered links to
the pages the browser read, with the list of sources under the answer once it is finished
(:mod:`harmony_chat.tui.citing`). A click on a link opens it only when it is a web link.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual.await_complete import AwaitComplete
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownStream

from harmony_chat.tui import textual_private
from harmony_chat.tui.block_render import BlockPainter
from harmony_chat.tui.block_styles import StandIns
from harmony_chat.tui.block_tree import Node, Unsupported, assign_bullets, parse_blocks, places
from harmony_chat.tui.citing import (
    HELD_BACK,
    OPEN,
    SourceLookup,
    Sources,
    answer_markdown,
    copy_markdown,
    sources_markdown,
)
from harmony_chat.tui.literal import visible
from harmony_chat.tui.textual_private import block_widgets, set_source, update_block
from harmony_chat.tui.widgets.finished_blocks import FinishedBlocks

WEB_SCHEMES = ("http", "https")
"""Link schemes a click on a link in an answer opens (in the browser); other links are only shown."""


def answer_parser() -> MarkdownIt:
    """The Markdown parser for answers: GitHub-like, with raw HTML shown as the text it is.

    A terminal cannot render HTML, and Textual drops HTML blocks and inline tags: the streaming view
    then also replaced the block before an HTML block with the block after it (Textual's
    ``Markdown.append`` assumes every top-level token makes a widget).
    """
    return MarkdownIt("gfm-like", {"html": False})


def top_level_blocks(tokens: list[Token]) -> list[list[Token]]:
    """``tokens`` split into one list per top-level block."""
    blocks: list[list[Token]] = []
    depth = 0
    for token in tokens:
        if depth == 0:
            blocks.append([])
        blocks[-1].append(token)
        depth += token.nesting
    return [block for block in blocks if block]


def _no_sources() -> Sources:
    return {}


class Answer(Markdown):
    """The final answer, streamed as Markdown (control characters made visible, citations as links).

    Args:
        sources: gives the pages the answer's citations can name (asked once a citation appears,
            and again when the answer is finished); None: no page can be cited.
    """

    DEFAULT_CSS = "Answer { margin: 0; padding: 0 1; background: transparent; }"

    def __init__(self, sources: SourceLookup | None = None) -> None:
        super().__init__("", classes="answer", open_links=False, parser_factory=answer_parser)
        self._stream: MarkdownStream | None = None
        self._lookup = sources or _no_sources
        self._sources: Sources | None = None
        self.raw = ""
        """The answer as the model wrote it."""
        self._shown = ""
        """The Markdown written to the stream so far."""
        self._plain = 0
        """How much of ``raw`` is shown, while it holds no citation (the fast path)."""
        self._diverged = False
        """What is shown can no longer be extended: the whole answer is shown again when it is finished."""
        self._cited = False
        """Whether the text holds a ``【`` (until then it is shown as it comes)."""
        self._parser = answer_parser()
        self._tail = ""
        """The source from the first line of the block being written on."""
        self._live: list[MarkdownBlock] = []
        """Textual's widgets for the block being written."""
        self._drawing: FinishedBlocks | None = None
        """The block being written, drawn (None while it is Textual's widgets, or there is none)."""
        self._finished_run: FinishedBlocks | None = None
        """Where the next finished blocks go (None: a new one after the last widget)."""
        self.stand_ins = StandIns(self)
        self._painter = BlockPainter(self.stand_ins)
        self.draws_lines = textual_private.line_drawing_missing is None
        """Whether finished blocks are drawn as lines (False: Textual's ``Markdown`` draws everything)."""

    @property
    def live_widgets(self) -> list[Widget]:
        """The widgets showing the block being written (none once the answer is finished)."""
        return [self._drawing] if self._drawing is not None else list(self._live)

    @property
    def sources(self) -> Sources:
        """The pages the answer's citations can name (asked for once)."""
        if self._sources is None:
            self._sources = self._lookup()
        return self._sources

    async def write(self, fragment: str) -> None:
        """Append a fragment of the model's text and show what of it is settled."""
        self.raw += fragment
        self._cited = self._cited or OPEN in fragment
        if not self._cited:  # no citation: show the new text as it is (the end held back)
            end = len(self.raw.rstrip(HELD_BACK))
            if end > self._plain:
                await self._send(visible(self.raw[self._plain : end]))
                self._plain = end
            return
        await self._extend(answer_markdown(self.raw, self.sources, final=False))

    async def _extend(self, markdown: str) -> None:
        """Show ``markdown`` if what is shown is the start of it (else the whole is shown at the end)."""
        if self._diverged or markdown == self._shown:
            return
        if not markdown.startswith(self._shown):
            self._diverged = True
            return
        await self._send(markdown[len(self._shown) :])

    async def _send(self, delta: str) -> None:
        """Write Markdown to the widget's stream (which calls :meth:`append`)."""
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        self._shown += delta
        await self._stream.write(delta)

    async def finish(self) -> None:
        """Show the rest (with the cited pages under it), flush and close the stream; the last block is finished too."""
        if self._sources is not None:
            self._sources = self._lookup()  # the pages as they are now
        cited = OPEN in self.raw
        whole = answer_markdown(self.raw, self.sources if cited else {}, final=True)
        whole += sources_markdown(self.raw, self.sources) if cited else ""
        if not self._diverged:
            await self._extend(whole)
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if not self.draws_lines:
            if self._diverged or self._shown != whole:
                self._shown, self._diverged = whole, False
                await self.update(whole)
            return
        async with self.lock:
            if self._diverged or self._shown != whole:
                await self._start_over(whole)
            await self._absorb(final=True)

    async def _start_over(self, markdown: str) -> None:
        """Drop everything shown; ``markdown`` becomes the whole answer's source (drawn by the final absorb)."""
        await self.remove_children()
        self.stand_ins.clear()  # removed with the children: mounted again as the answer is drawn
        self._live, self._drawing, self._finished_run = [], None, None
        self._shown, self._diverged = markdown, False
        self._tail = markdown
        set_source(self, markdown)

    def copy_text(self) -> str:
        """The answer to copy: as written, with citations as Markdown footnotes."""
        return copy_markdown(self.raw, self.sources) if OPEN in self.raw else self.raw

    def append(self, markdown: str) -> AwaitComplete:
        """Append Markdown: finished blocks are drawn once, the block being written stays live."""
        if not self.draws_lines:
            return super().append(markdown)
        set_source(self, self.source + markdown)
        self._tail += markdown

        async def absorb() -> None:
            async with self.lock:
                await self._absorb(final=False)

        return AwaitComplete(absorb())

    async def _absorb(self, final: bool) -> None:
        blocks = top_level_blocks(self._parser.parse(self._tail))
        finished, live = (blocks, []) if final else (blocks[:-1], blocks[-1:])
        with self.app.batch_update():
            if finished:
                await self._drop_live_widgets()
                await self._add_finished(finished)
            if live:
                await self._show_live(live[0])
            elif self._drawing is not None:
                await self._drawing.remove()
                self._drawing = None
        if final:
            self._tail = ""
        elif finished and live and live[0][0].map is not None:
            self._tail = "".join(self._tail.splitlines(keepends=True)[live[0][0].map[0] :])

    async def _drawable(self, tokens: list[Token]) -> list[Node]:
        """The drawable blocks of ``tokens`` with their stand-ins in place (or :class:`Unsupported`)."""
        nodes = parse_blocks(tokens)
        assign_bullets(nodes)
        await self.stand_ins.ensure(place for node in nodes for place in places(node))
        return nodes

    async def _drop_live_widgets(self) -> None:
        for widget in self._live:
            await widget.remove()
        self._live = []

    async def _show_live(self, tokens: list[Token]) -> None:
        """Show the block being written: drawn like finished ones where possible, else as Textual's widgets."""
        try:
            nodes = await self._drawable(tokens)
        except Unsupported:
            pass
        else:
            await self._drop_live_widgets()
            if self._drawing is None:
                self._drawing = FinishedBlocks(self._painter)
                await self.mount(self._drawing)
            self._drawing.replace(nodes)
            return
        if self._drawing is not None:
            await self._drawing.remove()
            self._drawing = None
        new = block_widgets(self, tokens)
        if self._live and new:
            try:
                await update_block(self._live[0], new[0])
            except IndexError:
                pass
            else:
                if new[0].parent is not None:  # Textual replaced the widget instead of updating it
                    self._live[0] = new[0]
                new = new[1:]
        if new:
            await self.mount_all(new)
            self._live += new

    async def _add_finished(self, blocks: list[list[Token]]) -> None:
        for tokens in blocks:
            try:
                nodes = await self._drawable(tokens)
                self._check(nodes)
            except Unsupported:
                widgets: list[Widget] = list(block_widgets(self, tokens))
                await self._mount_finished(widgets)
                self._finished_run = None
                continue
            if self._finished_run is None:
                self._finished_run = FinishedBlocks(self._painter)
                await self._mount_finished([self._finished_run])
            self._finished_run.add(nodes)

    def _check(self, nodes: list[Node]) -> None:
        """Raise :class:`Unsupported` for blocks that must stay widgets at the answer's width."""
        width = self.content_region.width or self.app.size.width
        for node in nodes:
            self._painter.check(node, width)

    async def _mount_finished(self, widgets: list[Widget]) -> None:
        live: list[Widget] = [self._drawing] if self._drawing is not None else list(self._live)
        if live:
            await self.mount_all(widgets, before=live[0])
        else:
            await self.mount_all(widgets)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Open web links in the browser; anything else (``app.quit``, ``file:``) is only named."""
        event.stop()
        if urlsplit(event.href).scheme.lower() in WEB_SCHEMES:
            self.app.open_url(event.href)
        else:
            self.notify(f"Not opened (not a web link): {event.href}", severity="warning")
