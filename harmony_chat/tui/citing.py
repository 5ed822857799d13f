"""Citations in answers, as the TUI shows them: ``【3†L10-L15】`` becomes a numbered link; a list of sources follows.

Pure functions over the model's raw answer text and the browser's pages by cursor
(:mod:`harmony_chat.tools.browser.citations` does the finding and numbering). While an answer
streams, :func:`answer_markdown` leaves out an unfinished citation at the end, and the whitespace
at the end (an unresolvable citation that follows removes the space before it; a CR may be half
of a CR LF), so what has been shown stays a prefix of what comes next. Everything returned is Markdown source for
an :class:`~harmony_chat.tui.widgets.answer.Answer`, control characters made visible.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from harmony_chat.tools.browser.citations import (
    PageRecord,
    escape_markdown,
    find_citations,
    markdown_url,
    numbered_sources,
    strip_partial,
    to_inline_markdown,
    to_markdown,
)
from harmony_chat.tui.literal import visible

Sources = Mapping[int, PageRecord]
"""The pages a citation can name, by cursor."""
SourceLookup = Callable[[], Sources]
"""Gives the pages the answer's citations can name (asked when a citation first shows up)."""
OPEN = "【"
HELD_BACK = " \t\r\n"
"""Characters at the end of a streaming answer that wait for the next fragment."""


def answer_markdown(raw: str, sources: Sources, *, final: bool) -> str:
    """The answer's Markdown: citations as numbered links ``[[1]](<url>)``, unresolvable ones left out.

    Not ``final``: an unfinished citation and the whitespace at the end are held back.
    """
    text = raw if final else raw.rstrip(HELD_BACK)
    if OPEN in text:
        text = strip_partial(text)
    if not final:
        text = text.rstrip(HELD_BACK)
    if OPEN not in text:
        return visible(text)
    return visible(to_inline_markdown(text, find_citations(text, sources)))


def code_span(text: str) -> str:
    """``text`` as an inline Markdown code span, whatever backticks it holds."""
    text = visible(text).replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if text.startswith("`") or text.endswith("`") else f"{fence}{text}{fence}"


def sources_markdown(raw: str, sources: Sources) -> str:
    """The numbered list of the pages the answer cites (title linked to the page, then its URL), or ``""``."""
    if OPEN not in raw:
        return ""
    cited = numbered_sources(find_citations(strip_partial(raw), sources))
    if not cited:
        return ""
    items = [
        f"{source.number}. [{escape_markdown(source.title) or 'page'}]({markdown_url(source.url)}) "
        + code_span(source.url)
        for source in cited
    ]
    return visible("\n\n**Sources**\n\n" + "\n".join(items) + "\n")


def copy_markdown(raw: str, sources: Sources) -> str:
    """The answer to copy: citations as Markdown footnotes with the sources after it (``raw`` if it cites nothing)."""
    if OPEN not in raw:
        return raw
    text = strip_partial(raw)
    return to_markdown(text, find_citations(text, sources))
