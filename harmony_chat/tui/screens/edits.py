"""Editing the conversation from the chat screen: regenerate, edit the last message, copy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget

from harmony_chat.errors import HarmonyChatError
from harmony_chat.harmony.effort import Effort
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage, code_blocks

if TYPE_CHECKING:
    from openai_harmony import Message

    from harmony_chat.harmony.session import ChatSession
    from harmony_chat.history.link import ConversationLink
    from harmony_chat.tui.widgets.prompt import PromptInput


class ConversationEdits(Screen[None]):
    """Actions that change the conversation after the fact (mixed into the chat screen)."""

    session: ChatSession | None
    generating: bool
    exchanges: list[list[Widget]]
    current_turn: AssistantTurn | None
    link: ConversationLink | None

    @property
    def prompt(self) -> PromptInput:
        """The prompt (provided by the chat screen)."""
        raise NotImplementedError

    async def start_turn(self, effort: Effort | None = None) -> None:
        """Start generating (provided by the chat screen)."""
        raise NotImplementedError

    async def action_new_chat(self) -> None:
        """Start a new conversation (provided by the chat screen)."""
        raise NotImplementedError

    @property
    def log_view(self) -> VerticalScroll:
        """The scrolling conversation (provided by the chat screen)."""
        raise NotImplementedError

    @property
    def effort_shown(self) -> Effort:
        """The effort the status bar shows for the next turn (provided by the chat screen)."""
        raise NotImplementedError

    def action_history(self) -> None:
        """Open the history to continue, search, rename or delete a past conversation."""
        store = getattr(self.app, "history", None)
        if store is None:
            reason = getattr(self.app, "history_off", None) or "started with --no-history"
            self.notify(f"The history is off ({reason}).", severity="warning", markup=False)
        elif self.generating:
            self.notify("Stop the answer first (escape).", severity="warning")
        else:
            from harmony_chat.tui.screens.history import HistoryScreen

            self.app.push_screen(HistoryScreen(store), self._open_chosen)

    async def _open_chosen(self, conversation: int | None) -> None:
        if conversation is not None:
            await self.open_conversation(conversation)

    async def open_conversation(self, conversation: int) -> None:
        """Show a stored conversation and continue it (same date, so the prompt prefix matches)."""
        from harmony_chat.history.link import ConversationLink
        from harmony_chat.history.recording import resume_session

        store = getattr(self.app, "history", None)
        if store is None or self.session is None:
            self.notify("Load a model first.", severity="warning")
            return
        try:
            stored = store.load(conversation)
        except HarmonyChatError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        encoding, context = self.session.encoding, self.session.context_size
        await self.action_new_chat()
        session = self.session = resume_session(encoding, stored, context)
        session.effort = self.effort_shown  # the effort shown is the effort used, not the one stored
        pairs = zip(stored.message_ids, stored.messages, strict=True)
        self.link = ConversationLink(store, conversation, [i for i, m in pairs if m.author.role.value == "user"])
        turns = {turn.id: turn for turn in stored.turns}
        groups: list[tuple[Message, list[Message], int | None]] = []
        for message, message_turn in zip(stored.messages, stored.message_turns, strict=True):
            if message.author.role.value == "user":
                groups.append((message, [], None))
            elif groups:
                user, answers, turn_id = groups[-1]
                answers.append(message)
                groups[-1] = (user, answers, message_turn if message_turn is not None else turn_id)
        for number, (user_message, answers, turn_id) in enumerate(groups, start=1):
            user = UserMessage("".join(getattr(part, "text", "") for part in user_message.content))
            await self.log_view.mount(user)
            self.exchanges.append([user])
            if answers:
                row = turns.get(turn_id) if turn_id is not None else None
                widget = AssistantTurn(-number, row.effort if row else session.effort)
                await self.log_view.mount(widget)
                await widget.show_stored(answers, row.status if row else "complete")
                self.exchanges[-1].append(widget)
        self.log_view.anchor()  # stay at the last message while answers and the welcome panel lay out
        self.notify(f"Continuing conversation #{conversation} at effort {session.effort}: {stored.title}")

    def _drop_last_exchange(self, keep_user: bool) -> str | None:
        """Remove the last exchange from the session and the screen; return the user's text."""
        assert self.session is not None
        history = self.session.history
        last_user = max((i for i, m in enumerate(history) if m.author.role.value == "user"), default=None)
        if last_user is None:
            return None
        text = "".join(getattr(part, "text", "") for part in history[last_user].content)
        del history[last_user + (1 if keep_user else 0) :]
        if self.session.turns:
            self.session.turns.pop()
        if self.link is not None:
            self.link.drop_last_exchange(keep_user)
        widgets = self.exchanges[-1] if self.exchanges else []
        for widget in widgets[1:] if keep_user else widgets:
            widget.remove()
        if keep_user:
            del widgets[1:]
        elif self.exchanges:
            self.exchanges.pop()
        self.current_turn = None
        return text

    async def regenerate(self, effort: Effort | None = None) -> None:
        """Generate the last answer again, optionally at another effort."""
        if self.generating or self.session is None or not self.exchanges:
            self.notify("Nothing to regenerate right now.", severity="warning")
            return
        self._drop_last_exchange(keep_user=True)
        await self.start_turn(effort)

    def edit_last(self) -> None:
        """Put the last user message back into the prompt (its answer is removed)."""
        if self.generating or self.session is None or not self.exchanges:
            self.notify("Nothing to edit right now.", severity="warning")
            return
        text = self._drop_last_exchange(keep_user=False)
        if text is not None:
            self.prompt.give_back(text)
            self.prompt.focus()

    def last_answer(self) -> str:
        """The last turn's final answer ('' if it has none, as when it was stopped before answering)."""
        turns = list(self.query(AssistantTurn))
        return turns[-1].final_text if turns else ""

    def copy_answer(self, code_block: int | None = None) -> None:
        """Copy the last answer, or one of its code blocks (1-based; 0 means the last)."""
        answer = self.last_answer()
        if code_block is not None:
            blocks = code_blocks(answer)
            if not blocks or code_block > len(blocks):
                self.notify("The last answer has no such code block.", severity="warning")
                return
            answer = blocks[code_block - 1 if code_block else -1]
        if not answer:
            self.notify("The last turn has no answer to copy.", severity="warning")
            return
        self.app.copy_to_clipboard(answer)
        self.notify("Copied to the clipboard.")
