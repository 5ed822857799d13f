"""Citations in ``ask``'s answer: ``【cursor†Lx-Ly】`` becomes ``[1]`` on stdout, and the sources follow.

The model cites the browser's pages as ``【3†L10-L15】``. On stdout these never show as raw
brackets: a citation the browser's pages resolve becomes a numbered reference ``[n]`` (one number
per URL, in order of first citation), one they do not resolve is dropped, and the answer ends with
the numbered sources, ``[1] Title <url>``. While the answer streams, an unfinished ``【…`` at the
end of what has arrived is held back until it closes, and so are trailing spaces (a dropped
citation takes the space before it along); when the answer ends inside a citation (cut off), that
part is dropped, and any other unclosed ``【`` text is shown as written. ``--json`` keeps the
model's raw text in its deltas and adds one ``citations`` event with the resolved list after the
answer.

Nothing is imported from the browser until an answer contains ``【``: answers without citations
stream unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harmony_chat.tools.browser import Citation, PageRecord

SourcesGetter = Callable[[], Mapping[int, "PageRecord"]]
"""Gives the pages citations can name, by cursor (the conversation's ``citation_sources``)."""
MARK = "【"
CUT_OFF = re.compile(r"【\d+(?:†[^【】\n]{0,200})?\Z")
"""A citation the answer ended in the middle of (cut off): dropped. Other unclosed ``【`` text is shown."""


def _no_sources() -> Mapping[int, PageRecord]:
    return {}


def one_line(text: str) -> str:
    """``text`` on one line, without control characters (titles and URLs come from web pages)."""
    shown = "".join(" " if unicodedata.category(char).startswith("C") else char for char in text)
    return " ".join(shown.split())


def numbered(text: str, citations: list[Citation]) -> str:
    """``text`` with each resolved citation as ``[n]`` and each unresolved one removed."""
    from harmony_chat.tools.browser.citations import replace_citations

    return replace_citations(text, citations, lambda item: f"[{item.number}]")


def source_lines(citations: list[Citation]) -> list[str]:
    """The numbered sources the citations name: ``[1] Title <url>``, one line each."""
    from harmony_chat.tools.browser import numbered_sources

    lines = []
    for source in numbered_sources(citations):
        title, url = one_line(source.title), one_line(source.url)
        lines.append(f"[{source.number}] {title} <{url}>" if title and title != url else f"[{source.number}] <{url}>")
    return lines


def citations_payload(text: str, sources: Mapping[int, PageRecord]) -> dict[str, object] | None:
    """The ``--json`` ``citations`` event for an answer's full ``text``, or None when it cites nothing.

    ``text`` is the answer with ``[n]`` references (as stdout shows it), ``sources`` the numbered
    sources with the page lines cited, and ``citations`` each citation's span in the raw text (in
    characters, as Python counts them), its cursor and number (null: unresolved, left out).
    """
    if MARK not in text:
        return None
    from harmony_chat.tools.browser import find_citations, numbered_sources

    found = find_citations(text, sources)
    if not found:
        return None
    return {
        "type": "citations",
        "text": numbered(text, found),
        "sources": [
            {"number": item.number, "title": item.title, "url": item.url, "lines": [list(pair) for pair in item.lines]}
            for item in numbered_sources(found)
        ],
        "citations": [
            {"start": item.start, "end": item.end, "cursor": item.cursor, "number": item.number} for item in found
        ],
    }


class CitedAnswer:
    """One answer message as it streams: what to write of it now, and the sources at its end.

    Each piece written is a prefix of the final rendering, so the pieces add up to exactly
    ``numbered(text)`` followed by the sources list.
    """

    def __init__(self, sources: SourcesGetter = _no_sources) -> None:
        self._get_sources = sources
        self._sources: Mapping[int, PageRecord] | None = None
        self.text = ""
        """The model's raw text so far."""
        self.written = ""
        """What has been handed out for stdout so far."""
        self.citations: list[Citation] = []

    def _render(self, text: str) -> str:
        if MARK not in text:
            self.citations = []
            return text
        from harmony_chat.tools.browser import find_citations

        if self._sources is None:
            self._sources = self._get_sources()
        self.citations = find_citations(text, self._sources)
        return numbered(text, self.citations)

    def _advance(self, rendered: str) -> str:
        if not rendered.startswith(self.written):  # cannot happen with prefix-stable rendering; never rewrite
            return ""
        piece = rendered[len(self.written) :]
        self.written = rendered
        return piece

    def feed(self, delta: str) -> str:
        """Take the next piece of the model's text; return what can be written now."""
        from_here = self.text + delta
        self.text = from_here
        if MARK in from_here:
            from harmony_chat.tools.browser import strip_partial

            from_here = strip_partial(from_here)
        return self._advance(self._render(from_here).rstrip(" \t"))

    def finish(self) -> tuple[str, list[str]]:
        """The rest of the answer (a citation cut off at its very end is dropped) and its sources."""
        rest = self._advance(self._render(CUT_OFF.sub("", self.text)))
        return rest, source_lines(self.citations) if self.citations else []
