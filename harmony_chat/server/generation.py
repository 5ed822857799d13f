"""A request's turn, bridged to its coroutine: on the event loop for an engine, in a thread in process.

A remote engine's turn runs as a task on the event loop (:func:`stream_turn`): one pooled client
per engine, the ids decoded where they arrive. The in-process model blocks, so its turn runs
:func:`run_turn` in a thread that hands its events over in batches. Cancelling (the client went
away) cancels the task, or sets the flag the backend polls; :meth:`TurnRun.wait_ended` lets the
caller hold its handle on the model until the turn has really stopped, so the next generation on
that handle never overlaps it. When the request asks for reasoning summaries, the turn runs in a
thread under a :class:`~harmony_chat.chat.summary.ReasoningWatch`: after each analysis message the
model pauses the turn, writes the summary, and resumes.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harmony_chat.chat.events import ReasoningSummary, SummaryStarted
from harmony_chat.errors import ContextOverflowError
from harmony_chat.generation.bridge import EventBridge, FlushPolicy
from harmony_chat.generation.turn import TurnEvent, TurnOptions, run_turn, stream_turn
from harmony_chat.harmony.events import RawToken
from harmony_chat.server.errors import ApiError

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

    from harmony_chat.backends.base import ModelBackend, TokenLogprob
    from harmony_chat.chat.summary import Summarizer
    from harmony_chat.harmony.session import ChatSession

FLUSH_S = 0.02
"""Once a turn's text has begun, it reaches the client at most once per this many seconds (in batches)."""
UNREPRESENTABLE_LOGPROB = -9999.0
"""OpenAI's log probability for a token the model gave no chance (JSON has no infinity)."""


@dataclass(frozen=True, slots=True)
class ScoredToken:
    """A generated token's log probabilities, sent right after its :class:`RawToken` when a request asks."""

    token_id: int
    special: bool
    text: str
    raw: bytes
    """The token's bytes (one token may hold part of a UTF-8 character)."""
    logprob: float
    top: tuple[tuple[str, bytes, float], ...] = ()
    """The most likely tokens in its place: text, bytes, log probability."""


ServedEvent = TurnEvent | SummaryStarted | ReasoningSummary | ScoredToken
"""What a request's turn yields: the turn's events and, when asked for, its reasoning summaries and
its tokens' log probabilities."""


def _token_bytes(encoding: HarmonyEncoding, token: int) -> bytes:
    raw: bytes = encoding.decode([token], errors="surrogateescape").encode("utf-8", "surrogateescape")
    return raw


def _finite(value: float) -> float:
    return value if math.isfinite(value) else UNREPRESENTABLE_LOGPROB


def score(encoding: HarmonyEncoding, token: RawToken, logprob: TokenLogprob) -> ScoredToken:
    """The token's log probabilities with the text and bytes of it and of its alternatives."""
    top = tuple(
        (raw.decode("utf-8", errors="replace"), raw, _finite(value))
        for raw, value in ((_token_bytes(encoding, other), value) for other, value in logprob.top)
    )
    raw = b"" if token.special else _token_bytes(encoding, token.token_id)
    return ScoredToken(token.token_id, token.special, token.text, raw, _finite(logprob.logprob), top)


def _take_logprob(queue: deque[TokenLogprob] | None, token_id: int) -> TokenLogprob | None:
    """The oldest queued log probabilities if they are ``token_id``'s (taken off the queue), else None."""
    if not queue or queue[0].token_id != token_id:
        return None
    return queue.popleft()


class TurnRun:
    """One assistant turn for one request, through the :class:`~harmony_chat.generation.bridge.EventBridge`.

    A backend that streams on the event loop (a remote engine) runs the turn as a task of the
    request (:func:`stream_turn`); the in-process model (which releases the GIL while it computes)
    and a turn with reasoning summaries (the model pauses the turn to write them) run in a thread
    (:func:`run_turn`). Either way the events reach :meth:`batches` under the bridge's one policy,
    with each token's log probabilities after it when the request asks.

    Args:
        session: the request's session (the turn is recorded in it).
        backend: the loaded model.
        options: sampling, effort, schemas.
        summarizer: writes a summary after each analysis message (None: no summaries).
    """

    def __init__(
        self, session: ChatSession, backend: ModelBackend, options: TurnOptions, summarizer: Summarizer | None = None
    ) -> None:
        self.session = session
        self.backend = backend
        self.options = options
        self.summarizer = summarizer
        self.logprobs = options.sampling.logprobs is not None
        """Whether each token's log probabilities follow it (a :class:`ScoredToken` after its RawToken)."""
        policy = FlushPolicy(FLUSH_S)
        self.bridge: EventBridge[ServedEvent]
        if backend.streams_on_event_loop and summarizer is None:
            self.bridge = EventBridge(policy, on_loop=self._on_loop)
        else:
            self.bridge = EventBridge(policy, threaded=self._threaded, thread_name="harmony-chat-serve-turn")

    @property
    def on_loop(self) -> bool:
        """Whether the turn runs as a task on the event loop (else in a worker thread)."""
        return self.bridge.on_event_loop

    @property
    def cancelled(self) -> bool:
        """Whether the turn was asked to stop."""
        return self.bridge.stopping

    def stop(self) -> None:
        """End the turn at its next token, its closing events (usage) still coming: the answer is complete."""
        self.bridge.stop()

    def cancel(self) -> None:
        """Drop the turn: nobody reads it any more (a turn on the event loop stops at once, with no closing events)."""
        self.bridge.cancel()

    async def wait_ended(self) -> None:
        """Return once the turn has finished (at once if it never started)."""
        await self.bridge.wait_ended()

    def _threaded(self, stop: Callable[[], bool]) -> Iterator[ServedEvent]:
        """The turn's events in the worker thread, with the summaries where they are due."""
        if self.summarizer is None:
            events: Iterator[ServedEvent] = run_turn(self.session, self.backend, self.options, stop)
        else:
            watch = self.summarizer.watch(self.backend, self.options.sampling, stop)
            events = watch.interleave(run_turn(self.session, watch.model, self.options, stop, background=False))
        for event in events:
            yield event
            if self.logprobs and isinstance(event, RawToken):
                scored = self._scored(event)
                if scored is not None:
                    yield scored

    async def _on_loop(self, stop: Callable[[], bool]) -> AsyncIterator[list[ServedEvent]]:
        """The turn's events on the event loop, a group per arrival from the engine."""
        async for events in stream_turn(self.session, self.backend, self.options, stop):
            yield self._with_scores(events) if self.logprobs else list(events)

    def _scored(self, event: RawToken) -> ScoredToken | None:
        """The token's log probabilities, when the request asks and the backend gave them."""
        scored = _take_logprob(self.backend.token_logprobs, event.token_id)
        return None if scored is None else score(self.session.encoding, event, scored)

    def _with_scores(self, events: list[TurnEvent]) -> list[ServedEvent]:
        """``events`` with each generated token's log probabilities right after it."""
        served: list[ServedEvent] = []
        for event in events:
            served.append(event)
            if isinstance(event, RawToken):
                scored = self._scored(event)
                if scored is not None:
                    served.append(scored)
        return served

    async def events(self) -> AsyncIterator[ServedEvent]:
        """Start the turn and yield its events one by one as they come (see :meth:`batches`).

        Raises:
            ApiError: 400 when the prompt does not fit the context; 500 when the turn fails
                before it starts.
        """
        async for batch in self.batches():
            for event in batch:
                yield event

    async def batches(self) -> AsyncIterator[list[ServedEvent]]:
        """Start the turn and yield its events in batches (the bridge's policy, with :data:`FLUSH_S`).

        Raises:
            ApiError: 400 when the prompt does not fit the context; 500 when the turn fails
                before it starts.
        """
        try:
            async for batch in self.bridge.batches():
                yield batch
        except ApiError:
            raise
        except Exception as error:
            raise _api_error(error) from None


def _api_error(error: BaseException) -> ApiError:
    if isinstance(error, ContextOverflowError):
        return ApiError(400, str(error), code="context_length_exceeded", param="messages")
    return ApiError(500, f"the model failed: {str(error) or type(error).__name__}")
