"""Messages the worker threads post to the UI (``post_message`` is thread-safe)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from textual.message import Message

from harmony_chat.backends.base import ModelInfo
from harmony_chat.harmony.turn import TurnEvent
from harmony_chat.models import FoundModel


@dataclass
class TurnEvents(Message):
    """A batch of engine events of one turn, in order."""

    turn_id: int
    events: list[TurnEvent]
    posted_at: float = field(default_factory=time.monotonic)
    handled: threading.Event = field(default_factory=threading.Event)
    """Set by the UI once the batch is rendered; the worker holds the next batch back until then."""


@dataclass
class TurnDone(Message):
    """The generation worker has finished (``error`` says why it failed, if it did)."""

    turn_id: int
    error: str | None = None
    no_output: bool = False
    """True when the turn failed before generating anything (the user's message is given back)."""
    history_error: str | None = None
    """Why the turn could not be saved to the history, if it could not."""


@dataclass
class ModelLoading(Message):
    """Progress of a model load."""

    step: int
    total: int
    label: str


@dataclass
class ModelReady(Message):
    """A model finished loading."""

    info: ModelInfo


@dataclass
class ModelsFound(Message):
    """The search for gpt-oss GGUF files on this machine finished."""

    models: list[FoundModel]
    notice: str | None = None
    """Why the model did not load, if it did not."""
    load_id: int = 0
    """The model load this search belongs to (see ``ChatScreen.load_id``)."""


@dataclass
class ModelFailed(Message):
    """A model could not be loaded."""

    error: str
