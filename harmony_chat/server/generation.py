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

import asyncio
import contextlib
import math
import threading
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harmony_chat.chat.events import ReasoningSummary, SummaryStarted
from harmony_chat.errors import ContextOverflowError
from harmony_chat.generation.turn import TurnEvent, TurnOptions, run_turn, stream_turn
from harmony_chat.harmony.events import ContentDelta, MessageStarted, RawToken
from harmony_chat.server.errors import ApiError

if TYPE_CHECKING:
    from collections.abc import Iterator

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


class _Ended:
    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class TurnRun:
    """One assistant turn, generated on the event loop or in a worker thread.

    A backend that streams on the event loop (a remote engine) runs the turn as a task of the
    request: its ids are decoded where they arrive, with no thread and no hand-over. The
    in-process model (which releases the GIL while it computes) and a turn with reasoning
    summaries (the model pauses the turn to write them) run in a worker thread. Either way the
    events reach :meth:`batches` under one flush policy.

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
        self.on_loop = backend.streams_on_event_loop and summarizer is None
        """Whether the turn runs as a task on the event loop (else in a worker thread)."""
        self._stop = threading.Event()
        self._ended = asyncio.Event()
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def cancelled(self) -> bool:
        """Whether the turn was asked to stop."""
        return self._stop.is_set()

    def stop(self) -> None:
        """End the turn at its next token, its closing events (usage) still coming: the answer is complete."""
        self._stop.set()

    def cancel(self) -> None:
        """Drop the turn: nobody reads it any more (a turn on the event loop stops at once, with no closing events)."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            task.get_loop().call_soon_threadsafe(task.cancel)

    def _turn(self) -> Iterator[ServedEvent]:
        """The turn's events (run in the worker thread), with the summaries where they are due."""
        stop = self._stop.is_set
        if self.summarizer is None:
            return run_turn(self.session, self.backend, self.options, stop)
        watch = self.summarizer.watch(self.backend, self.options.sampling, stop)
        return watch.interleave(run_turn(self.session, watch.model, self.options, stop, background=False))  # it pauses

    def _scored(self, event: RawToken) -> ScoredToken | None:
        """The token's log probabilities, when the request asks and the backend gave them."""
        scored = _take_logprob(self.backend.token_logprobs, event.token_id)
        return None if scored is None else score(self.session.encoding, event, scored)

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
        """Start the turn and yield its events in batches: each time, all that came since the last.

        Until the turn's first text, each batch goes as soon as it comes (the time to the first
        token is never held back); after it, at most one batch per :data:`FLUSH_S`, and the last
        one as soon as the turn ends. A new message's start and its first text are never held
        either (the answer's first words after the reasoning go out as they come). A fast
        model's tokens thus cost one wake-up, one encoding and one write per batch instead of
        per token (the CPU they save is the engine's, on a machine that runs both); a slow one's
        go out one by one, as they come.

        Raises:
            ApiError: 400 when the prompt does not fit the context; 500 when the turn fails
                before it starts.
        """
        loop = asyncio.get_running_loop()
        arrived = asyncio.Event()
        finished = asyncio.Event()
        urgent = asyncio.Event()
        """Set when the turn ends or a message starts: what is pending goes at once."""
        pending: list[ServedEvent | _Ended] = []
        lock = threading.Lock()
        if self.on_loop:
            self._task = loop.create_task(self._run_on_loop(pending, arrived, finished, urgent))
        else:
            self._start_thread(loop, pending, lock, arrived, finished, urgent)
        started = False
        text_sent_at: float | None = None
        while True:
            await arrived.wait()
            if text_sent_at is not None and not finished.is_set():
                hold = text_sent_at + FLUSH_S - loop.time()
                if hold > 0:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(hold):  # no task per wait, unlike wait_for
                            await urgent.wait()  # the end or a new message cuts it short
            with lock:
                items = pending[:]
                pending.clear()
                arrived.clear()
            urgent.clear()
            batch: list[ServedEvent] = []
            for item in items:
                if isinstance(item, _Ended):
                    if item.error is not None and not started and not batch:
                        raise _api_error(item.error)
                    if batch:
                        yield batch
                    return
                batch.append(item)
            if batch:
                started = True
                opened = [index for index, event in enumerate(batch) if isinstance(event, MessageStarted)]
                text = any(isinstance(event, ContentDelta) for event in batch[opened[-1] + 1 if opened else 0 :])
                if opened and not text:
                    text_sent_at = None  # a new message: its first text goes at once too
                elif text_sent_at is not None or text:
                    text_sent_at = loop.time()
                yield batch

    async def _run_on_loop(
        self,
        pending: list[ServedEvent | _Ended],
        arrived: asyncio.Event,
        finished: asyncio.Event,
        urgent: asyncio.Event,
    ) -> None:
        """Run the turn on the event loop, adding its events to ``pending`` as each arrival is decoded."""
        error: BaseException | None = None
        try:
            async for events in stream_turn(self.session, self.backend, self.options, self._stop.is_set):
                pending.extend(self._with_scores(events) if self.logprobs else events)
                arrived.set()
                if any(isinstance(event, MessageStarted) for event in events):
                    urgent.set()
        except asyncio.CancelledError:
            self._stop.set()  # cancelled: the client left or the server is stopping
        except Exception as failure:  # reported to the request
            error = failure
        finally:
            pending.append(_Ended(error))
            arrived.set()
            finished.set()
            urgent.set()
            self._ended.set()

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

    def _start_thread(
        self,
        loop: asyncio.AbstractEventLoop,
        pending: list[ServedEvent | _Ended],
        lock: threading.Lock,
        arrived: asyncio.Event,
        finished: asyncio.Event,
        urgent: asyncio.Event,
    ) -> None:
        """Run the turn in a worker thread that wakes the event loop only when a batch starts."""

        def post(item: ServedEvent | _Ended) -> None:
            with lock:
                pending.append(item)
                first = len(pending) == 1
            try:
                if first:
                    loop.call_soon_threadsafe(arrived.set)
                if isinstance(item, _Ended):
                    loop.call_soon_threadsafe(finished.set)
                if isinstance(item, _Ended | MessageStarted):
                    loop.call_soon_threadsafe(urgent.set)
            except RuntimeError:  # the loop is gone (server shutting down): nobody is listening
                self._stop.set()

        def work() -> None:
            error: BaseException | None = None
            try:
                for event in self._turn():
                    post(event)
                    if self.logprobs and isinstance(event, RawToken):
                        scored = self._scored(event)
                        if scored is not None:
                            post(scored)
            except BaseException as failure:  # reported to the request, never raised in the thread
                error = failure
            finally:
                post(_Ended(error))
                try:
                    loop.call_soon_threadsafe(self._ended.set)
                except RuntimeError:
                    pass

        self._thread = threading.Thread(target=work, name="harmony-chat-serve-turn", daemon=True)
        self._thread.start()

    async def wait_ended(self) -> None:
        """Return once the turn has finished (at once if it never started)."""
        if self._thread is not None or self._task is not None:
            await self._ended.wait()


def _api_error(error: BaseException) -> ApiError:
    if isinstance(error, ContextOverflowError):
        return ApiError(400, str(error), code="context_length_exceeded", param="messages")
    return ApiError(500, f"the model failed: {str(error) or type(error).__name__}")
