"""The browser's pages and cursors, and the line-numbered views the model reads. No network.

As in gpt-oss's reference browser, every ``search``, ``open`` and ``find`` shows a page under a new
cursor (scrolling too); the cursor is the index into the conversation's page stack, and a view is::

    [3] Sea otter (https://en.example.org/wiki/Sea_otter)
    **viewing lines [0 - 41] of 120**

    L0: # Sea otter
    L1: ...

Citations ``【3†L10-L15】`` name a cursor and lines of its page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from harmony_chat.tools.browser.extract import defang, host_of, one_line, wrap_lines

PageKind = Literal["page", "search", "find"]
FIND_WINDOW = 4
"""Lines shown for each ``find`` match."""
FIND_MAX_RESULTS = 50


class UsageError(Exception):
    """The model used the tool wrongly (no such cursor, link or line); the message tells it how."""


@dataclass(frozen=True)
class Link:
    """Where a link id on a page leads."""

    url: str
    title: str = ""
    line: int | None = None
    """For ``find`` results: the line of the page searched that the match is on."""


@dataclass(frozen=True)
class Page:
    """One page as the model sees it."""

    url: str
    """The page's URL; ``""`` for search results."""
    title: str
    lines: list[str]
    kind: PageKind = "page"
    links: dict[int, Link] = field(default_factory=dict)
    origin_lines: dict[int, int] = field(default_factory=dict)
    """For ``find`` results: line of this page → line of the page searched."""
    origin_title: str = ""
    """For ``find`` results: the title of the page searched."""


def make_page(url: str, title: str, text: str, links: list[str], width: int) -> Page:
    """A fetched page: its text wrapped to lines, its link ids mapped to URLs."""
    return Page(url, one_line(title) or url, wrap_lines(text, width), "page", {i: Link(u) for i, u in enumerate(links)})


def search_page(query: str, provider: str, hits: list[tuple[str, str, str]], width: int) -> Page:
    """The results of a search as a page: one ``【id†title†domain】`` block per (title, url, snippet)."""
    lines = [f"# Search results for: {one_line(query)}", f"(from {provider})", ""]
    links: dict[int, Link] = {}
    for index, (title, url, snippet) in enumerate(hits):
        label = one_line(title, 120).replace("†", "‡") or host_of(url) or url
        lines.append(f"* 【{index}†{label}†{host_of(url) or url}】")
        lines.append(f"  {url}")
        if snippet.strip():
            lines.extend(wrap_lines("  " + one_line(snippet, 600), width))
        lines.append("")
        links[index] = Link(url, one_line(title, 200) or url)
    if not hits:
        lines.append("No results.")
    return Page("", f"Search results for: {one_line(query)}", lines, "search", links)


def _without_markers(line: str) -> str:
    """A line with each link marker ``【id†text…】`` reduced to its text (for ``find``)."""
    out: list[str] = []
    rest = line
    while "【" in rest and "】" in rest[rest.index("【") :]:
        start = rest.index("【")
        end = rest.index("】", start)
        out.append(rest[:start])
        parts = rest[start + 1 : end].split("†")
        out.append(parts[1] if len(parts) > 1 else parts[0])
        rest = rest[end + 1 :]
    return "".join(out) + rest


def find_in_page(page: Page, pattern: str) -> Page:
    """The matches of ``pattern`` (case-insensitive) in ``page``, each with a few lines, as a new page."""
    needle = " ".join(pattern.lower().split())
    plain = [_without_markers(line) for line in page.lines]
    lowered = [" ".join(line.lower().split()) for line in plain]
    lines: list[str] = []
    links: dict[int, Link] = {}
    origin: dict[int, int] = {}
    index = 0
    while index < len(plain) and len(links) < FIND_MAX_RESULTS:
        joined = lowered[index] + (" " + lowered[index + 1] if index + 1 < len(lowered) else "")
        # A match starts on this line (it may run on into the next one, where wrapping split it).
        if needle and 0 <= joined.find(needle) < max(len(lowered[index]), 1) and lowered[index]:
            match_id = len(links)
            links[match_id] = Link(page.url, page.title, index)
            if lines:
                lines.append("")
            lines.append(f"# 【{match_id}†match at L{index}】")
            for offset, text in enumerate(plain[index : index + FIND_WINDOW]):
                origin[len(lines)] = index + offset
                lines.append(text)
            index += FIND_WINDOW
        else:
            index += 1
    shown = defang(pattern)
    if not links:
        lines = [f"No `find` results for pattern: `{shown}`"]
    title = f"Find results for text: `{one_line(shown, 100)}` in `{page.title}`"
    return Page(page.url, title, lines, "find", links, origin, page.title)


def view_end(lines: list[str], loc: int, num_lines: int, view_chars: int, max_lines: int) -> int:
    """The line after the last one a view from ``loc`` shows (``num_lines`` <= 0: about ``view_chars``)."""
    if num_lines > 0:
        return min(len(lines), loc + min(num_lines, max_lines))
    used = 0
    end = loc
    while end < len(lines) and end - loc < max_lines:
        used += len(lines[end]) + 8
        if used > view_chars and end > loc:
            break
        end += 1
    return end


def render_view(page: Page, cursor: int, loc: int, num_lines: int, *, view_chars: int, max_lines: int) -> str:
    """The text the model reads for ``page`` under ``cursor``, from line ``loc``."""
    total = len(page.lines)
    if loc >= total:
        raise UsageError(f"Invalid location parameter: `{loc}`. Cannot exceed page maximum of {total - 1}.")
    loc = max(loc, 0)
    end = view_end(page.lines, loc, num_lines, view_chars, max_lines)
    header = f"[{cursor}] {page.title}" + (f" ({page.url})" if page.url else "")
    body = "\n".join(f"L{number}: {page.lines[number]}" for number in range(loc, end))
    return f"{header}\n**viewing lines [{loc} - {end - 1}] of {total - 1}**\n\n{body}"


class BrowserState:
    """One conversation's page stack: cursor ``n`` is the ``n``-th page shown. Not thread-safe."""

    def __init__(self) -> None:
        self.pages: list[Page] = []
        self.fetched: dict[str, Page] = {}
        """Pages already downloaded, by the URL asked for and the URL they came from."""

    @property
    def current(self) -> int:
        """The newest cursor, or -1 when nothing was shown yet."""
        return len(self.pages) - 1

    def push(self, page: Page) -> int:
        """Show ``page`` under a new cursor; return it."""
        self.pages.append(page)
        return self.current

    def page(self, cursor: int) -> Page:
        """The page under ``cursor`` (-1 or None: the newest); raise ``UsageError``."""
        if not self.pages:
            raise UsageError("No pages to access! Use `search` or `open` with a URL first.")
        if cursor == -1:
            return self.pages[-1]
        if not 0 <= cursor < len(self.pages):
            raise UsageError(f"Cursor `{cursor}` is out of range. Available cursor indices: [0 - {self.current}].")
        return self.pages[cursor]
