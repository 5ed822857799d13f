"""Loading models for the chat screen: the worker side of a load, and which load is current.

:class:`ModelLoader` is the chat screen's collaborator for loads. Loads are numbered: what a load
the user has moved on from (another model picked meanwhile), or the model search behind its
welcome panel, reports late is ignored, so an old error panel never comes back. The screen shows
progress, failures and the welcome panel from the messages posted here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

from harmony_chat.tui.messages import ModelReady, ModelsFound

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.factory import BackendFactory
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.history.store import HistoryStore


class ModelLoader:
    """Loads the configured model and makes a conversation on it, in worker threads.

    Args:
        options: what to load (the model switch changes its model source).
        backend_factory: builds the backend from the options.
        history: where the new conversation is stored (None keeps nothing).
        post: the screen's thread-safe ``post_message``.
        serial: held by every worker that uses a conversation (a prefill may still use the old model).
    """

    def __init__(
        self,
        options: ChatOptions,
        backend_factory: BackendFactory,
        history: HistoryStore | None,
        post: Callable[[Message], bool],
        serial: threading.Lock,
    ) -> None:
        self.options = options
        self.backend_factory = backend_factory
        self.history = history
        self.post = post
        self.serial = serial
        self.load_id = 0
        """Counts model loads; what an earlier load or its welcome panel reports late is ignored."""
        self.loading = False
        """Whether a model load is under way."""

    def begin(self) -> int:
        """Number a new load (the earlier ones are superseded) and return its number."""
        self.load_id += 1
        self.loading = True
        return self.load_id

    def is_current(self, load_id: int) -> bool:
        """Whether ``load_id`` is the latest load."""
        return load_id == self.load_id

    def load(self, load_id: int, previous: ChatConversation | None) -> None:
        """(Worker) load the model and post :class:`ModelReady` with a new conversation on it.

        The conversation on the previous model, if any, is let go: its model is closed, and the
        new conversation keeps its effort.
        """
        from harmony_chat.chat.factory import create_conversation
        from harmony_chat.tui.generation import load_in_worker

        def post(message: Message) -> bool:
            # A load the user has moved on from (another model picked meanwhile) reports nothing.
            return self.is_current(load_id) and self.post(message)

        if previous is not None:
            with self.serial:  # a prefill may still be using the old model
                previous.tools = None  # the screen's tools outlive a model switch
                previous.close()
        model = load_in_worker(self.options, post, self.backend_factory)
        if model is None:
            return
        if not self.is_current(load_id):
            model.backend.close()
            return
        conversation = create_conversation(self.options, model, store=self.history)
        if previous is not None:
            conversation.effort = previous.effort
        self.post(ModelReady(model, conversation))

    def find_models(self, notice: str | None, load_id: int) -> None:
        """(Worker) look for gpt-oss models on this machine and post :class:`ModelsFound`."""
        from harmony_chat.gguf.discovery import find_models

        self.post(ModelsFound(find_models(), notice, load_id))
