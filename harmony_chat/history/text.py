"""Text rules of the history: automatic titles, the folded form search matches on, and snippets.

Search matches substrings of *folded* text (compatibility forms unified, Latin accents dropped,
case folded), so ``tokyo`` finds ``Tōkyō``, ``東京`` finds ``東京の天気``, ``Прив`` finds ``Привет``.
Snippets are cut from the original text, with the matched ranges given as offsets (never markers).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

TITLE_LENGTH = 60
SNIPPET_BEFORE = 30
"""Characters of context kept before the first match."""
SNIPPET_LENGTH = 100
"""Characters a snippet holds at most (plus the ellipses)."""


def local_time(timestamp: float) -> str:
    """A conversation's time as every view shows it: the user's time zone, to the minute (cut, not rounded)."""
    import datetime as dt

    return dt.datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M")


def auto_title(text: str) -> str:
    """The title a conversation gets from its first message: one line, at most 60 characters."""
    line = " ".join(text.split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"


@lru_cache(maxsize=8192)
def _fold_char(char: str) -> str:
    decomposed = unicodedata.normalize("NFKD", char)
    kept = "".join(part for part in decomposed if not 0x300 <= ord(part) <= 0x36F)  # Latin/Greek accents
    return unicodedata.normalize("NFC", kept).casefold()


def fold(text: str | None) -> str:
    """The form search compares: ``Tōkyō`` → ``tokyo``, ``ＡＢＣ`` → ``abc``; kana keep their marks."""
    return "".join(_fold_char(char) for char in text or "")


def _folded_with_origins(text: str) -> tuple[str, list[int]]:
    """The folded text and, for each of its characters, the index of the original character."""
    parts: list[str] = []
    origins: list[int] = []
    for index, char in enumerate(text):
        folded = _fold_char(char)
        parts.append(folded)
        origins.extend([index] * len(folded))
    return "".join(parts), origins


def query_terms(query: str) -> list[str]:
    """The folded words of a search query (each must occur in a hit)."""
    return [term for term in (fold(word) for word in query.split()) if term]


@dataclass(frozen=True, slots=True)
class ConversationHit:
    """One conversation found by a search, with its best-matching message cut to a snippet."""

    conversation_id: int
    title: str
    snippet: str
    highlights: tuple[tuple[int, int], ...]
    """``(start, end)`` offsets into ``snippet`` of each matched term."""


def make_snippet(text: str, terms: list[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Cut ``text`` around the first match of ``terms``; return the snippet and the matched ranges in it."""
    line = " ".join(text.split())
    folded, origins = _folded_with_origins(line)
    spans: list[tuple[int, int]] = []
    for term in terms:
        start = folded.find(term)
        while start >= 0:
            end = start + len(term)
            spans.append((origins[start], origins[end - 1] + 1))
            start = folded.find(term, end)
    spans.sort()
    first = spans[0][0] if spans else 0
    begin = max(0, first - SNIPPET_BEFORE)
    if begin:  # start at a word boundary when there is one close by
        space = line.find(" ", begin, first)
        begin = space + 1 if space >= 0 else begin
    finish = min(len(line), begin + SNIPPET_LENGTH)
    lead = "…" if begin else ""
    trail = "…" if finish < len(line) else ""
    shift = len(lead) - begin
    kept = tuple((start + shift, min(end, finish) + shift) for start, end in spans if start >= begin and start < finish)
    return lead + line[begin:finish] + trail, kept
