"""Editing the conversation from the chat screen: resume, regenerate, edit the last message, copy.

The conversation does the editing (in a worker, since it writes the history); the screen removes
and adds the widgets that show it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual import work
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget

from harmony_chat.collector import release
from harmony_chat.errors import HarmonyChatError
from harmony_chat.harmony.effort import Effort
from harmony_chat.tui.messages import ConversationFailed, ConversationOpened, LastMessageTaken
from harmony_chat.tui.stored import stored_exchanges
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage, code_blocks

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.events import ChatEvent
    from harmony_chat.tui.widgets.prompt import PromptInput
    from harmony_chat.tui.widgets.status_bar import StatusBar


class ConversationEdits(Screen[None]):
    """Actions that change the conversation after the fact (mixed into the chat screen)."""

    conversation: ChatConversation | None
    generating: bool
    exchanges: list[list[Widget]]
    current_turn: AssistantTurn | None
    serial: threading.Lock

    @property
    def prompt(self) -> PromptInput:
        """The prompt (provided by the chat screen)."""
        raise NotImplementedError

    @property
    def status(self) -> StatusBar:
        """The status bar (provided by the chat screen)."""
        raise NotImplementedError

    async def start_turn(
        self, operation: Callable[[Callable[[], bool]], Iterator[ChatEvent]], effort: Effort | None = None
    ) -> None:
        """Start generating (provided by the chat screen)."""
        raise NotImplementedError

    async def clear_view(self) -> None:
        """Empty the conversation view (provided by the chat screen)."""
        raise NotImplementedError

    @property
    def log_view(self) -> VerticalScroll:
        """The scrolling conversation (provided by the chat screen)."""
        raise NotImplementedError

    def action_history(self) -> bool:
        """Open the history to continue, search, rename or delete a past conversation (False: it cannot now)."""
        store = getattr(self.app, "history", None)
        if store is None:
            reason = getattr(self.app, "history_off", None) or "started with --no-history"
            self.notify(f"The history is off ({reason}).", severity="warning", markup=False)
            return False
        if self.generating:
            self.notify("Stop the answer first (escape).", severity="warning")
            return False
        from harmony_chat.tui.screens.history import HistoryScreen

        self.app.push_screen(HistoryScreen(store), self._open_chosen)
        return True

    def _open_chosen(self, conversation: int | None) -> None:
        if conversation is not None:
            self.open_conversation(conversation)

    def open_conversation(self, conversation: int) -> None:
        """Continue a stored conversation (loaded by a worker; shown when it is ready)."""
        if self.conversation is None:
            self.notify("Load a model first.", severity="warning")
        elif self.generating:
            self.notify("Stop the answer first (escape).", severity="warning")
        else:
            self._resume(self.conversation, conversation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="conversation", description="Opening")
    def _resume(self, chat: ChatConversation, conversation: int) -> None:
        with self.serial:
            effort = chat.effort  # the effort shown is the effort used, not the one stored
            try:
                stored = chat.resume(conversation)
            except HarmonyChatError as error:
                self.post_message(ConversationFailed(str(error)))
                return
            chat.effort = effort
        self.post_message(ConversationOpened(chat, stored))

    def on_conversation_failed(self, message: ConversationFailed) -> None:
        """Say why a conversation could not be opened or changed."""
        self.notify(message.error, severity="error", markup=False)

    async def on_conversation_opened(self, message: ConversationOpened) -> None:
        """Show the stored conversation the chat now continues."""
        if message.conversation is not self.conversation:
            return
        await self.clear_view()
        stored, chat = message.stored, message.conversation
        turns = {turn.id: turn for turn in stored.turns}
        for number, exchange in enumerate(stored_exchanges(stored), start=1):
            user = UserMessage("".join(getattr(part, "text", "") for part in exchange.user.content))
            await self.log_view.mount(user)
            self.exchanges.append([user])
            if exchange.answers:
                row = turns.get(exchange.turn) if exchange.turn is not None else None
                widget = AssistantTurn(-number, row.effort if row else chat.effort, partial(dict, exchange.sources))
                await self.log_view.mount(widget)
                await widget.show_stored(exchange.answers, row.status if row else "complete", exchange.summaries)
                self.exchanges[-1].append(widget)
        self.log_view.anchor()  # stay at the last message while answers and the welcome panel lay out
        self.status.effort = chat.effort
        self.notify(f"Continuing conversation #{stored.id} at effort {chat.effort}: {stored.title}", markup=False)

    def _remove_last_exchange(self, keep_user: bool) -> None:
        """Remove the last exchange's widgets (the answer only, with ``keep_user``)."""
        widgets = self.exchanges[-1] if self.exchanges else []
        for widget in widgets[1:] if keep_user else widgets:
            widget.remove()
        release()
        if keep_user:
            del widgets[1:]
        elif self.exchanges:
            self.exchanges.pop()
        self.current_turn = None

    async def regenerate(self, effort: Effort | None = None) -> bool:
        """Generate the last answer again, optionally at another effort (False: nothing to regenerate)."""
        chat = self.conversation
        if self.generating or chat is None or not self.exchanges:
            self.notify("Nothing to regenerate right now.", severity="warning")
            return False
        self._remove_last_exchange(keep_user=True)
        await self.start_turn(lambda should_stop: chat.regenerate(effort, should_stop), effort)
        return True

    def edit_last(self) -> bool:
        """Put the last user message back into the prompt (its answer is removed); False: nothing to edit."""
        if self.generating or self.conversation is None or not self.exchanges:
            self.notify("Nothing to edit right now.", severity="warning")
            return False
        self._remove_last_exchange(keep_user=False)
        self._take_last(self.conversation)
        return True

    @work(thread=True, exclusive=True, exit_on_error=False, group="conversation", description="Editing")
    def _take_last(self, chat: ChatConversation) -> None:
        with self.serial:
            text = chat.edit_last()
        self.post_message(LastMessageTaken(text))

    def on_last_message_taken(self, message: LastMessageTaken) -> None:
        """Put the taken-back message into the prompt."""
        if message.text is not None:
            self.prompt.give_back(message.text)
            self.prompt.focus()

    def last_answer(self) -> str:
        """The last turn's final answer ('' if it has none, as when it was stopped before answering)."""
        turns = list(self.query(AssistantTurn))
        return turns[-1].final_text if turns else ""

    def copy_answer(self, code_block: int | None = None) -> bool:
        """Copy the last answer (its citations as footnotes), or one of its code blocks (1-based; 0: the last).

        Returns False when there is nothing to copy (a notice says so).
        """
        turns = list(self.query(AssistantTurn))
        answer = turns[-1].copy_text() if turns else ""
        if code_block is not None:
            answer = self.last_answer()
            blocks = code_blocks(answer)
            if not blocks or code_block > len(blocks):
                self.notify("The last answer has no such code block.", severity="warning")
                return False
            answer = blocks[code_block - 1 if code_block else -1]
        if not answer:
            self.notify("The last turn has no answer to copy.", severity="warning")
            return False
        self.app.copy_to_clipboard(answer)
        self.notify("Copied to the clipboard.")
        return True
