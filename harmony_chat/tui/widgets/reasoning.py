"""What the turn shows besides its answer: the model's summary of its reasoning, and the web it visited.

A :class:`SummaryBlock` holds one reasoning summary (the model's account of an analysis, written
for the user by a separate generation, never the raw chain of thought): quiet, collapsible,
labelled as written by the model. The screen's reasoning mode decides whether it is shown. A
:class:`VisitList` lists the searches made and the pages opened by the browser during the turn.
Both show text as it is, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.widgets import Collapsible, Static

from harmony_chat.tui.literal import literal

if TYPE_CHECKING:
    from harmony_chat.tools.browser.tool import Visit

SUMMARY_TITLE = "Reasoning summary · written by the model"
LIVE_TITLE = "Reasoning summary so far · written by the model"


class SummaryBlock(Collapsible):
    """One reasoning summary: the model's short account of an analysis (a live one is replaced as it goes on)."""

    DEFAULT_CSS = """
    SummaryBlock { display: none; background: transparent; border-top: none; padding: 0; margin: 0 1; }
    SummaryBlock CollapsibleTitle { color: $text-muted; padding: 0 1 0 0; }
    SummaryBlock .summary-text { color: $text-muted; text-style: italic; padding: 0 0 0 2; }
    """

    def __init__(self, text: str, live: bool = False) -> None:
        self.text = text
        """The summary as the model wrote it."""
        self.live = live
        self._body = Static(literal(text), classes="summary-text", markup=False)
        super().__init__(self._body, title=literal(LIVE_TITLE if live else SUMMARY_TITLE), collapsed=False)  # type: ignore[arg-type]
        self.add_class("reasoning-summary")

    def replace(self, text: str, live: bool) -> None:
        """Show a later summary of the same reasoning (it covers more of it)."""
        self.text, self.live = text, live
        self._body.update(literal(text))
        self.title = literal(LIVE_TITLE if live else SUMMARY_TITLE)  # type: ignore[assignment]


def visit_line(visit: Visit) -> str:
    """One search or page of the browser, in a line."""
    note = f" · {visit.note}" if visit.note else ""
    if visit.kind == "search":
        return f"searched “{visit.target}”{note}" if visit.ok else f"search for “{visit.target}” failed{note}"
    if not visit.ok:
        return f"could not open {visit.target}{note}"
    title = visit.title or visit.url
    return f"opened {title} · {visit.url or visit.target}{note}"


class VisitList(Static):
    """The searches and pages of the browser in this turn, one a line."""

    DEFAULT_CSS = "VisitList { color: $text-muted; padding: 0 1; margin: 0 0 0 2; }"

    def __init__(self) -> None:
        super().__init__("", classes="visits", markup=False)
        self.lines: list[str] = []

    def show(self, visits: Sequence[Visit]) -> None:
        """List ``visits`` (every one of this turn so far)."""
        self.lines = [visit_line(visit) for visit in visits]
        self.update(literal("\n".join(f"→ {line}" for line in self.lines)))
