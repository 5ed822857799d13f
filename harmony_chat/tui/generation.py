"""The worker-thread side of the chat: load a model, run a turn, post batched events to the UI.

Nothing here touches widgets; it only calls ``post`` (the screen's thread-safe
``post_message``). Events are batched about 30 times a second, so the UI keeps up with any
generation speed while each batch stays small.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from harmony_chat.backends.base import ModelBackend
from harmony_chat.errors import HarmonyChatError
from harmony_chat.harmony.turn import PromptReady, TurnEvent, TurnOptions, TurnStats, run_turn
from harmony_chat.launch import LaunchOptions, create_backend
from harmony_chat.tui.messages import ModelFailed, ModelLoading, ModelReady, TurnDone, TurnEvents

if TYPE_CHECKING:
    from harmony_chat.harmony.session import ChatSession
    from harmony_chat.history.recording import TurnRecorder

FLUSH_SECONDS = 1 / 30
"""How often a batch of events is posted to the UI at most."""
MAX_IN_FLIGHT = 1
"""Batches posted but not yet rendered; more events wait in the next batch, so no backlog grows."""
Post = Callable[[Message], object]


BackendFactory = Callable[[LaunchOptions], tuple[ModelBackend, Path | None]]
"""Builds the backend for launch options (tests and screenshots pass their own)."""


def load_model(options: LaunchOptions, post: Post, factory: BackendFactory = create_backend) -> ModelBackend | None:
    """Create and load the backend, posting progress; return it, or None after posting the failure."""
    from harmony_chat.harmony.vocab import load_encoding

    try:
        post(ModelLoading(1, 4, "finding the model" + (" (downloading from Hugging Face)" if options.hf_repo else "")))
        backend, model_path = factory(options)
        post(ModelLoading(2, 4, "loading the harmony vocabulary"))
        load_encoding(model_path)
        post(ModelLoading(3, 4, "loading weights and checking the tokenizer"))
        info = backend.load()
    except HarmonyChatError as error:
        post(ModelFailed(str(error)))
        return None
    except MemoryError:
        post(ModelFailed("out of memory while loading the model; try a smaller model or fewer --gpu-layers"))
        return None
    except Exception as error:  # an engine failure must reach the UI, never crash it
        post(ModelFailed(f"{type(error).__name__}: {error}"))
        return None
    post(ModelLoading(4, 4, "ready"))
    post(ModelReady(info))
    return backend


def run_generation(
    session: ChatSession,
    backend: ModelBackend,
    options: TurnOptions,
    turn_id: int,
    should_stop: Callable[[], bool],
    post: Post,
    recorder: TurnRecorder | None = None,
) -> None:
    """Run one turn, posting batches of events and a closing :class:`TurnDone`.

    With a ``recorder``, finished messages go to the history as they are generated.
    """
    batch: list[TurnEvent] = []
    last_post = time.monotonic()
    in_flight: list[TurnEvents] = []
    started = False
    error: str | None = None
    final_stats: TurnStats | None = None
    history_error: str | None = None
    try:
        for event in run_turn(session, backend, options, should_stop):
            started = started or isinstance(event, PromptReady)
            batch.append(event)
            if recorder is not None:
                try:
                    recorder.on_event(event)
                except (HarmonyChatError, OSError, sqlite3.Error) as failure:
                    recorder, history_error = None, f"the history could not be saved: {failure}"
            if isinstance(event, TurnStats):
                final_stats = event
            now = time.monotonic()
            if now - last_post >= FLUSH_SECONDS:
                in_flight = [sent for sent in in_flight if not sent.handled.is_set()]
                if len(in_flight) < MAX_IN_FLIGHT:
                    message = TurnEvents(turn_id, batch)
                    in_flight.append(message)
                    post(message)
                    batch, last_post = [], now
    except HarmonyChatError as failure:
        error = str(failure)
    except MemoryError:
        error = "out of memory while generating; try a shorter context or a smaller model"
    except Exception as failure:  # the backend broke: show it, keep the app alive
        error = f"{type(failure).__name__}: {failure}"
    if batch:
        post(TurnEvents(turn_id, batch))
    if recorder is not None:
        try:
            recorder.finish(final_stats, error)
        except (HarmonyChatError, OSError, sqlite3.Error) as failure:
            history_error = f"the history could not be saved: {failure}"
    post(TurnDone(turn_id, error, no_output=not started, history_error=history_error))
