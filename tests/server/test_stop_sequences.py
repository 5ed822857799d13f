"""The stop-sequence matcher: text streamed in any pieces is cut exactly as the whole text is."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harmony_chat.server.stop_sequences import Matched, StopMatcher


def reference_cut(text: str, stops: list[str]) -> tuple[str, bool]:
    """The text before the earliest place any stop sequence starts (written apart from the matcher)."""
    places = [text.find(stop) for stop in stops if stop in text]
    return (text[: min(places)], True) if places else (text, False)


def stream(text: str, cuts: list[int], stops: list[str]) -> tuple[list[str], bool, StopMatcher]:
    """Feed ``text`` split at ``cuts`` to a matcher; return what it let out, piece by piece, and whether it stopped."""
    matcher = StopMatcher(stops)
    bounds = [0, *sorted(cut % (len(text) + 1) for cut in cuts), len(text)]
    sent: list[str] = []
    longest = max(len(stop) for stop in stops)
    fed = 0
    for start, end in zip(bounds, bounds[1:], strict=False):
        matched = matcher.feed(text[start:end])
        fed = end
        sent.append(matched.text)
        if matched.stopped:
            return sent, True, matcher
        assert fed - len("".join(sent)) == len(matcher.held) <= longest - 1  # never more held than could be a stop
    tail = matcher.flush()
    sent.append(tail.text)
    return sent, tail.stopped, matcher


ALPHABET = "ab\nO:"  # few letters, so stop sequences occur, overlap and nest often
texts = st.text(alphabet=ALPHABET, max_size=40)
stop_lists = st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=5), min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(text=texts, stops=stop_lists, cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=12))
@example(text="xabc", stops=["abc", "b"], cuts=[2])  # "b" completes first, but "abc" starts earlier
@example(text="Observation: x", stops=["Observation:"], cuts=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
@example(text="aab", stops=["ab"], cuts=[1])  # a held "a" that turns out not to start it
def test_streamed_in_any_pieces_is_the_whole_text_cut(text: str, stops: list[str], cuts: list[int]) -> None:
    sent, stopped, matcher = stream(text, cuts, stops)
    whole, whole_stopped = reference_cut(text, stops)
    assert "".join(sent) == whole and stopped == whole_stopped
    assert StopMatcher(stops).cut(text) == Matched(whole, whole_stopped)
    assert not any(stop in "".join(sent) for stop in stops)  # no stop sequence, whole or split across pieces
    if stopped:
        assert matcher.stopped and matcher.feed("more") == Matched("", True) and matcher.flush() == Matched("", True)


def test_only_a_possible_start_is_held_back() -> None:
    matcher = StopMatcher(["Observation:", "Calling tools:"])
    assert matcher.feed("The answer is 4. Obs") == Matched("The answer is 4. ", False)
    assert matcher.held == "Obs"
    assert matcher.feed("cure") == Matched("Obscure", False)  # it was not one after all: sent whole
    assert matcher.feed(" fact.\nCalling") == Matched(" fact.\n", False)
    assert matcher.feed(" tools: x") == Matched("", True)
    assert matcher.stopped


def test_text_without_any_start_of_a_stop_is_sent_at_once() -> None:
    matcher = StopMatcher(["END"])
    assert matcher.feed("hello world") == Matched("hello world", False)
    assert matcher.held == ""
    assert matcher.flush() == Matched("", False)


def test_a_stop_found_within_one_piece_cuts_it() -> None:
    assert StopMatcher(["\n\n", "###"]).feed("one\n\ntwo###") == Matched("one", True)
    assert StopMatcher(["x"]).cut("x at the start") == Matched("", True)


def test_what_was_held_goes_out_when_the_text_ends() -> None:
    matcher = StopMatcher(["<end>"])
    assert matcher.feed("almost <en") == Matched("almost ", False)
    assert matcher.flush() == Matched("<en", False)


def test_an_empty_stop_sequence_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        StopMatcher(["ok", ""])
