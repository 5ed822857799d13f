"""The final answer: Markdown streamed through ``MarkdownStream``, citations as numbered links, links never actions.

The model's text is kept as written (:attr:`Answer.raw`); what is shown is its Markdown with
control characters made visible and citations ``【cursor†Lx-Ly】`` turned into numbered links to
the pages the browser read, with the list of sources under the answer once it is finished
(:mod:`harmony_chat.tui.citing`). A click on a link opens it only when it is a web link.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

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

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
WEB_SCHEMES = ("http", "https")
"""Link schemes a click on a link in an answer opens (in the browser); other links are only shown."""


def code_blocks(markdown: str) -> list[str]:
    """Return the contents of the fenced code blocks in ``markdown``."""
    return [match.group(1).rstrip("\n") for match in _FENCE.finditer(markdown)]


def answer_parser() -> MarkdownIt:
    """The Markdown parser for answers: GitHub-like, with raw HTML shown as the text it is.

    A terminal cannot render HTML, and Textual drops HTML blocks and inline tags: the streaming view
    then also replaced the block before an HTML block with the block after it (Textual's
    ``Markdown.append`` assumes every top-level token makes a widget).
    """
    return MarkdownIt("gfm-like", {"html": False})


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
                await self._append(visible(self.raw[self._plain : end]))
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
        await self._append(markdown[len(self._shown) :])

    async def _append(self, delta: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        self._shown += delta
        await self._stream.write(delta)

    async def finish(self) -> None:
        """Show the rest (with the cited pages under it), flush and close the stream."""
        if self._sources is not None:
            self._sources = self._lookup()  # the pages as they are now
        whole = answer_markdown(self.raw, self.sources if OPEN in self.raw else {}, final=True)
        whole += sources_markdown(self.raw, self.sources) if OPEN in self.raw else ""
        if not self._diverged:
            await self._extend(whole)
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if self._diverged or self._shown != whole:
            self._shown, self._diverged = whole, False
            await self.update(whole)

    def copy_text(self) -> str:
        """The answer to copy: as written, with citations as Markdown footnotes."""
        return copy_markdown(self.raw, self.sources) if OPEN in self.raw else self.raw

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Open web links in the browser; anything else (``app.quit``, ``file:``) is only named."""
        event.stop()
        if urlsplit(event.href).scheme.lower() in WEB_SCHEMES:
            self.app.open_url(event.href)
        else:
            self.notify(f"Not opened (not a web link): {event.href}", severity="warning")
