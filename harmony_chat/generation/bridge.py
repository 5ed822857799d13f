"""The one bridge from a generating turn to whoever shows or sends its events, in batches under one flush policy.

A turn's events come from one of two producers: a thread running a blocking iterator (the
in-process model, which releases the GIL while it computes; a turn paused for reasoning summaries)
or a task on the event loop (an engine's stream, decoded where it arrives: no thread, no hand-over).
:class:`EventBridge` runs either and hands the events to an async consumer in batches; a consumer
on the producer's own thread (the chat app's worker, which posts to the UI) gets the same batches
from :class:`PacedSender`. The policy (:class:`FlushPolicy`, kept by :class:`FlushClock`) is the
same everywhere:

- until the turn's first text, a batch goes as soon as it comes (the first token is never held);
- after it, at most one batch per ``interval_s`` (a fast model's tokens cost one wake-up and one
  write per batch, not per token; a slow one's still go one by one);
- a new message's start and its first text go at once (the answer's first words after the
  reasoning are never held), and so does the end of the turn and anything :meth:`FlushPolicy.urgent`;
- what the producer then waits on (:meth:`FlushPolicy.awaited`: a question to the user) goes at
  once even past a consumer that has not caught up.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from harmony_chat.harmony.events import ContentDelta, MessageStarted

Event = TypeVar("Event")


def _never(event: object) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class FlushPolicy:
    """How often batches go, and what goes at once."""

    interval_s: float
    """After the first text, the least time between two batches."""
    urgent: Callable[[object], bool] = field(default=_never)
    """Events that make what is pending go at once (besides a message's start and the end)."""
    awaited: Callable[[object], bool] = field(default=_never)
    """Events the producer waits on after it yields them: they go at once, whatever the consumer's backlog."""


class FlushClock:
    """When the next batch may go, from what the batches sent so far held (one per consumer)."""

    def __init__(self, policy: FlushPolicy) -> None:
        self.policy = policy
        self._text_sent_at: float | None = None

    def hold(self, now: float) -> float:
        """Seconds the pending events may still wait (0: send them now)."""
        if self._text_sent_at is None:
            return 0.0
        return max(0.0, self._text_sent_at + self.policy.interval_s - now)

    def is_urgent(self, event: object) -> bool:
        """Whether ``event`` makes what is pending go at once."""
        return isinstance(event, MessageStarted) or self.policy.urgent(event) or self.policy.awaited(event)

    def sent(self, batch: Sequence[object], now: float) -> None:
        """A batch went at ``now``: a message opened without its text yet keeps the next one from waiting."""
        opened = [index for index, event in enumerate(batch) if isinstance(event, MessageStarted)]
        text = any(isinstance(event, ContentDelta) for event in batch[opened[-1] + 1 if opened else 0 :])
        if opened and not text:
            self._text_sent_at = None  # a new message: its first text goes at once too
        elif self._text_sent_at is not None or text:
            self._text_sent_at = now


class PacedSender(Generic[Event]):
    """Batches for a consumer on the producer's own thread, under the policy and the consumer's pace.

    Events are queued; a batch goes (``send``) when the policy says it is due and the consumer
    has caught up (``caught_up``: the batches sent before are taken in), so no backlog grows; an
    :meth:`FlushPolicy.awaited` event goes at once whatever the backlog (the producer waits on it).

    Args:
        policy: when batches go.
        send: hands one batch to the consumer (e.g. posts it to the UI's thread).
        caught_up: whether the consumer has taken in what was sent.
        clock: seconds, monotonic.
    """

    def __init__(
        self,
        policy: FlushPolicy,
        send: Callable[[list[Event]], object],
        caught_up: Callable[[], bool],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.policy = policy
        self._send = send
        self._caught_up = caught_up
        self._clock = clock
        self._flush_clock = FlushClock(policy)
        self._pending: list[Event] = []

    def add(self, event: Event) -> None:
        """Queue ``event``; send what is queued when it is due and the consumer keeps up (at once if awaited)."""
        self._pending.append(event)
        if self.policy.awaited(event):
            self.flush()
        elif (self._flush_clock.hold(self._clock()) <= 0 or self._flush_clock.is_urgent(event)) and self._caught_up():
            self.flush()

    def flush(self) -> None:
        """Send what is queued now, whatever the consumer's backlog (the turn's end)."""
        if self._pending:
            batch, self._pending = self._pending, []
            self._send(batch)
            self._flush_clock.sent(batch, self._clock())


class _Ended:
    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class EventBridge(Generic[Event]):
    """One turn's events from its producer (a thread or a task on the loop) to an async consumer, in batches.

    Give exactly one producer. Each gets a ``should_stop`` to poll.

    Args:
        policy: when batches go.
        threaded: a blocking iterator of the events, run in a thread of its own.
        on_loop: an async iterator of groups of events, run as a task on the consumer's loop.
        thread_name: the thread's name (for the threaded producer).
    """

    def __init__(
        self,
        policy: FlushPolicy,
        *,
        threaded: Callable[[Callable[[], bool]], Iterator[Event]] | None = None,
        on_loop: Callable[[Callable[[], bool]], AsyncIterator[Sequence[Event]]] | None = None,
        thread_name: str = "harmony-chat-turn",
    ) -> None:
        if (threaded is None) == (on_loop is None):
            raise ValueError("give exactly one producer: threaded or on_loop")
        self.policy = policy
        self._threaded = threaded
        self._on_loop = on_loop
        self._thread_name = thread_name
        self._stop = threading.Event()
        self._ended = asyncio.Event()
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def on_event_loop(self) -> bool:
        """Whether the producer is a task on the event loop (else a thread)."""
        return self._on_loop is not None

    @property
    def stopping(self) -> bool:
        """Whether the turn was asked to stop."""
        return self._stop.is_set()

    def stop(self) -> None:
        """End the turn at its next token; its closing events still come (the answer is complete)."""
        self._stop.set()

    def cancel(self) -> None:
        """Drop the turn: nobody reads it any more (a task on the loop stops at once, with no closing events)."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            task.get_loop().call_soon_threadsafe(task.cancel)

    async def wait_ended(self) -> None:
        """Return once the producer has finished (at once if it never started)."""
        if self._thread is not None or self._task is not None:
            await self._ended.wait()

    async def batches(self) -> AsyncIterator[list[Event]]:
        """Start the producer and yield its events in batches under the policy.

        Raises:
            BaseException: what the producer raised before it produced anything (a failure after
                that ends the batches quietly: the turn's own closing events carry it).
        """
        loop = asyncio.get_running_loop()
        clock = FlushClock(self.policy)
        arrived = asyncio.Event()
        finished = asyncio.Event()
        urgent = asyncio.Event()
        """Set when the turn ends or something urgent comes: what is pending goes at once."""
        pending: list[Event | _Ended] = []
        lock = threading.Lock()
        if self._on_loop is not None:
            self._task = loop.create_task(self._run_on_loop(self._on_loop, pending, arrived, finished, urgent, clock))
        else:
            assert self._threaded is not None
            self._start_thread(self._threaded, loop, pending, lock, arrived, finished, urgent, clock)
        started = False
        while True:
            await arrived.wait()
            if not finished.is_set():
                hold = clock.hold(loop.time())
                if hold > 0:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(hold):  # no task per wait, unlike wait_for
                            await urgent.wait()  # the end or something urgent cuts it short
            with lock:
                items = pending[:]
                pending.clear()
                arrived.clear()
            urgent.clear()
            batch: list[Event] = []
            for item in items:
                if isinstance(item, _Ended):
                    if item.error is not None and not started and not batch:
                        raise item.error
                    if batch:
                        yield batch
                    return
                batch.append(item)
            if batch:
                started = True
                clock.sent(batch, loop.time())
                yield batch

    async def _run_on_loop(
        self,
        produce: Callable[[Callable[[], bool]], AsyncIterator[Sequence[Event]]],
        pending: list[Event | _Ended],
        arrived: asyncio.Event,
        finished: asyncio.Event,
        urgent: asyncio.Event,
        clock: FlushClock,
    ) -> None:
        error: BaseException | None = None
        try:
            async for events in produce(self._stop.is_set):
                pending.extend(events)
                arrived.set()
                if any(clock.is_urgent(event) for event in events):
                    urgent.set()
        except asyncio.CancelledError:
            self._stop.set()  # cancelled: the consumer left or the server is stopping
        except Exception as failure:  # handed to the consumer
            error = failure
        finally:
            pending.append(_Ended(error))
            arrived.set()
            finished.set()
            urgent.set()
            self._ended.set()

    def _start_thread(
        self,
        produce: Callable[[Callable[[], bool]], Iterator[Event]],
        loop: asyncio.AbstractEventLoop,
        pending: list[Event | _Ended],
        lock: threading.Lock,
        arrived: asyncio.Event,
        finished: asyncio.Event,
        urgent: asyncio.Event,
        clock: FlushClock,
    ) -> None:
        """Run the producer in a thread that wakes the event loop only when a batch starts or something is urgent."""

        def post(item: Event | _Ended) -> None:
            with lock:
                pending.append(item)
                first = len(pending) == 1
            try:
                if first:
                    loop.call_soon_threadsafe(arrived.set)
                if isinstance(item, _Ended):
                    loop.call_soon_threadsafe(finished.set)
                if isinstance(item, _Ended) or clock.is_urgent(item):
                    loop.call_soon_threadsafe(urgent.set)
            except RuntimeError:  # the loop is gone (shutting down): nobody is listening
                self._stop.set()

        def work() -> None:
            error: BaseException | None = None
            try:
                for event in produce(self._stop.is_set):
                    post(event)
            except BaseException as failure:  # handed to the consumer, never raised in the thread
                error = failure
            finally:
                post(_Ended(error))
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._ended.set)

        self._thread = threading.Thread(target=work, name=self._thread_name, daemon=True)
        self._thread.start()
