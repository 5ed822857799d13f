"""A turn's tokens are generated on a thread of their own, and harmony's structure still acts between two tokens."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Generator, Sequence

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.generation.batches import MAX_BATCH
from harmony_chat.generation.producer import batches_in_background
from harmony_chat.generation.turn import TurnStats, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import ContentDelta, StopReason
from harmony_chat.harmony.session import ChatSession
from tests.helpers import StubBackend, ids

WAIT_S = 0.3
"""How long a test waits for something that must not happen (the thread runs ahead in microseconds)."""


class Source:
    """A backend's token stream that records how far it was read and whether it was closed."""

    def __init__(self, tokens: list[int], stopping: threading.Event | None = None, fail_after: int | None = None):
        self.tokens = tokens
        self.stopping = stopping
        self.fail_after = fail_after
        self.read = 0
        self.closed = False
        self.thread: str | None = None
        self.pulled = threading.Event()
        """Set each time a token is read (cleared by the test)."""

    def stream(self) -> Generator[int, None, None]:
        self.thread = threading.current_thread().name
        try:
            for token in self.tokens:
                if self.stopping is not None and self.stopping.is_set():
                    return  # a backend polls should_stop before each token
                if self.fail_after is not None and self.read == self.fail_after:
                    raise RuntimeError("the engine went away")
                self.read += 1
                self.pulled.set()
                yield token
        finally:
            self.closed = True


def _token_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "harmony-chat-tokens"]


def test_every_token_arrives_in_order_in_groups_a_special_token_ends() -> None:
    tokens = [*range(100, 400), tk.END, tk.START, *range(500, 700), tk.RETURN]
    source = Source(tokens)
    batches = list(batches_in_background(source.stream(), threading.Event()))
    assert [token for batch in batches for token in batch] == tokens
    for batch in batches:
        assert all(token < tk.FIRST_SPECIAL for token in batch[:-1])
    assert source.thread == "harmony-chat-tokens" and source.closed
    assert not _token_threads()


def test_no_token_is_generated_after_a_special_one_until_its_events_are_handled() -> None:
    """The grammar a ``<|message|>`` switches on must apply to the very next token."""
    tokens = [*range(100, 120), tk.MESSAGE, *range(200, 260)]
    source = Source(tokens)
    batches = batches_in_background(source.stream(), threading.Event())
    seen: list[int] = []
    for batch in batches:
        seen.extend(batch)
        if batch[-1] == tk.MESSAGE:
            source.pulled.clear()
            assert not source.pulled.wait(WAIT_S)  # the thread waits for us
            assert source.read == len(seen)
    assert seen == tokens


def test_the_thread_runs_at_most_one_group_ahead_of_the_caller() -> None:
    """A stream faster than the printer is not generated far past what was shown (Ctrl-C stops it there)."""
    stopping = threading.Event()
    source = Source(list(range(100, 100_000)), stopping)
    batches = batches_in_background(source.stream(), stopping)
    assert next(batches) == [100]
    source.pulled.wait(WAIT_S)
    threading.Event().wait(WAIT_S)
    assert source.read <= 1 + 2 * MAX_BATCH  # the group handed over, one waiting, one being made
    batches.close()
    assert source.closed and not _token_threads()


def test_closing_stops_the_thread_at_the_next_token_and_closes_the_stream() -> None:
    stopping = threading.Event()
    source = Source(list(range(100, 100_000)), stopping)
    batches = batches_in_background(source.stream(), stopping)
    first = next(batches)
    batches.close()
    assert first == [100]
    assert stopping.is_set() and source.closed and not _token_threads()
    assert source.read < 100_000


def test_closing_at_a_special_token_generates_nothing_more() -> None:
    """The decoder ended the turn on ``<|return|>``: the backend must not sample past it."""
    source = Source([*range(100, 110), tk.RETURN, *range(200, 300)])
    batches = batches_in_background(source.stream(), threading.Event())
    for batch in batches:
        if batch[-1] == tk.RETURN:
            break
    batches.close()
    assert source.read == 11 and source.closed and not _token_threads()


def test_an_error_comes_after_the_tokens_generated_before_it() -> None:
    source = Source(list(range(100, 200)), fail_after=37)
    seen: list[int] = []
    with pytest.raises(RuntimeError, match="the engine went away"):
        for batch in batches_in_background(source.stream(), threading.Event()):
            seen.extend(batch)
    assert seen == list(range(100, 137))
    assert source.closed and not _token_threads()


class Native(StubBackend):
    """A backend that writes one short answer and notes the thread it generates on."""

    def __init__(self, encoding: HarmonyEncoding, native: bool) -> None:
        super().__init__()
        self.native_generation = native
        self.answer = ids(encoding, "<|channel|>final<|message|>Four.<|return|>")
        self.threads: list[str] = []

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        self.threads.append(threading.current_thread().name)
        yield from self.answer


@pytest.mark.parametrize(
    ("native", "background", "thread"), [(True, True, "harmony-chat-tokens"), (False, True, None), (True, False, None)]
)
def test_a_turn_generates_on_its_own_thread_only_where_the_backend_releases_the_gil(
    encoding: HarmonyEncoding, native: bool, background: bool, thread: str | None
) -> None:
    """An engine's stream is parsed in Python: a second thread would only take turns with the first."""
    backend = Native(encoding, native)
    session = ChatSession(encoding)
    session.add_user("What is 2 + 2?")
    events = list(run_turn(session, backend, background=background))
    assert backend.threads == [thread or threading.current_thread().name]
    assert "".join(event.text for event in events if isinstance(event, ContentDelta)) == "Four."
    assert isinstance(events[-1], TurnStats) and events[-1].reason is StopReason.RETURN
    assert not _token_threads()
