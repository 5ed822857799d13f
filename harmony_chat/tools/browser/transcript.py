"""Rebuild the citation sources of a saved conversation from the browser's own tool messages.

A saved conversation keeps every ``browser.*`` result the model read, and each view starts with
``[cursor] title (url)`` and numbers its lines, so the pages a citation can name are recoverable
without the live browser: ``sources_from_transcript(texts)`` gives what ``BrowserTool.sources()``
gives, for the lines that were shown. When a conversation ran the browser more than once (the app
was restarted), cursors repeat and the later page wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from harmony_chat.tools.browser.citations import PageRecord
from harmony_chat.tools.browser.pages import FIND_WINDOW

_HEADER = re.compile(r"^\[(?P<cursor>\d+)\] (?P<rest>.*)$")
_SCROLL = re.compile(r"^\*\*viewing lines \[\d+ - \d+\] of -?\d+\*\*$")
_LINE = re.compile(r"^L(?P<number>\d+): ?(?P<text>.*)$")
_RESULT = re.compile(r"^\* 【(?P<id>\d+)†(?P<title>[^†】]*)")
_MATCH = re.compile(r"^# 【\d+†match at L(?P<line>\d+)】$")
_FIND_TITLE = re.compile(r"^Find results for text: `.*` in `(?P<title>.*)`$")
SEARCH_TITLE = "Search results for: "


def _split_header(rest: str) -> tuple[str, str]:
    """(title, url) from the header after the cursor: ``Title (https://...)`` or just ``Title``."""
    if rest.endswith(")"):
        start = rest.rfind(" (http")
        if start >= 0:
            return rest[:start], rest[start + 2 : -1]
    return rest, ""


def parse_view(text: str) -> tuple[int, PageRecord] | None:
    """The cursor and record of one browser view, or None when ``text`` is not one (an error)."""
    rows = text.split("\n")
    if len(rows) < 2 or not _SCROLL.match(rows[1]):
        return None
    header = _HEADER.match(rows[0])
    if header is None:
        return None
    title, url = _split_header(header.group("rest"))
    lines: dict[int, str] = {}
    for row in rows[3:]:
        match = _LINE.match(row)
        if match:
            lines[int(match.group("number"))] = match.group("text")
    if title.startswith(SEARCH_TITLE) and not url:
        links: dict[int, tuple[str, str]] = {}
        for number, line in lines.items():
            result = _RESULT.match(line)
            following = lines.get(number + 1, "").strip()
            if result and following.startswith(("http://", "https://")):
                links[int(result.group("id"))] = (following, result.group("title"))
        return int(header.group("cursor")), PageRecord("", title, "search", lines, links)
    found = _FIND_TITLE.match(title)
    if found:
        origin: dict[int, int] = {}
        for number, line in lines.items():
            match = _MATCH.match(line)
            if match is None:
                continue
            for offset in range(1, FIND_WINDOW + 1):
                if number + offset not in lines or _MATCH.match(lines[number + offset]):
                    break
                origin[number + offset] = int(match.group("line")) + offset - 1
        return int(header.group("cursor")), PageRecord(url, found.group("title"), "find", lines, {}, origin)
    return int(header.group("cursor")), PageRecord(url, title, "page", lines)


def sources_from_transcript(texts: Iterable[str]) -> dict[int, PageRecord]:
    """Cursor → page record, from the texts of a conversation's ``browser.*`` tool messages in order."""
    sources: dict[int, PageRecord] = {}
    for text in texts:
        parsed = parse_view(text)
        if parsed is not None:
            sources[parsed[0]] = parsed[1]
    return sources
