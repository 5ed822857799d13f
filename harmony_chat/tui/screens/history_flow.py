"""Going back in the conversation: the history picker, continuing a stored conversation, edit and regenerate.

:class:`HistoryFlow` is the chat screen's collaborator for what reaches back: it opens the history
(``ctrl+h``, ``/history``, or ``--resume`` once the model is ready), continues the conversation
chosen, and takes the last exchange back out of the view to edit or regenerate it. What cannot be
done now is a notice instead. The work on the conversation runs in the
:class:`~harmony_chat.tui.turn_controller.TurnController`'s workers; the screen shows what they
post back (the stored conversation opened, the message taken back).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.harmony.effort import Effort
    from harmony_chat.history.store import HistoryStore
    from harmony_chat.tui.messages import ConversationFailed
    from harmony_chat.tui.screens.history import HistoryScreen
    from harmony_chat.tui.turn_controller import Operation, TurnController
    from harmony_chat.tui.widgets.chat_log import ChatLog


class Notify(Protocol):
    """Shows a notice (the screen's ``notify``)."""

    def __call__(
        self,
        message: str,
        *,
        title: str = ...,
        severity: SeverityLevel = ...,
        timeout: float | None = ...,
        markup: bool = ...,
    ) -> object:
        """Show ``message`` as a toast."""


PushPicker = Callable[["HistoryScreen", Callable[[int | None], None]], object]
"""Shows the history screen and calls back with the conversation chosen (None: none; the app's ``push_screen``)."""
StartTurn = Callable[["Operation", "Effort | None"], Awaitable[None]]
"""Shows a new answer and runs an operation of the conversation for it, at an effort (the screen's ``start_turn``)."""

STOP_FIRST = "Stop the answer first (escape)."
"""Why the history cannot open while a turn runs (the turn writes to the conversation)."""


class HistoryFlow:
    """Opens the history and continues the conversation chosen; takes the last exchange back.

    Args:
        store: where conversations are stored (None: the history is off).
        off_reason: why the history is off although one was wanted (None: started with ``--no-history``).
        resume: a conversation to continue once the model is ready (``"pick"``: ask which; taken once).
        turns: runs the opening and the taking back on the conversation; says whether a turn is under way.
        conversation: the conversation shown (None until a model is loaded).
        log: the chat log, whose last exchange edit and regenerate take back.
        notify: says what cannot be done now, and why.
        push_picker: shows the history screen and calls back with the conversation chosen.
        start_turn: shows a new answer and runs an operation for it (regenerate's).
    """

    def __init__(
        self,
        store: HistoryStore | None,
        off_reason: str | None,
        resume: int | str | None,
        turns: TurnController,
        conversation: Callable[[], ChatConversation | None],
        log: Callable[[], ChatLog],
        notify: Notify,
        push_picker: PushPicker,
        start_turn: StartTurn,
    ) -> None:
        self.store = store
        self.off_reason = off_reason
        self.resume = resume
        """A conversation to continue once the model is ready (``"pick"``: ask which); taken once."""
        self.turns = turns
        self.conversation = conversation
        self.log = log
        self.notify = notify
        self.push_picker = push_picker
        self.start_turn = start_turn

    @property
    def resuming(self) -> bool:
        """Whether a conversation asked for at startup is still to be continued (a message sent now does not wait)."""
        return self.resume is not None

    def model_ready(self) -> None:
        """Continue the conversation asked for at startup, if any, now that the model is ready (once)."""
        resume, self.resume = self.resume, None
        if resume == "pick":
            self.pick()
        elif isinstance(resume, int):
            self.open(resume)

    # -- the history -------------------------------------------------------------------------------

    def pick(self) -> bool:
        """Open the history to continue, search, rename or delete a past conversation (False: it cannot now)."""
        if self.store is None:
            reason = self.off_reason or "started with --no-history"
            self.notify(f"The history is off ({reason}).", severity="warning", markup=False)
            return False
        if self.turns.generating:
            self.notify(STOP_FIRST, severity="warning")
            return False
        from harmony_chat.tui.screens.history import HistoryScreen

        self.push_picker(HistoryScreen(self.store), self._chosen)
        return True

    def _chosen(self, conversation_id: int | None) -> None:
        if conversation_id is not None:
            self.open(conversation_id)

    def open(self, conversation_id: int) -> None:
        """Continue stored conversation ``conversation_id`` (a worker loads it; the screen shows it when opened)."""
        chat = self.conversation()
        if chat is None:
            self.notify("Load a model first.", severity="warning")
        elif self.turns.generating:
            self.notify(STOP_FIRST, severity="warning")
        else:
            self.turns.resume(chat, conversation_id)

    def failed(self, message: ConversationFailed) -> None:
        """Say why a conversation could not be opened or changed."""
        self.notify(message.error, severity="error", markup=False)

    # -- the last exchange -------------------------------------------------------------------------

    async def regenerate(self, effort: Effort | None = None) -> bool:
        """Generate the last answer again, optionally at another effort (False: nothing to regenerate)."""
        chat, log = self.conversation(), self.log()
        if self.turns.generating or chat is None or not log.exchanges:
            self.notify("Nothing to regenerate right now.", severity="warning")
            return False
        log.remove_last_exchange(keep_user=True)
        await self.start_turn(lambda should_stop: chat.regenerate(effort, should_stop), effort)
        return True

    def edit_last(self) -> bool:
        """Take the last exchange back (its message goes back into the prompt when taken); False: nothing to edit."""
        chat, log = self.conversation(), self.log()
        if self.turns.generating or chat is None or not log.exchanges:
            self.notify("Nothing to edit right now.", severity="warning")
            return False
        log.remove_last_exchange(keep_user=False)
        self.turns.take_last(chat)
        return True
