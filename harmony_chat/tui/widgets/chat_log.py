"""The scrolling conversation: the exchanges it shows, kept in chapters so a growing answer lays out one.

:class:`ChatLog` owns what exchanges the view shows (:class:`Exchange`: each user message, then
its answer): the chat screen adds a message and its answer, removes the last exchange for edit
and regenerate, shows a stored conversation and clears the view through it, and asks it for the
turn being generated and the last answer.

When an answer grows, Textual lays out again every container above it: the scroll view places each
of its children and indexes their regions. With every message a child of the scroll view, that is
the whole conversation on every batch. Here the scroll view's children are chapters of a few
messages each; a new message goes into the last chapter, so a batch re-lays-out that chapter and
the short list of chapters, while the finished chapters keep their cached layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.containers import Vertical, VerticalScroll
from textual.widget import AwaitMount, Widget

from harmony_chat.collector import release
from harmony_chat.harmony.messages import message_text
from harmony_chat.tui.render_caches import release_removed_widgets
from harmony_chat.tui.stored import stored_exchanges
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage

if TYPE_CHECKING:
    from harmony_chat.harmony.effort import Effort
    from harmony_chat.history.store import StoredConversation


class Chapter(Vertical):
    """A few consecutive widgets of the chat log."""

    DEFAULT_CSS = "Chapter { height: auto; }"


@dataclass(slots=True)
class Exchange:
    """One exchange the chat log shows: the user's message, then its answer (None until one starts)."""

    user: UserMessage
    answer: AssistantTurn | None = None


class ChatLog(VerticalScroll):
    """The conversation's scroll view and its exchanges; ``mount`` puts widgets into chapters of ``CHAPTER_SIZE``."""

    CHAPTER_SIZE = 12
    """Widgets per chapter (a user message and an answer are two)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.exchanges: list[Exchange] = []
        """The exchanges shown, in order (a message waiting for the model is the last, with no answer)."""
        self.current_turn: AssistantTurn | None = None
        """The answer being generated, or the last one generated (None once it is removed or the log cleared)."""

    @property
    def chapters(self) -> list[Chapter]:
        """The chapters, in order."""
        return [child for child in self.children if isinstance(child, Chapter)]

    @property
    def last_turn(self) -> AssistantTurn | None:
        """The last answer shown, a stored one too (None: no exchange has one)."""
        return next((exchange.answer for exchange in reversed(self.exchanges) if exchange.answer), None)

    # -- the exchanges -----------------------------------------------------------------------------

    def add_exchange(self, user: UserMessage) -> AwaitMount:
        """Show a new exchange: the user's message (its answer follows with :meth:`add_answer`)."""
        self.exchanges.append(Exchange(user))
        return self.mount(user)

    async def add_answer(self, turn: AssistantTurn) -> None:
        """Show ``turn``, the answer now generated, in the last exchange; the view stays at the end."""
        self.current_turn = turn
        await self.mount(turn)
        self.exchanges[-1].answer = turn
        self.anchor()

    def remove_last_exchange(self, keep_user: bool) -> None:
        """Remove the last exchange (its answer only, with ``keep_user``); no answer is generated after it."""
        if self.exchanges:
            last = self.exchanges[-1]
            for widget in (last.answer,) if keep_user else (last.user, last.answer):
                if widget is not None:
                    widget.remove()
            if keep_user:
                last.answer = None
            else:
                self.exchanges.pop()
        release()
        self.current_turn = None

    async def show_stored(self, stored: StoredConversation, effort: Effort) -> None:
        """Show a stored conversation's exchanges, each answer at its stored effort and status (else ``effort``).

        Stored answers are numbered below zero, so what a live turn reports late never lands in one.
        """
        turns = {turn.id: turn for turn in stored.turns}
        for number, exchange in enumerate(stored_exchanges(stored), start=1):
            await self.add_exchange(UserMessage(message_text(exchange.user)))
            if exchange.answers:
                row = turns.get(exchange.turn) if exchange.turn is not None else None
                answer = AssistantTurn(-number, row.effort if row else effort, partial(dict, exchange.sources))
                await self.mount(answer)
                await answer.show_stored(exchange.answers, row.status if row else "complete", exchange.summaries)
                self.exchanges[-1].answer = answer
        self.anchor()  # stay at the last message while answers and the welcome panel lay out

    async def clear(self) -> None:
        """Remove everything shown (the exchanges, the welcome panel) and give its memory back."""
        await self.remove_children()
        release_removed_widgets(self)
        release()
        self.exchanges.clear()
        self.current_turn = None

    # -- chapters ----------------------------------------------------------------------------------

    def mount(
        self,
        *widgets: Widget,
        before: int | str | Widget | None = None,
        after: int | str | Widget | None = None,
    ) -> AwaitMount:
        """Mount ``widgets`` at the end of the last chapter (a new one when it is full).

        ``before=0`` (the welcome panel) mounts at the top of the first chapter; other positions
        are taken inside the chapter that holds the widget named.
        """
        if widgets and all(isinstance(widget, Chapter) for widget in widgets):
            return super().mount(*widgets, before=before, after=after)
        chapters = self.chapters
        if before == 0 and after is None:
            if not chapters:
                return self._mount_in_new_chapter(widgets)
            return chapters[0].mount(*widgets, before=0)
        anchor = before if before is not None else after
        if isinstance(anchor, Widget):
            parent = anchor.parent
            if isinstance(parent, Chapter):
                return parent.mount(*widgets, before=before, after=after)
        if anchor is not None:
            return super().mount(*widgets, before=before, after=after)
        if chapters and len(chapters[-1].children) + len(widgets) <= self.CHAPTER_SIZE:
            return chapters[-1].mount(*widgets)
        return self._mount_in_new_chapter(widgets)

    def _mount_in_new_chapter(self, widgets: tuple[Widget, ...]) -> AwaitMount:
        chapter = Chapter(*widgets)
        return super().mount(chapter)
