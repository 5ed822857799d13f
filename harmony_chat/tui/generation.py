"""The worker-thread side of the chat: load a model, run a conversation's turn, post batched events.

Nothing here touches widgets; it only calls ``post`` (the screen's thread-safe
``post_message``). Events are batched about 30 times a second, so the UI keeps up with any
generation speed while each batch stays small.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from textual.message import Message

from harmony_chat.chat.approval import STOPPED, ApprovalAnswer, give
from harmony_chat.chat.events import ApprovalRequested, ChatEvent, Notice
from harmony_chat.chat.factory import BackendFactory, LoadedModel
from harmony_chat.chat.options import ChatOptions
from harmony_chat.errors import HarmonyChatError
from harmony_chat.generation.bridge import FlushPolicy, PacedSender
from harmony_chat.generation.turn import PromptReady
from harmony_chat.tui.messages import ModelFailed, ModelLoading, TurnDone, TurnEvents

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation

FLUSH_SECONDS = 1 / 30
"""How often a batch of events is posted to the UI at most, once the answer's text has begun."""
MAX_IN_FLIGHT = 1
"""Batches posted but not yet rendered; more events wait in the next batch, so no backlog grows."""
LOAD_STEPS = 4
Post = Callable[[Message], object]


def load_in_worker(options: ChatOptions, post: Post, factory: BackendFactory | None = None) -> LoadedModel | None:
    """Create and load the model, posting progress; return it, or None after posting the failure.

    The caller posts :class:`~harmony_chat.tui.messages.ModelReady` (with the new conversation).
    """
    from harmony_chat.chat.factory import load_model

    step = 0

    def progress(label: str) -> None:
        nonlocal step
        step += 1
        post(ModelLoading(step, LOAD_STEPS, label))

    try:
        model = load_model(options, progress, factory)
    except HarmonyChatError as error:
        post(ModelFailed(str(error)))
        return None
    except MemoryError:
        post(ModelFailed("out of memory while loading the model; try a smaller model or fewer --gpu-layers"))
        return None
    except Exception as error:  # an engine failure must reach the UI, never crash it
        post(ModelFailed(f"{type(error).__name__}: {error}"))
        return None
    post(ModelLoading(LOAD_STEPS, LOAD_STEPS, "ready"))
    return model


FLUSH_POLICY = FlushPolicy(
    FLUSH_SECONDS,
    urgent=lambda event: isinstance(event, Notice),
    awaited=lambda event: isinstance(event, ApprovalRequested),
)
"""The bridge's policy at the screen's pace: a notice goes at once too, and a question whatever is in flight."""


class GenerationRun:
    """Posts one turn's events in batches, then a closing :class:`TurnDone`.

    The batches are the bridge's (:class:`~harmony_chat.generation.bridge.PacedSender` under
    :data:`FLUSH_POLICY`), sent from the worker's own thread; a batch waits while the one before
    is not yet rendered (:data:`MAX_IN_FLIGHT`), so no backlog grows. An
    :class:`~harmony_chat.chat.events.ApprovalRequested` goes at once, whatever is in flight (the
    turn waits for its answer); :meth:`withdraw` answers the open ones with a denial when the user
    stops the turn.
    """

    def __init__(self, turn_id: int, post: Post) -> None:
        self.turn_id = turn_id
        self.post = post
        self.in_flight: list[TurnEvents] = []
        self.sender: PacedSender[ChatEvent] = PacedSender(FLUSH_POLICY, self._post_batch, self._caught_up)
        self.prompted = False
        """Whether a generation call got as far as its prompt (so something may be on screen)."""
        self.asked: list[ApprovalAnswer] = []
        """The answers this turn has asked for (the open ones are denied by :meth:`withdraw`)."""
        self.withdrawn = False

    def _post_batch(self, batch: list[ChatEvent]) -> None:
        message = TurnEvents(self.turn_id, batch)
        self.in_flight.append(message)
        self.post(message)

    def _caught_up(self) -> bool:
        self.in_flight = [sent for sent in self.in_flight if not sent.handled.is_set()]
        return len(self.in_flight) < MAX_IN_FLIGHT

    def withdraw(self) -> None:
        """(Any thread) the turn was stopped: deny every approval it is waiting for, and any it asks for later."""
        self.withdrawn = True
        for answer in list(self.asked):
            give(answer, STOPPED)

    def add(self, event: ChatEvent) -> None:
        """Queue one event; it goes when the policy says it is due and the UI has caught up."""
        self.prompted = self.prompted or isinstance(event, PromptReady)
        if isinstance(event, ApprovalRequested):
            self.asked.append(event.answer)
            if self.withdrawn:  # stopped as it asked: :meth:`withdraw` may have missed it
                give(event.answer, STOPPED)
        self.sender.add(event)

    def run(self, events: Iterator[ChatEvent], conversation: ChatConversation) -> None:
        """Render ``events`` to the UI; a failure before any output drops the exchange and gives the words back."""
        error: str | None = None
        try:
            for event in events:
                self.add(event)
        except HarmonyChatError as failure:
            error = str(failure)
        except MemoryError:
            error = "out of memory while generating; try a shorter context or a smaller model"
        except Exception as failure:  # the backend broke: show it, keep the app alive
            error = f"{type(failure).__name__}: {failure}"
        no_output = error is not None and not self.prompted
        given_back = conversation.drop_last_exchange(keep_user=False) if no_output else None
        self.sender.flush()
        self.post(TurnDone(self.turn_id, error, no_output=no_output, given_back=given_back))
