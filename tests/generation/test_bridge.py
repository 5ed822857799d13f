"""The one bridge from a generating turn to its consumer: both producers, one flush policy.

The interval is long (10 s) so what is held and what goes at once does not depend on the
machine's speed: after the first text everything waits for the end or for something urgent.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence

import pytest

from harmony_chat.generation.bridge import EventBridge, FlushClock, FlushPolicy, PacedSender
from harmony_chat.harmony.events import ContentDelta, MessageStarted

LONG = FlushPolicy(10.0, urgent=lambda event: event == "urgent")
OPEN = MessageStarted("final", None, None)
TEXT = [ContentDelta("final", letter) for letter in "abc"]
EVENTS: list[object] = [OPEN, TEXT[0], TEXT[1], TEXT[2]]


def threaded(events: Sequence[object], pause_s: float = 0.02) -> Callable[[Callable[[], bool]], Iterator[object]]:
    def produce(stop: Callable[[], bool]) -> Iterator[object]:
        for event in events:
            time.sleep(pause_s)
            yield event

    return produce


def on_loop(groups: Sequence[Sequence[object]], pause_s: float = 0.02) -> Callable[..., AsyncIterator[list[object]]]:
    async def produce(stop: Callable[[], bool]) -> AsyncIterator[list[object]]:
        for group in groups:
            await asyncio.sleep(pause_s)
            yield list(group)

    return produce


def collect(bridge: EventBridge[object]) -> list[list[object]]:
    async def run() -> list[list[object]]:
        return [batch async for batch in bridge.batches()]

    return asyncio.run(run())


def test_the_first_text_goes_at_once_then_the_rest_waits_for_the_end_threaded() -> None:
    batches = collect(EventBridge(LONG, threaded=threaded(EVENTS)))
    assert batches == [[OPEN], [TEXT[0]], [TEXT[1], TEXT[2]]]


def test_the_same_policy_on_the_event_loop() -> None:
    batches = collect(EventBridge(LONG, on_loop=on_loop([[OPEN], [TEXT[0]], [TEXT[1]], [TEXT[2]]])))
    assert batches == [[OPEN], [TEXT[0]], [TEXT[1], TEXT[2]]]


@pytest.mark.parametrize("kind", ["threaded", "on_loop"])
def test_a_new_message_and_anything_urgent_cut_the_hold_short(kind: str) -> None:
    second = MessageStarted("commentary", None, None)
    events: list[object] = [OPEN, TEXT[0], TEXT[1], "urgent", TEXT[2], second, ContentDelta("commentary", "z")]
    if kind == "threaded":
        bridge: EventBridge[object] = EventBridge(LONG, threaded=threaded(events, 0.05))
    else:
        bridge = EventBridge(LONG, on_loop=on_loop([[event] for event in events], 0.05))
    started = time.monotonic()
    batches = collect(bridge)
    assert time.monotonic() - started < 5  # never waited out the 10 s interval
    assert [TEXT[1], "urgent"] in batches  # the urgent event took what waited with it
    index = next(i for i, batch in enumerate(batches) if second in batch)
    assert batches[index][-1] is second  # the new message went at once...
    assert batches[index + 1] == [ContentDelta("commentary", "z")]  # ...and so did its first text


@pytest.mark.parametrize("kind", ["threaded", "on_loop"])
def test_a_failure_before_anything_is_raised_and_after_something_ends_quietly(kind: str) -> None:
    def failing_now(stop: Callable[[], bool]) -> Iterator[object]:
        raise ValueError("no room")
        yield  # pragma: no cover

    async def failing_now_async(stop: Callable[[], bool]) -> AsyncIterator[list[object]]:
        raise ValueError("no room")
        yield []  # pragma: no cover

    def failing_later(stop: Callable[[], bool]) -> Iterator[object]:
        yield OPEN
        raise ValueError("broke")

    async def failing_later_async(stop: Callable[[], bool]) -> AsyncIterator[list[object]]:
        yield [OPEN]
        raise ValueError("broke")

    now: EventBridge[object] = (
        EventBridge(LONG, threaded=failing_now) if kind == "threaded" else EventBridge(LONG, on_loop=failing_now_async)
    )
    with pytest.raises(ValueError, match="no room"):
        collect(now)
    later: EventBridge[object] = (
        EventBridge(LONG, threaded=failing_later)
        if kind == "threaded"
        else EventBridge(LONG, on_loop=failing_later_async)
    )
    assert collect(later) == [[OPEN]]  # the turn's own closing events carry a later failure


def test_stop_lets_the_producer_finish_and_cancel_drops_the_task() -> None:
    seen_stop = threading.Event()

    async def endless(stop: Callable[[], bool]) -> AsyncIterator[list[object]]:
        while not stop():
            await asyncio.sleep(0.01)
            yield [TEXT[0]]
        seen_stop.set()
        yield ["closing"]

    async def stopped() -> list[object]:
        bridge: EventBridge[object] = EventBridge(FlushPolicy(0.01), on_loop=endless)
        got: list[object] = []
        async for batch in bridge.batches():
            got += batch
            if len(got) >= 3:
                bridge.stop()
        await bridge.wait_ended()
        return got

    got = asyncio.run(stopped())
    assert seen_stop.is_set() and got[-1] == "closing"  # stop: the closing events still come

    async def cancelled() -> bool:
        bridge: EventBridge[object] = EventBridge(FlushPolicy(0.01), on_loop=endless)
        async for _ in bridge.batches():
            bridge.cancel()
        await bridge.wait_ended()
        return bridge.stopping

    seen_stop.clear()
    assert asyncio.run(cancelled()) and not seen_stop.is_set()  # cancel: dropped where it stood


def test_exactly_one_producer() -> None:
    with pytest.raises(ValueError, match="exactly one producer"):
        EventBridge(LONG)
    with pytest.raises(ValueError, match="exactly one producer"):
        EventBridge(LONG, threaded=threaded([]), on_loop=on_loop([]))


def test_the_clock_holds_only_after_text_and_not_after_a_new_message() -> None:
    clock = FlushClock(FlushPolicy(1.0))
    assert clock.hold(0.0) == 0.0  # nothing sent: go
    clock.sent([OPEN], 0.0)
    assert clock.hold(0.1) == 0.0  # a header alone: its first text goes at once
    clock.sent([TEXT[0]], 0.2)
    assert clock.hold(0.5) == pytest.approx(0.7)
    clock.sent([TEXT[1], MessageStarted("final", None, None)], 0.6)
    assert clock.hold(0.7) == 0.0  # a new message opened: its first text goes at once


def test_the_paced_sender_gives_a_consumer_on_the_producer_s_thread_the_same_batches() -> None:
    now = [0.0]
    sent: list[list[object]] = []
    caught_up = [True]
    policy = FlushPolicy(1.0, urgent=lambda event: event == "urgent", awaited=lambda event: event == "question")
    sender: PacedSender[object] = PacedSender(policy, sent.append, lambda: caught_up[0], clock=lambda: now[0])
    for event in EVENTS:  # the header, then the first text go at once; the rest waits out the interval
        sender.add(event)
    assert sent == [[OPEN], [TEXT[0]]]
    now[0] = 1.5
    sender.add("late")  # due: what waited goes with it
    assert sent[-1] == [TEXT[1], TEXT[2], "late"]
    caught_up[0] = False  # the consumer has not taken that in: nothing more goes, due or urgent
    now[0] = 3.0
    sender.add("urgent")
    assert len(sent) == 3
    sender.add("question")  # the producer waits on it: it goes past the backlog, with what waited
    assert sent[-1] == ["urgent", "question"]
    sender.add(TEXT[0])
    sender.flush()  # the turn's end: whatever waits goes
    assert sent[-1] == [TEXT[0]]
