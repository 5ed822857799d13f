"""The turn decodes generated tokens in groups: never holding a token back long, never past a special token."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harmony_chat.generation.batches import BATCH_S, MAX_BATCH, token_batches
from harmony_chat.harmony import tokens as tk


class Clock:
    """A clock the test moves by hand (each token arrives ``step`` seconds after the one before)."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        return self.now


def _arriving(tokens: list[int], clock: Clock) -> Iterator[int]:
    for token in tokens:
        clock.now += clock.step
        yield token


def test_a_fast_stream_is_grouped_and_a_special_token_closes_its_group_at_once() -> None:
    clock = Clock(0.001)
    tokens = [*range(100, 140), tk.END, tk.START, *range(200, 210)]
    batches = list(token_batches(_arriving(tokens, clock), clock))
    assert [token for batch in batches for token in batch] == tokens  # nothing lost, nothing reordered
    assert max(len(batch) for batch in batches) > 8  # fast tokens go out together
    for batch in batches:
        assert all(token < tk.FIRST_SPECIAL for token in batch[:-1])  # a special token always ends its group
    assert [tk.END] in [batch[-1:] for batch in batches] and [tk.START] in batches


def test_the_token_after_a_special_one_goes_out_alone() -> None:
    """A message's first text (after ``<|message|>``) is never held back for the tokens after it."""
    clock = Clock(0.001)
    tokens = [*range(100, 140), tk.MESSAGE, *range(200, 240)]
    batches = list(token_batches(_arriving(tokens, clock), clock))
    after = next(index for index, batch in enumerate(batches) if batch[-1] == tk.MESSAGE)
    assert batches[after + 1] == [200]
    assert max(len(batch) for batch in batches[after + 2 :]) > 8  # the rest is grouped again


def test_a_group_never_holds_tokens_longer_than_the_batch_time() -> None:
    clock = Clock(0.001)
    for batch in token_batches(_arriving(list(range(500)), clock), clock):
        assert (len(batch) - 1) * clock.step <= BATCH_S + 1e-9 and len(batch) <= MAX_BATCH


def test_a_slow_stream_goes_out_token_by_token() -> None:
    clock = Clock(BATCH_S)
    assert all(len(batch) == 1 for batch in token_batches(_arriving(list(range(20)), clock), clock))


def test_the_first_token_goes_out_alone() -> None:
    clock = Clock(0.0001)
    first = next(token_batches(_arriving(list(range(50)), clock), clock))
    assert first == [0]


def test_tokens_generated_before_a_failure_come_out_before_the_error() -> None:
    clock = Clock(0.0001)

    def failing() -> Iterator[int]:
        yield from _arriving([1, 2, 3], clock)
        raise RuntimeError("the backend broke")

    batches = token_batches(failing(), clock)
    received = [token for batch in [next(batches), next(batches)] for token in batch]
    assert received == [1, 2, 3]
    with pytest.raises(RuntimeError, match="broke"):
        next(batches)
