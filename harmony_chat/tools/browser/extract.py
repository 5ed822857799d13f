"""Turn a downloaded page into the text the model reads: main text, title and numbered links.

HTML goes through ``trafilatura`` (main content, headings, lists, tables, links as Markdown), whose
links become gpt-oss's link markers ``【{id}†{text}】`` (``【{id}†{text}†{domain}】`` for another
site), the ids ``open`` takes. Brackets ``【】`` in the page itself become ``〖〗`` so a page cannot
forge a link or a citation. Text is wrapped to lines; citations count those lines.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from html import unescape
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:  # the fetcher's HTTP client is not needed to read a page
    from harmony_chat.tools.browser.fetch import Fetched

_MARKDOWN_LINK = re.compile(
    r"(?<!!)\[(?P<text>[^\[\]\n]*)\]\((?:<(?P<angle>[^<>\n]*)>|(?P<plain>(?:[^()\s]|\([^()\s]*\))*))"
    r"(?:\s+\"[^\"\n]*\")?\)"
)
_TITLE_TAG = re.compile(rb"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
NO_TEXT = "(this page has no readable text)"


@dataclass(frozen=True)
class Extracted:
    """A page as the model reads it, before wrapping."""

    title: str
    text: str
    links: list[str] = field(default_factory=list)
    """Link ids are indexes into this list of absolute http(s) URLs."""


def defang(text: str) -> str:
    """Replace the brackets of link markers and citations, so page text cannot forge either."""
    return text.replace("【", "〖").replace("】", "〗")


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line, whitespace collapsed, brackets defanged, cut to ``limit`` characters."""
    flat = " ".join(defang(_CONTROL.sub(" ", text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def host_of(url: str) -> str:
    """The host name of ``url`` (``""`` when it has none)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def decode(body: bytes, charset: str | None) -> str:
    """Bytes to text with the declared charset, else UTF-8; undecodable bytes become U+FFFD."""
    if charset:
        try:
            return body.decode(charset)
        except (LookupError, UnicodeDecodeError):
            pass
    return body.decode("utf-8", errors="replace")


def clean_text(text: str) -> str:
    """Normalize newlines, drop control characters (tabs become spaces) and defang brackets."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return defang(_CONTROL.sub("", text)).strip("\n")


class LinkTable:
    """Gives each distinct URL of a page one id, in order of first appearance."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self._ids: dict[str, int] = {}

    def marker(self, url: str, text: str, page_url: str) -> str:
        """The marker for a link: ``【id†text】``, with the domain when it leaves the page's site."""
        link_id = self._ids.get(url)
        if link_id is None:
            link_id = self._ids[url] = len(self.urls)
            self.urls.append(url)
        label = one_line(text, 80).replace("†", "‡") or host_of(url) or url
        host = host_of(url)
        return f"【{link_id}†{label}】" if host == host_of(page_url) else f"【{link_id}†{label}†{host}】"


def _links_to_markers(markdown: str, page_url: str, table: LinkTable) -> str:
    def replace(match: re.Match[str]) -> str:
        text = match.group("text")
        target = (match.group("angle") or match.group("plain") or "").strip()
        absolute = urljoin(page_url, target) if target else ""
        if urlsplit(absolute).scheme.lower() not in ("http", "https"):
            return text
        return table.marker(absolute, text, page_url)

    return _MARKDOWN_LINK.sub(replace, markdown)


def html_title(body: bytes) -> str:
    """The text of the ``<title>`` element, or ``""``."""
    match = _TITLE_TAG.search(body[:200_000])
    return one_line(unescape(match.group(1).decode("utf-8", errors="replace"))) if match else ""


def extract_html(body: bytes, url: str) -> Extracted:
    """The main text of an HTML page with its links numbered, and its title."""
    import trafilatura  # heavy-ish import, only when a page is opened

    markdown = trafilatura.extract(
        body,
        url=url,
        output_format="markdown",
        include_links=True,
        include_tables=True,
        include_images=False,
        include_comments=False,
        include_formatting=True,
        favor_recall=True,
    )
    if not markdown or not markdown.strip():
        markdown = trafilatura.html2txt(body) or ""
    title = html_title(body)
    if not title:
        metadata = trafilatura.extract_metadata(body)
        title = one_line(metadata.title) if metadata is not None and metadata.title else ""
    table = LinkTable()
    text = _links_to_markers(clean_text(markdown), url, table)
    return Extracted(title or host_of(url) or url, text or NO_TEXT, table.urls)


def extract_text(body: bytes, charset: str | None, url: str) -> Extracted:
    """A plain-text page as it is, titled by the last part of its path."""
    text = clean_text(decode(body, charset))
    path = urlsplit(url).path.rstrip("/")
    name = path.rsplit("/", 1)[-1] if path else ""
    return Extracted(one_line(name) or host_of(url) or url, text or NO_TEXT)


def extract(fetched: Fetched, *, view_source: bool = False) -> Extracted:
    """The model's view of a fetched page (``view_source``: the raw text, for HTML too)."""
    if fetched.kind == "html" and not view_source:
        return extract_html(fetched.body, fetched.url)
    page = extract_text(fetched.body, fetched.charset, fetched.url)
    if fetched.kind == "html":
        return Extracted(f"Source of {html_title(fetched.body) or page.title}", page.text)
    return page


_MARKER = re.compile(r"【[^【】\n]*】")
_NBSP = "\u00a0"


def wrap_lines(text: str, width: int) -> list[str]:
    """Wrap ``text`` to ``width`` columns, keeping empty lines, indentation and link markers whole."""
    lines: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line.rstrip())
            continue
        glued = _MARKER.sub(lambda match: match.group(0).replace(" ", _NBSP), line)
        indent = line[: len(line) - len(line.lstrip())][: width // 2]
        pieces = textwrap.wrap(
            glued, width=width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False
        )
        for piece in pieces or [""]:
            piece = piece.replace(_NBSP, " ")
            # A word longer than a few lines (base64, minified code) is cut, so no line is huge.
            longest = 4 * width
            lines.extend(piece[start : start + longest] for start in range(0, len(piece), longest))
    return lines or [""]
