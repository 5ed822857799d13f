"""Citations in the model's answer, ``【3†L10-L15】`` or ``【3†L10】``, as numbered sources. Pure functions.

``find_citations(text, sources)`` finds every citation and maps it to a numbered source (title,
URL, lines) from the browser's pages by cursor: ``BrowserTool.sources()`` while the conversation
runs, or ``sources_from_transcript`` rebuilt from the browser's tool messages (exports of saved
conversations). One number per URL, in order of first citation.

A citation whose cursor is unknown, or that points at search results without naming a result,
cannot become a link: it is removed from the shown text (with the space before it), never shown as
raw ``【】`` markup; ``Citation.number`` is None for it. Renderers: ``to_markdown`` (footnotes
``[^1]`` for exports), ``to_inline_markdown`` (``[[1]](url)`` links, for a Markdown view) and
``link_entries`` (spans, numbers, titles and URLs, for a TUI that draws its own links).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pages bring the fetcher and its HTTP client: not needed to cite
    from harmony_chat.tools.browser.pages import Page, PageKind

CITATION = re.compile(r"【(?P<cursor>\d+)†(?P<body>[^【】\n]{0,200}?)】")
PARTIAL = re.compile(r"【\d*(?:†[^【】\n]{0,200})?\Z")
_LINES = re.compile(r"^\s*L(?P<first>\d+)(?:\s*[-–]\s*L?(?P<last>\d+))?")
_LINK = re.compile(r"【(?P<id>\d+)†")


@dataclass(frozen=True)
class PageRecord:
    """What a citation needs to know of the page under one cursor."""

    url: str
    title: str
    kind: PageKind = "page"
    lines: Mapping[int, str] = field(default_factory=dict)
    links: Mapping[int, tuple[str, str]] = field(default_factory=dict)
    """Link id → (URL, title); used for search results."""
    origin_lines: Mapping[int, int] = field(default_factory=dict)
    """For ``find`` results: line of the results → line of the page searched."""


def record_of(page: Page) -> PageRecord:
    """The citation record of a live browser page."""
    title = page.origin_title if page.kind == "find" and page.origin_title else page.title
    links = {link_id: (link.url, link.title) for link_id, link in page.links.items()}
    return PageRecord(page.url, title, page.kind, dict(enumerate(page.lines)), links, page.origin_lines)


@dataclass(frozen=True)
class Citation:
    """One citation in the text."""

    start: int
    end: int
    """The citation's span in the text: ``text[start:end]`` is ``【3†L10-L15】``."""
    cursor: int
    number: int | None
    """The source's number (1, 2, ...); None when it could not be resolved."""
    title: str = ""
    url: str = ""
    lines: tuple[int, int] | None = None
    """The cited lines of the page (first, last), when the citation names lines of a page."""


@dataclass(frozen=True)
class CitationLink:
    """A resolved citation for the TUI: replace ``text[span[0]:span[1]]`` with link ``number`` to ``url``."""

    span: tuple[int, int]
    number: int
    title: str
    url: str


def strip_partial(text: str) -> str:
    """``text`` without an unfinished citation at its end (while an answer streams)."""
    return PARTIAL.sub("", text)


def _cited_lines(body: str) -> tuple[int, int] | None:
    match = _LINES.match(body)
    if match is None:
        return None
    first = int(match.group("first"))
    last = int(match.group("last")) if match.group("last") else first
    return (first, last) if last >= first else (last, first)


def _result_near(record: PageRecord, lines: tuple[int, int] | None) -> tuple[str, str] | None:
    """The search result a citation of search-result lines points at: named in them, or just above."""
    if lines is None:
        return None
    first, last = lines
    for number in [*range(first, last + 1), *range(first - 1, max(first - 60, -1), -1)]:
        match = _LINK.search(record.lines.get(number, ""))
        if match and int(match.group("id")) in record.links:
            return record.links[int(match.group("id"))]
    return None


def _resolve(record: PageRecord, lines: tuple[int, int] | None) -> tuple[str, str, tuple[int, int] | None] | None:
    """(title, URL, lines) of a citation of ``record``, or None."""
    if record.kind == "search":
        found = _result_near(record, lines)
        return (found[1] or found[0], found[0], None) if found else None
    if not record.url:
        return None
    if record.kind == "find" and lines is not None:
        first, last = record.origin_lines.get(lines[0]), record.origin_lines.get(lines[1])
        if first is None and last is None:
            lines = None
        else:
            lines = (first if first is not None else last, last if last is not None else first)  # type: ignore[assignment]
    return record.title or record.url, record.url, lines


def find_citations(text: str, sources: Mapping[int, PageRecord]) -> list[Citation]:
    """Every citation in ``text``, numbered by source (one number per URL, in order of appearance)."""
    numbers: dict[str, int] = {}
    found: list[Citation] = []
    for match in CITATION.finditer(text):
        cursor = int(match.group("cursor"))
        record = sources.get(cursor)
        resolved = _resolve(record, _cited_lines(match.group("body"))) if record is not None else None
        if resolved is None:
            found.append(Citation(match.start(), match.end(), cursor, None))
            continue
        title, url, lines = resolved
        number = numbers.setdefault(url, len(numbers) + 1)
        found.append(Citation(match.start(), match.end(), cursor, number, title, url, lines))
    return found


def replace_citations(text: str, citations: Iterable[Citation], mark: Callable[[Citation], str]) -> str:
    """``text`` with each resolved citation replaced by ``mark(citation)`` and each unresolved one removed."""
    parts: list[str] = []
    position = 0
    for citation in sorted(citations, key=lambda item: item.start):
        before = text[position : citation.start]
        if citation.number is None:
            after = text[citation.end : citation.end + 1]
            if not after or not after.isalnum():
                before = before.rstrip(" \t")
            parts.append(before)
        else:
            parts.append(before + mark(citation))
        position = citation.end
    parts.append(text[position:])
    return "".join(parts)


def link_entries(citations: Iterable[Citation]) -> list[CitationLink]:
    """The resolved citations as (span, number, title, url), in text order."""
    return [
        CitationLink((item.start, item.end), item.number, item.title, item.url)
        for item in sorted(citations, key=lambda item: item.start)
        if item.number is not None
    ]


@dataclass(frozen=True)
class Source:
    """One numbered source and every range of its lines that was cited."""

    number: int
    title: str
    url: str
    lines: tuple[tuple[int, int], ...]


def numbered_sources(citations: Iterable[Citation]) -> list[Source]:
    """The distinct sources cited, by number, each with its cited line ranges (in order, no repeats)."""
    sources: dict[int, Source] = {}
    for item in sorted(citations, key=lambda item: item.start):
        if item.number is None:
            continue
        known = sources.get(item.number) or Source(item.number, item.title, item.url, ())
        if item.lines is not None and item.lines not in known.lines:
            known = Source(known.number, known.title, known.url, (*known.lines, item.lines))
        sources[item.number] = known
    return [sources[number] for number in sorted(sources)]


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def escape_markdown(text: str) -> str:
    """``text`` with Markdown's special characters backslash-escaped (titles come from web pages)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def markdown_url(url: str) -> str:
    """``url`` as a Markdown link destination: in angle brackets, with the characters that break them escaped."""
    return "<" + url.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E").replace("\n", "") + ">"


def _line_text(lines: tuple[tuple[int, int], ...]) -> str:
    if not lines:
        return ""
    shown = ", ".join(f"L{first}" if first == last else f"L{first}-L{last}" for first, last in lines)
    return f" (lines {shown})"


def to_markdown(text: str, citations: list[Citation]) -> str:
    """``text`` with citations as Markdown footnotes ``[^1]`` and the footnotes after it (for exports)."""
    body = replace_citations(text, citations, lambda item: f"[^{item.number}]")
    sources = numbered_sources(citations)
    if not sources:
        return body
    notes = [
        f"[^{source.number}]: [{escape_markdown(source.title)}]({markdown_url(source.url)}){_line_text(source.lines)}"
        for source in sources
    ]
    return body.rstrip() + "\n\n" + "\n".join(notes) + "\n"


def to_inline_markdown(text: str, citations: list[Citation]) -> str:
    """``text`` with each citation as a numbered Markdown link ``[[1]](url)`` (for a Markdown view)."""
    return replace_citations(text, citations, lambda item: f"[[{item.number}]]({markdown_url(item.url)})")


def cite_markdown(text: str, sources: Mapping[int, PageRecord], *, footnotes: bool = True) -> str:
    """``text`` with its citations rendered: footnotes (``footnotes``) or inline numbered links."""
    citations = find_citations(text, sources)
    return to_markdown(text, citations) if footnotes else to_inline_markdown(text, citations)
