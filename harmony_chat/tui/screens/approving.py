"""Asking the user about a tool call: the approval modal opened, answered, or closed when the turn stops.

:class:`ApprovalFlow` is the chat screen's collaborator for approval. A turn that needs the user
says so in its events (:class:`~harmony_chat.chat.events.ApprovalRequested`) and waits on the
request's answer; the flow shows the modal for it, gives the user's decision (a dismissed modal
denies; "always, and save it" is saved), and closes the modal as a denial when the turn is
stopped meanwhile (the stop has answered already). A question no modal will show (its turn
superseded, the app exiting) is denied at once (:func:`decline`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from textual import events

from harmony_chat.chat.approval import STOPPED, ApprovalAnswer, Choice, Decision, ToolReview, give
from harmony_chat.chat.events import ApprovalRequested

if TYPE_CHECKING:
    from harmony_chat.chat.events import ChatEvent
    from harmony_chat.tui.screens.approval import ApprovalScreen

PushModal = Callable[["ApprovalScreen", Callable[[Decision | None], None]], object]
"""Shows the modal and calls back with its answer (the app's ``push_screen``)."""


class ApprovalFlow:
    """Shows one approval modal at a time and gives its answer to the waiting turn.

    Args:
        push_modal: shows the modal and calls back with its answer.
        clock: the clock of the modal's typing guard (tests pass one they move).
        type_ahead: takes a key typed as the modal opened, for the chat prompt (True: taken).
        stop: stops the turn (the modal's escape: deny and stop).
        save_always: remembers an "always, and save it" answer in the config file.
    """

    def __init__(
        self,
        push_modal: PushModal,
        clock: Callable[[], float],
        type_ahead: Callable[[events.Key | events.Paste], bool],
        stop: Callable[[], None],
        save_always: Callable[[ToolReview], None],
    ) -> None:
        self.push_modal = push_modal
        self.clock = clock
        self.type_ahead = type_ahead
        self.stop = stop
        self.save_always = save_always
        self.open: tuple[ApprovalScreen, ApprovalAnswer] | None = None
        """The modal shown and the answer it gives (None: none is open)."""

    def ask(self, request: ApprovalRequested) -> None:
        """Show the modal for ``request``'s call (unless the turn was stopped meanwhile); its answer goes to the turn.

        A dismissal denies.
        """
        from harmony_chat.tui.screens.approval import GUARD_S, ApprovalScreen, TypingGuard

        if request.answer.done():
            return
        screen = ApprovalScreen(request.review, TypingGuard(GUARD_S, self.clock), self.type_ahead)
        self.open = (screen, request.answer)

        def answered(decision: Decision | None) -> None:
            self.open = None
            decision = decision or Decision(Choice.DENY)
            first = give(request.answer, decision)
            if first and decision.choice is Choice.ALWAYS_SAVE and request.review.savable:
                self.save_always(request.review)
            if screen.stop_requested:
                self.stop()

        self.push_modal(screen, answered)

    def close(self) -> None:
        """Dismiss the open modal, if any, as a denial."""
        if self.open is None:
            return
        screen, _ = self.open
        if screen.is_attached:
            screen.pop_until_active()
            screen.dismiss(STOPPED)


def decline(events: Iterable[ChatEvent]) -> None:
    """Deny the approvals ``events`` ask for that no modal will show (a turn superseded, the app exiting)."""
    for event in events:
        if isinstance(event, ApprovalRequested):
            give(event.answer, STOPPED)
