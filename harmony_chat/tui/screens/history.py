"""The history screen: stored conversations, full-text search, open, rename, delete.

Titles and snippets are the user's and the model's text: they reach the screen as ``Content``,
never as markup, and the matched words are highlighted with styles. The history can change under
the screen (another instance deletes a conversation): such a change gives a notice and a refresh.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList
from textual.widgets.option_list import Option

from harmony_chat.errors import HarmonyChatError
from harmony_chat.history.db import HistoryError
from harmony_chat.history.store import HistoryStore
from harmony_chat.history.text import SearchHit

MATCH_STYLE = "bold underline $accent"
"""How a matched word is shown in a search snippet."""


def hit_prompt(hit: SearchHit) -> Content:
    """A search hit as an option: id and title, then the snippet with its matches highlighted."""
    snippet = Content(hit.snippet)
    for start, end in hit.highlights:
        snippet = snippet.stylize(MATCH_STYLE, start, end)
    return Content.assemble(f"#{hit.conversation}  ", Content(hit.title), "\n    ", snippet)


class ConfirmScreen(ModalScreen[bool]):
    """Ask a yes/no question."""

    BINDINGS = [Binding("escape,n", "dismiss(False)", "No"), Binding("y", "dismiss(True)", "Yes")]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen Vertical { width: 60; height: auto; border: round $error; background: $surface; padding: 1 2; }
    ConfirmScreen Horizontal { height: auto; margin: 1 0 0 0; }
    """

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        with Vertical():
            yield Label(Content(self.question))
            with Horizontal():
                yield Button("Delete (y)", id="yes", variant="error")
                yield Button("Keep (n)", id="no")

    @on(Button.Pressed)
    def answer(self, event: Button.Pressed) -> None:
        """Close with the answer."""
        self.dismiss(event.button.id == "yes")


class RenameScreen(ModalScreen[str | None]):
    """Ask for a new title."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]
    DEFAULT_CSS = """
    RenameScreen { align: center middle; }
    RenameScreen Input { width: 70; }
    """

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        yield Input(self.title_text, id="new-title", placeholder="New title (Enter saves)")

    @on(Input.Submitted)
    def save(self, event: Input.Submitted) -> None:
        """Close with the new title."""
        self.dismiss(event.value.strip() or None)


class HistoryScreen(ModalScreen[int | None]):
    """Pick a stored conversation to continue; search, rename or delete."""

    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close"),
        Binding("ctrl+r", "rename", "Rename", priority=True),
        Binding("ctrl+d", "delete", "Delete", priority=True),
    ]
    DEFAULT_CSS = """
    HistoryScreen { align: center middle; }
    HistoryScreen > Vertical { width: 90%; height: 80%; border: round $primary; background: $surface; }
    HistoryScreen OptionList { height: 1fr; }
    HistoryScreen Label { color: $text-muted; padding: 0 1; }
    """

    def __init__(self, store: HistoryStore) -> None:
        super().__init__()
        self.store = store
        self.ids: list[int] = []

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        with Vertical():
            yield Input(
                placeholder="Search your messages and the answers (Enter opens the highlighted one)",
                id="history-search",
            )
            yield OptionList(id="history-list")
            yield Label("enter open · ctrl+r rename · ctrl+d delete · escape close")

    def on_mount(self) -> None:
        """List the conversations."""
        self.refresh_list()

    @property
    def options(self) -> OptionList:
        """The list of conversations."""
        return self.query_one("#history-list", OptionList)

    def refresh_list(self, query: str = "") -> None:
        """Show every conversation, or the search hits for ``query``."""
        self.options.clear_options()
        self.ids = []
        try:
            if query.strip():
                for hit in self.store.search(query):
                    self.ids.append(hit.conversation)
                    self.options.add_option(Option(hit_prompt(hit)))
            else:
                for row in self.store.list_conversations():
                    when = dt.datetime.fromtimestamp(row.updated_at).strftime("%Y-%m-%d %H:%M")
                    self.ids.append(row.id)
                    self.options.add_option(
                        Option(
                            Content.assemble(
                                f"#{row.id}  {when}  ",
                                Content(row.title),
                                Content(f"  ({row.model}, {row.messages} messages)"),
                            )
                        )
                    )
        except (HarmonyChatError, OSError, sqlite3.Error) as error:
            self.notify(f"The history could not be read: {error}", severity="error", markup=False)
        if self.ids:
            self.options.highlighted = 0

    def _refresh(self) -> None:
        self.refresh_list(self.query_one("#history-search", Input).value)

    def _changed_elsewhere(self, conversation: int) -> None:
        self.notify(
            f"Conversation #{conversation} is no longer in the history (deleted elsewhere); the list is refreshed.",
            severity="warning",
            markup=False,
        )
        self._refresh()

    def _change(self, conversation: int, change: Callable[[], None]) -> bool:
        """Apply a change to the store; a conversation gone meanwhile gives a notice and a refresh."""
        try:
            change()
        except HistoryError:
            self._changed_elsewhere(conversation)
            return False
        except (HarmonyChatError, OSError, sqlite3.Error) as error:
            self.notify(f"The history could not be changed: {error}", severity="error", markup=False)
            return False
        self._refresh()
        return True

    @on(Input.Changed, "#history-search")
    def search(self, event: Input.Changed) -> None:
        """Search as the user types."""
        self.refresh_list(event.value)

    @on(Input.Submitted, "#history-search")
    def open_highlighted(self) -> None:
        """Open the highlighted conversation."""
        highlighted = self.options.highlighted
        if highlighted is not None and self.ids:
            self.dismiss(self.ids[highlighted])

    @on(OptionList.OptionSelected)
    def open_selected(self, event: OptionList.OptionSelected) -> None:
        """Open the chosen conversation."""
        self.dismiss(self.ids[event.option_index])

    def _selected(self) -> int | None:
        highlighted = self.options.highlighted
        return self.ids[highlighted] if highlighted is not None and self.ids else None

    def action_rename(self) -> None:
        """Rename the highlighted conversation."""
        conversation = self._selected()
        if conversation is None:
            return
        try:
            title = self.store.load(conversation).title
        except HistoryError:
            self._changed_elsewhere(conversation)
            return
        except (HarmonyChatError, OSError, sqlite3.Error) as error:
            self.notify(f"The history could not be read: {error}", severity="error", markup=False)
            return

        def done(new_title: str | None) -> None:
            if new_title:
                self._change(conversation, lambda: self.store.rename(conversation, new_title))

        self.app.push_screen(RenameScreen(title), done)

    def action_delete(self) -> None:
        """Delete the highlighted conversation, after confirmation."""
        conversation = self._selected()
        if conversation is None:
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._change(conversation, lambda: self.store.delete(conversation))

        self.app.push_screen(ConfirmScreen(f"Delete conversation #{conversation} for good?"), done)
