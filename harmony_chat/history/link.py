"""The chat's link to its stored conversation: created on the first message, kept in step after."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openai_harmony import Message, Role

from harmony_chat.harmony.session import ChatSession
from harmony_chat.history.recording import TurnRecorder, session_settings
from harmony_chat.history.store import HistoryStore, StoredConversation


@dataclass(slots=True)
class ConversationLink:
    """Which stored conversation the chat writes to, and the id of its last user message."""

    store: HistoryStore
    conversation_id: int | None = None
    user_message_ids: list[int] = field(default_factory=list)

    @classmethod
    def for_stored(cls, store: HistoryStore, stored: StoredConversation) -> ConversationLink:
        """The link that continues a stored conversation."""
        pairs = zip(stored.message_ids, stored.messages, strict=True)
        return cls(store, stored.id, [i for i, message in pairs if message.author.role == Role.USER])

    def record_user(self, session: ChatSession, text: str, model: str) -> None:
        """Store the user's message at once (the conversation is created on the first one)."""
        if self.conversation_id is None:
            self.conversation_id = self.store.create_conversation(session_settings(session), model)
        message_id = self.store.add_message(self.conversation_id, Message.from_role_and_content(Role.USER, text))
        if message_id is not None:
            self.user_message_ids.append(message_id)

    def record_message(self, message: Message, meta: dict[str, Any] | None = None) -> None:
        """Store a message the conversation added between generations (a tool result, with how it ended)."""
        if self.conversation_id is not None:
            self.store.add_message(self.conversation_id, message, meta=meta)

    def recorder(self, model: str, effort: str) -> TurnRecorder | None:
        """A recorder for the next assistant turn (None before any message)."""
        if self.conversation_id is None:
            return None
        return TurnRecorder(self.store, self.conversation_id, model, effort)

    def drop_last_exchange(self, keep_user: bool) -> None:
        """Forget the last answer (and the last user message unless ``keep_user``), as the chat did."""
        if self.conversation_id is None or not self.user_message_ids:
            return
        last_user = self.user_message_ids[-1] if keep_user else self.user_message_ids.pop()
        self.store.drop_exchange(self.conversation_id, last_user, keep_user)
