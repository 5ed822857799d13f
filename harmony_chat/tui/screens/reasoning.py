"""What the chat shows of the model's reasoning: ``hidden``, ``summary`` or ``raw`` (``[ui] reasoning``).

``hidden``: a thinking line while the model thinks. ``summary``: the model also writes a short
account of each analysis for the user (a separate generation: the conversation gets a
:class:`~harmony_chat.chat.summary.Summarizer`), shown as a quiet block above the answer.
``raw``: the raw chain of thought, labelled, in the turn. Debug mode (``f12``) is separate: it
shows the raw analysis and the token inspector whatever the mode. The mode is a class on the
screen (``-reasoning-summary``, ``-reasoning-raw``) that the turns' CSS follows, so switching
shows or hides what every turn already holds; the summarizer changes between turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.screen import Screen

from harmony_chat.chat.summary import REASONING_MODES, ReasoningMode
from harmony_chat.config import ConfigError, save_ui_value
from harmony_chat.tui.widgets.turn import AssistantTurn

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.factory import LoadedModel
    from harmony_chat.tui.app import HarmonyChatApp
    from harmony_chat.tui.widgets.status_bar import StatusBar

MODE_HELP = {
    "hidden": "a thinking line while the model thinks",
    "summary": "a short summary the model writes of its reasoning (one extra generation per analysis)",
    "raw": "the raw chain of thought, not reviewed for safety",
}


def next_mode(mode: ReasoningMode) -> ReasoningMode:
    """The mode after ``mode``: hidden → summary → raw → hidden."""
    return REASONING_MODES[(REASONING_MODES.index(mode) + 1) % len(REASONING_MODES)]


class ReasoningView(Screen[None]):
    """The reasoning mode of the chat (mixed into the chat screen)."""

    conversation: ChatConversation | None
    generating: bool

    def __init__(self) -> None:
        super().__init__()
        self.reasoning: ReasoningMode = "hidden"
        """What the chat shows of the reasoning now."""
        self.loaded_model: LoadedModel | None = None
        """The model the conversation runs on (a summarizer is made for it)."""

    @property
    def chat_app(self) -> HarmonyChatApp:
        """The app, typed."""
        return cast("HarmonyChatApp", self.app)

    @property
    def status(self) -> StatusBar:
        """The status bar (provided by the chat screen)."""
        raise NotImplementedError

    def show_reasoning(self, mode: ReasoningMode) -> None:
        """Show the reasoning as ``mode`` says, in every turn; summaries are written from the next turn on."""
        self.reasoning = mode
        self.set_class(mode == "summary", "-reasoning-summary")
        self.set_class(mode == "raw", "-reasoning-raw")
        self.status.reasoning = mode
        if mode == "raw":
            for turn in self.query(AssistantTurn):
                turn.show_analysis()
        self.attach_summarizer()

    def attach_summarizer(self) -> None:
        """Give the conversation a summarizer in summary mode, none otherwise (between turns only)."""
        conversation, model = self.conversation, self.loaded_model
        if conversation is None or self.generating:
            return
        if self.reasoning == "summary" and conversation.summarizer is None and model is not None:
            from harmony_chat.chat.factory import create_summarizer

            conversation.summarizer = create_summarizer(self.chat_app.options, model)
        elif self.reasoning != "summary" and conversation.summarizer is not None:
            summarizer, conversation.summarizer = conversation.summarizer, None
            summarizer.close()  # a summary model of its own (a remote engine) is reached again if needed

    def set_reasoning(self, name: str) -> bool:
        """Switch the reasoning mode (``hidden``, ``summary`` or ``raw``) and save it (``[ui] reasoning``).

        Returns False for an unknown mode (a notice says so); a mode that could not be saved still switched.
        """
        mode = next((known for known in REASONING_MODES if known == name), None)
        if mode is None:
            self.notify(f"Unknown reasoning mode {name!r}: use hidden, summary or raw.", severity="error")
            return False
        self.show_reasoning(mode)
        app = self.chat_app
        app.settings.ui.reasoning = mode
        when = " from the next turn on" if mode == "summary" and self.generating else ""
        self.notify(f"Reasoning: {mode}: {MODE_HELP[mode]}{when}.")
        if app.settings.path is not None:
            try:
                save_ui_value(app.settings.path, "reasoning", mode)
            except (OSError, ConfigError) as error:
                self.notify(f"Reasoning mode not saved: {error}", severity="warning")
        return True

    def action_cycle_reasoning(self) -> None:
        """Switch to the next reasoning mode: hidden → summary → raw (saved)."""
        self.set_reasoning(next_mode(self.reasoning))
