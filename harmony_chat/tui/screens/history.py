"""The history screen: stored conversations, full-text search, open, rename, delete.

Titles, snippets and model names are the user's, the model's and imported files' text: they reach
the screen through :func:`~harmony_chat.tui.literal.literal` (never markup, control characters as
visible symbols, so a title cannot retitle the terminal or wipe rows), and the matched words are
highlighted with styles. The history can change under
the screen (another instance deletes a conversation): such a change gives a notice and a refresh.
Every read and write of the store (the list, the search per keystroke, rename, delete) runs in a
worker thread, so a database held by another instance never freezes the screen.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList
from textual.widgets.option_list import Option

from harmony_chat.errors import HarmonyChatError
from harmony_chat.history.db import HistoryError
from harmony_chat.history.store import HistoryStore
from harmony_chat.history.text import ConversationHit, local_time
from harmony_chat.tui.literal import literal, visible

MATCH_STYLE = "bold underline $accent"
"""How a matched word is shown in a search snippet."""


def _shown_offset(text: str, offset: int) -> int:
    """Where ``offset`` into ``text`` lands in ``visible(text)`` (which makes each CR LF one newline)."""
    return offset - text.count("\r\n", 0, offset)


def hit_prompt(hit: ConversationHit) -> Content:
    """A search hit as an option: id and title, then the snippet with its matches highlighted."""
    snippet = literal(hit.snippet)
    for start, end in hit.highlights:
        snippet = snippet.stylize(MATCH_STYLE, _shown_offset(hit.snippet, start), _shown_offset(hit.snippet, end))
    return Content.assemble(f"#{hit.conversation_id}  ", literal(hit.title), "\n    ", snippet)


@dataclass
class Listed(Message):
    """A worker read the list (or the search hits) for the query typed at ``serial``."""

    serial: int
    rows: list[tuple[int, Content]]
    """Each conversation's id and the option shown for it."""
    error: str | None = None


@dataclass
class Changed(Message):
    """A worker applied a change to a conversation (``gone``: it was deleted elsewhere first)."""

    conversation_id: int
    gone: bool = False
    error: str | None = None


@dataclass
class TitleRead(Message):
    """A worker read a conversation's title for renaming (None: see ``gone`` and ``error``)."""

    conversation_id: int
    title: str | None
    gone: bool = False
    error: str | None = None


def list_rows(store: HistoryStore, query: str) -> list[tuple[int, Content]]:
    """The conversations, or the search hits for ``query``, as (id, option) (runs in a worker)."""
    rows: list[tuple[int, Content]] = []
    if query.strip():
        for hit in store.search(query):
            rows.append((hit.conversation_id, hit_prompt(hit)))
        return rows
    for row in store.list_conversations():
        when = local_time(row.updated_at)
        option = Content.assemble(
            f"#{row.id}  {when}  ", literal(row.title), literal(f"  ({row.model}, {row.messages} messages)")
        )
        rows.append((row.id, option))
    return rows


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
    """Ask for a new title (the field starts with the old one, control characters as visible symbols)."""

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
        yield Input(visible(self.title_text), id="new-title", placeholder="New title (Enter saves)")

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
        self._serial = 0
        """Counts list requests; a worker's answer to an older one is dropped."""

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
        """Show every conversation, or the search hits for ``query`` (read by a worker)."""
        self._serial += 1
        self._read_list(query, self._serial)

    @work(thread=True, exclusive=True, exit_on_error=False, group="history-list", description="Reading the history")
    def _read_list(self, query: str, serial: int) -> None:
        try:
            rows = list_rows(self.store, query)
        except (HarmonyChatError, OSError, sqlite3.Error) as error:
            self.post_message(Listed(serial, [], f"The history could not be read: {error}"))
            return
        self.post_message(Listed(serial, rows))

    def on_listed(self, message: Listed) -> None:
        """Show what the worker read (unless the user typed more since)."""
        if message.serial != self._serial:
            return
        if message.error:
            self.notify(message.error, severity="error", markup=False)
        self.options.clear_options()
        self.ids = [conversation_id for conversation_id, _ in message.rows]
        self.options.add_options([Option(option) for _, option in message.rows])
        if self.ids:
            self.options.highlighted = 0

    def _refresh(self) -> None:
        self.refresh_list(self.query_one("#history-search", Input).value)

    def _changed_elsewhere(self, conversation_id: int) -> None:
        self.notify(
            f"Conversation #{conversation_id} is no longer in the history (deleted elsewhere); the list is refreshed.",
            severity="warning",
            markup=False,
        )
        self._refresh()

    @work(thread=True, exit_on_error=False, group="history-change", description="Changing the history")
    def _change(self, conversation_id: int, change: Callable[[], None]) -> None:
        """Apply a change to the store; a conversation gone meanwhile gives a notice and a refresh."""
        try:
            change()
        except HistoryError:
            self.post_message(Changed(conversation_id, gone=True))
            return
        except (HarmonyChatError, OSError, sqlite3.Error) as error:
            self.post_message(Changed(conversation_id, error=f"The history could not be changed: {error}"))
            return
        self.post_message(Changed(conversation_id))

    def on_changed(self, message: Changed) -> None:
        """Show the outcome of a change."""
        if message.gone:
            self._changed_elsewhere(message.conversation_id)
        elif message.error:
            self.notify(message.error, severity="error", markup=False)
        else:
            self._refresh()

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
        """Rename the highlighted conversation (its stored title is read first, by a worker)."""
        conversation_id = self._selected()
        if conversation_id is not None:
            self._read_title(conversation_id)

    @work(thread=True, exit_on_error=False, group="history-change", description="Reading a title")
    def _read_title(self, conversation_id: int) -> None:
        try:
            title = self.store.load(conversation_id).title
        except HistoryError:
            self.post_message(TitleRead(conversation_id, None, gone=True))
        except (HarmonyChatError, OSError, sqlite3.Error) as error:
            self.post_message(TitleRead(conversation_id, None, error=f"The history could not be read: {error}"))
        else:
            self.post_message(TitleRead(conversation_id, title))

    def on_title_read(self, message: TitleRead) -> None:
        """Ask for the new title."""
        conversation_id, title = message.conversation_id, message.title
        if message.gone:
            self._changed_elsewhere(conversation_id)
            return
        if title is None:
            self.notify(message.error or "The history could not be read.", severity="error", markup=False)
            return

        def done(new_title: str | None) -> None:
            if new_title:
                self._change(conversation_id, lambda: self.store.rename(conversation_id, new_title))

        self.app.push_screen(RenameScreen(title), done)

    def action_delete(self) -> None:
        """Delete the highlighted conversation, after confirmation."""
        conversation_id = self._selected()
        if conversation_id is None:
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._change(conversation_id, lambda: self.store.delete(conversation_id))

        self.app.push_screen(ConfirmScreen(f"Delete conversation #{conversation_id} for good?"), done)
