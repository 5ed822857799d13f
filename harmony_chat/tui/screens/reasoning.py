"""What the chat shows of the model's reasoning: ``hidden``, ``summary`` or ``raw`` (``[ui] reasoning``).

``hidden``: a thinking line while the model thinks. ``summary``: the model also writes a short
account of each analysis for the user (a separate generation: the conversation gets a
:class:`~harmony_chat.chat.summary.Summarizer`), shown as a quiet block above the answer.
``raw``: the raw chain of thought, labelled, in the turn. Debug mode (``f12``) is separate: it
shows the raw analysis and the token inspector whatever the mode. The mode is the chat screen's
``reasoning`` reactive; it sets a class on the screen (``-reasoning-summary``, ``-reasoning-raw``)
that the turns' CSS follows, so switching shows or hides what every turn already holds; the
summarizer (:func:`switch_summarizer`) changes between turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harmony_chat.harmony.visibility import REASONING_MODES, ReasoningMode

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.factory import LoadedModel
    from harmony_chat.chat.options import ChatOptions

MODE_HELP = {
    "hidden": "a thinking line while the model thinks",
    "summary": "a short summary the model writes of its reasoning (one extra generation per analysis)",
    "raw": "the raw chain of thought, not reviewed for safety",
}


def next_mode(mode: ReasoningMode) -> ReasoningMode:
    """The mode after ``mode``: hidden → summary → raw → hidden."""
    return REASONING_MODES[(REASONING_MODES.index(mode) + 1) % len(REASONING_MODES)]


def known_mode(name: str) -> ReasoningMode | None:
    """The mode called ``name`` (None: no such mode)."""
    return next((mode for mode in REASONING_MODES if mode == name), None)


def switch_summarizer(
    conversation: ChatConversation, mode: ReasoningMode, options: ChatOptions, model: LoadedModel | None
) -> None:
    """Give ``conversation`` a summarizer in summary mode, none otherwise (call between turns only)."""
    if mode == "summary" and conversation.summarizer is None and model is not None:
        from harmony_chat.chat.factory import create_summarizer

        conversation.summarizer = create_summarizer(options, model)
    elif mode != "summary" and conversation.summarizer is not None:
        summarizer, conversation.summarizer = conversation.summarizer, None
        summarizer.close()  # a summary model of its own (a remote engine) is reached again if needed
