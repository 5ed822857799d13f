"""Messages the worker threads post to the UI (``post_message`` is thread-safe)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

from harmony_chat.chat.events import ChatEvent
from harmony_chat.gguf.discovery import FoundModel

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.factory import LoadedModel
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.history.store import StoredConversation
    from harmony_chat.tools.base import ToolProvider


@dataclass
class TurnEvents(Message):
    """A batch of the conversation's events of one turn (its steps and tool calls), in order."""

    turn_id: int
    events: list[ChatEvent]
    posted_at: float = field(default_factory=time.monotonic)
    handled: threading.Event = field(default_factory=threading.Event)
    """Set by the UI once the batch is rendered; the worker holds the next batch back until then."""


@dataclass
class TurnDone(Message):
    """The generation worker has finished (``error`` says why it failed, if it did)."""

    turn_id: int
    error: str | None = None
    no_output: bool = False
    """True when the turn failed before generating anything (the exchange was dropped)."""
    given_back: str | None = None
    """The user's words to put back into the prompt (when ``no_output``)."""


@dataclass
class ModelLoading(Message):
    """Progress of a model load."""

    step: int
    total: int
    label: str


@dataclass
class ModelReady(Message):
    """A model finished loading (with a new conversation on it, unless the load was superseded)."""

    model: LoadedModel
    conversation: ChatConversation | None = None
    load_id: int = 0
    """The load it finished: one the user has moved on from since is let go, not shown."""


@dataclass
class ModelsFound(Message):
    """The search for gpt-oss GGUF files on this machine finished."""

    models: list[FoundModel]
    notice: str | None = None
    """Why the model did not load, if it did not."""
    load_id: int = 0
    """The model load this search belongs to (see ``ModelLoader.load_id``)."""


@dataclass
class ModelFailed(Message):
    """A model could not be loaded."""

    error: str


@dataclass
class ConversationOpened(Message):
    """A stored conversation was loaded into the conversation (by a worker), ready to be shown."""

    conversation: ChatConversation
    stored: StoredConversation


@dataclass
class ConversationFailed(Message):
    """A conversation operation in a worker failed (``error`` says why, in one line)."""

    error: str


@dataclass
class LastMessageTaken(Message):
    """The last exchange was removed (by a worker) for editing; ``text`` goes back into the prompt."""

    text: str | None


@dataclass
class ToolsReady(Message):
    """The tool providers started (MCP servers keep connecting in the background)."""

    providers: list[ToolProvider]
    runner: ToolRunner


@dataclass
class ToolsChanged(Message):
    """A tool server connected, failed or was switched (refresh what shows the tools)."""


@dataclass
class ToolNotice(Message):
    """A tool provider's notice (a server that failed to start or stopped)."""

    text: str
