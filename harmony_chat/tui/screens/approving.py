"""Asking the user about a tool call: the approval modal opened, answered, or closed when the turn stops.

:class:`ApprovalFlow` is the chat screen's collaborator for approval. The generation worker
waits on an :class:`~harmony_chat.tui.messages.ApprovalAnswer` (see
:meth:`~harmony_chat.tui.screens.tooling.ChatTools.approve`); the flow shows the modal for it,
gives the user's decision (a dismissed modal denies), and closes the modal as a denial when the
turn is stopped meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import events

from harmony_chat.chat.approval import Choice, Decision
from harmony_chat.tui.screens.tooling import STOPPED_REASON

if TYPE_CHECKING:
    from harmony_chat.tui.messages import ApprovalAnswer, ApprovalNeeded
    from harmony_chat.tui.screens.approval import ApprovalScreen

PushModal = Callable[["ApprovalScreen", Callable[[Decision | None], None]], object]
"""Shows the modal and calls back with its answer (the app's ``push_screen``)."""


class ApprovalFlow:
    """Shows one approval modal at a time and hands its answer to the waiting worker.

    Args:
        push_modal: shows the modal and calls back with its answer.
        clock: the clock of the modal's typing guard (tests pass one they move).
        type_ahead: takes a key typed as the modal opened, for the chat prompt (True: taken).
        stop: stops the turn (the modal's escape: deny and stop).
    """

    def __init__(
        self,
        push_modal: PushModal,
        clock: Callable[[], float],
        type_ahead: Callable[[events.Key | events.Paste], bool],
        stop: Callable[[], None],
    ) -> None:
        self.push_modal = push_modal
        self.clock = clock
        self.type_ahead = type_ahead
        self.stop = stop
        self.open: tuple[ApprovalScreen, ApprovalAnswer] | None = None
        """The modal shown and the answer it gives (None: none is open)."""

    def ask(self, message: ApprovalNeeded) -> None:
        """Show the modal for ``message``'s call; its answer (a dismissal denies) goes to the waiting worker."""
        from harmony_chat.tui.screens.approval import GUARD_S, ApprovalScreen, TypingGuard

        screen = ApprovalScreen(message.review, TypingGuard(GUARD_S, self.clock), self.type_ahead)
        self.open = (screen, message.answer)

        def answered(decision: Decision | None) -> None:
            self.open = None
            message.answer.give(decision or Decision(Choice.DENY))
            if screen.stop_requested:
                self.stop()

        self.push_modal(screen, answered)

    def close(self, answer: ApprovalAnswer | None = None) -> None:
        """Dismiss the open modal (the one for ``answer``, if given) as a denial."""
        if self.open is None or (answer is not None and self.open[1] is not answer):
            return
        screen, _ = self.open
        if screen.is_attached:
            screen.pop_until_active()
            screen.dismiss(Decision(Choice.DENY, STOPPED_REASON))
