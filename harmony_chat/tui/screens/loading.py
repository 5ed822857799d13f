"""Loading models from the chat screen: progress, failures, the welcome panel, switching models.

Loads are numbered (``load_id``): what a load the user has moved on from, or the model search
behind its welcome panel, reports late is ignored, so an old error panel never comes back.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen

from harmony_chat.tui.messages import ModelFailed, ModelLoading, ModelReady, ModelsFound
from harmony_chat.tui.widgets.prompt import PromptInput
from harmony_chat.tui.widgets.status_bar import StatusBar
from harmony_chat.tui.widgets.turn import UserMessage
from harmony_chat.tui.widgets.welcome import WelcomePanel

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.tui.app import HarmonyChatApp


class ModelLoader(Screen[None]):
    """Model loading and the welcome panel (mixed into the chat screen)."""

    conversation: ChatConversation | None
    load_id: int
    """Counts model loads (set by the chat screen)."""
    serial: threading.Lock
    loading = False
    """Whether a model load is under way."""
    waiting: tuple[str, UserMessage] | None = None
    """A message sent while the model loads, and its place in the view: sent when the model is ready."""

    @property
    def chat_app(self) -> HarmonyChatApp:
        """The app, typed."""
        return cast("HarmonyChatApp", self.app)

    @property
    def status(self) -> StatusBar:
        """The status bar (provided by the chat screen)."""
        raise NotImplementedError

    @property
    def log_view(self) -> VerticalScroll:
        """The scrolling conversation (provided by the chat screen)."""
        raise NotImplementedError

    @property
    def prompt(self) -> PromptInput:
        """The prompt (provided by the chat screen)."""
        raise NotImplementedError

    def load(self) -> None:
        """Load the configured model in a worker thread (beside the welcome panel for the pocket model).

        The conversation on the previous model, if any, is let go: its model is closed, and the
        new conversation keeps its effort.
        """
        self.load_id += 1
        self.loading = True
        self.status.state = "loading"
        self.status.model = "loading model…"
        previous, self.conversation = self.conversation, None
        self._load_worker(self.load_id, previous)
        if self.chat_app.options.uses_pocket:
            self._find_models(None, self.load_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="load", description="Loading the model")
    def _load_worker(self, load_id: int, previous: ChatConversation | None) -> None:
        from harmony_chat.chat.factory import create_conversation
        from harmony_chat.tui.generation import load_in_worker

        def post(message: Message) -> bool:
            # A load the user has moved on from (another model picked meanwhile) reports nothing.
            return load_id == self.load_id and self.post_message(message)

        app = self.chat_app
        if previous is not None:
            previous.tools = None  # the screen's: they go on with the next model
            with self.serial:  # a prefill may still be using the old model
                previous.close()
        model = load_in_worker(app.options, post, app.backend_factory)
        if model is None:
            return
        if load_id != self.load_id:
            model.backend.close()
            return
        conversation = create_conversation(app.options, model, store=app.history)
        if previous is not None:
            conversation.effort = previous.effort
        self.post_message(ModelReady(model, conversation))

    @work(thread=True, exclusive=True, exit_on_error=False, group="discover", description="Finding models")
    def _find_models(self, notice: str | None, load_id: int) -> None:
        from harmony_chat.models import find_models

        self.post_message(ModelsFound(find_models(), notice, load_id))

    async def on_models_found(self, message: ModelsFound) -> None:
        """Show the welcome panel with what was found (unless another model was chosen since)."""
        if message.load_id != self.load_id:
            return
        for old in self.query(WelcomePanel):
            await old.remove()
        pocket = self.chat_app.options.uses_pocket and message.notice is None
        await self.log_view.mount(WelcomePanel(message.models, message.notice, pocket=pocket), before=0)
        if message.notice:
            self.status.state = "model failed to load"

    def on_model_loading(self, message: ModelLoading) -> None:
        """Show load progress."""
        self.status.state = f"loading {message.step}/{message.total}: {message.label}"

    def on_model_failed(self, message: ModelFailed) -> None:
        """Show why the model did not load, with the way forward (a waiting message goes back to the prompt)."""
        self.loading = False
        self.status.model, self.status.state = "no model", "error"
        self._find_models(message.error, self.load_id)
        if self.waiting is not None:
            (text, widget), self.waiting = self.waiting, None
            widget.remove()
            self.prompt.give_back(text)
            self.notify("The model did not load, so your message was not sent.", severity="warning")

    async def hold_until_loaded(self, text: str) -> bool:
        """Show a message sent while the model loads and keep it for :meth:`take_waiting`; False if none loads."""
        if not self.loading or self.waiting is not None or self.chat_app.resume is not None:
            return False
        widget = UserMessage(text)
        await self.log_view.mount(widget)
        self.waiting = (text, widget)
        self.notify("The model is still loading: your message is sent as soon as it is ready.")
        return True

    def take_waiting(self) -> tuple[str, UserMessage] | None:
        """The message that waited for the model, now that it is ready (at most once)."""
        self.loading = False
        waiting, self.waiting = self.waiting, None
        return waiting

    @on(WelcomePanel.StartDemo)
    def start_demo(self, message: WelcomePanel.StartDemo) -> None:
        """Switch to the pocket model or to the replayed conversations."""
        self.chat_app.switch_model(demo=not message.replay, replay_demo=message.replay)

    @on(WelcomePanel.LoadModel)
    def load_found(self, message: WelcomePanel.LoadModel) -> None:
        """Load a model the welcome panel found."""
        self.chat_app.switch_model(path=message.path)
