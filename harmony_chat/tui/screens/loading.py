"""Loading models for the chat screen: the worker side of a load, which load is current, and what waits for it.

:class:`ModelLoader` is the chat screen's collaborator for loads. Loads are numbered: what a load
the user has moved on from (another model picked meanwhile), or the model search behind its
welcome panel, reports late is ignored, so an old error panel never comes back. The screen shows
progress, failures and the welcome panel from the messages posted here.

The loader also keeps the load's outcome for the screen: a message sent while the model loads
waits here (the screen shows it) until the model is ready or the load fails, and a failed load
is remembered until another model is chosen, so a message sent meanwhile says how to go on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from harmony_chat.tui.messages import ModelReady, ModelsFound

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.factory import BackendFactory
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.history.store import HistoryStore

NOT_LOADED_YET = "No model is loaded yet."
"""Why a message sent before the first model is ready goes back to the prompt."""
LOAD_FAILED = (
    "The model did not load (the panel above says why): choose one in the palette (ctrl+p)"
    " or start harmony-chat with --model PATH. Your message is kept."
)
"""Why a message sent after a failed load goes back to the prompt, and how to go on."""


class ModelLoader:
    """Loads the configured model and makes a conversation on it, in worker threads; keeps what waits for it.

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
        """Whether a model load is under way (until its model is ready or it failed)."""
        self.failed = False
        """The last load failed (the welcome panel says why), and no other model was chosen since."""
        self.waiting: str | None = None
        """A message sent while the model loads (the view shows it): sent once the model is ready."""

    def choose(self, path: Path | None = None, demo: bool = False, replay_demo: bool = False) -> None:
        """Make another model the one to load (the pocket model with ``demo``, recordings with ``replay_demo``)."""
        self.options.choose_model(path=path, demo=demo, replay_demo=replay_demo)
        self.failed = False

    def begin(self) -> int:
        """Number a new load (the earlier ones are superseded) and return its number."""
        self.load_id += 1
        self.loading = True
        return self.load_id

    def is_current(self, load_id: int) -> bool:
        """Whether ``load_id`` is the latest load."""
        return load_id == self.load_id

    # -- what waits for the load -------------------------------------------------------------------

    def hold(self, text: str, resuming: bool) -> bool:
        """Keep ``text``, sent while the model loads, until it is ready.

        False when no load is under way, a message waits already, or a stored conversation is to
        be continued first (``resuming``): the message goes back to the prompt.
        """
        if not self.loading or self.waiting is not None or resuming:
            return False
        self.waiting = text
        return True

    def take_waiting(self) -> str | None:
        """The message that waits for the model, taken (at most once)."""
        waiting, self.waiting = self.waiting, None
        return waiting

    def ready(self) -> str | None:
        """The model is ready: the load is over; the message that waited for it, if any, to send now."""
        self.loading = False
        return self.take_waiting()

    def fail(self) -> str | None:
        """The load failed: remembered; the message that waited for it, if any, to give back."""
        self.loading = False
        self.failed = True
        return self.take_waiting()

    def not_sent_notice(self) -> tuple[str, SeverityLevel]:
        """Why a message sent with no model goes back to the prompt, and how loud (a failed load: how to go on)."""
        return (LOAD_FAILED, "error") if self.failed else (NOT_LOADED_YET, "warning")

    # -- the workers -------------------------------------------------------------------------------

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
        self.post(ModelReady(model, conversation, load_id))

    def find_models(self, notice: str | None, load_id: int) -> None:
        """(Worker) look for gpt-oss models on this machine and post :class:`ModelsFound`."""
        from harmony_chat.gguf.discovery import find_models

        self.post(ModelsFound(find_models(), notice, load_id))
