"""Stop sequences (Chat Completions ``stop``): the answer's text cut before the first one, also when streamed.

A :class:`StopMatcher` takes the answer's text in pieces as they come and gives back what is
safe to send: everything except a tail that could still grow into a stop sequence (at most the
longest stop sequence less one character). The text sent, in whatever pieces it came, is the
text before the earliest place any stop sequence starts (:meth:`StopMatcher.cut` of the whole);
no stop sequence, and no part of one that turned out to be one, is ever sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

MAX_STOP_SEQUENCES = 4
"""OpenAI's limit on ``stop``."""


class Matched(NamedTuple):
    """What a piece of text gave: the text safe to send now, and whether a stop sequence ended the text."""

    text: str
    stopped: bool


class StopMatcher:
    """Finds stop sequences in text that arrives in pieces.

    Args:
        stops: the stop sequences (each non-empty).

    Raises:
        ValueError: for an empty stop sequence.
    """

    def __init__(self, stops: Iterable[str]) -> None:
        self.stops = tuple(dict.fromkeys(stops))
        if any(not stop for stop in self.stops):
            raise ValueError("a stop sequence cannot be empty")
        self._held = ""
        self.stopped = False
        """Whether a stop sequence was found (the text ended before it; later pieces give nothing)."""

    @property
    def held(self) -> str:
        """The tail held back because it could be the start of a stop sequence."""
        return self._held

    def feed(self, text: str) -> Matched:
        """Take the next piece of text; return what is safe to send and whether a stop sequence was found."""
        if self.stopped:
            return Matched("", True)
        text = self._held + text
        found = self._first(text)
        pending = self._pending(text)
        if found is not None and found <= pending:
            return self._stop(text, found)
        self._held = text[pending:]
        return Matched(text[:pending], False)

    def flush(self) -> Matched:
        """The text is over: return what was held back (cut at a stop sequence in it)."""
        if self.stopped:
            return Matched("", True)
        text, self._held = self._held, ""
        found = self._first(text)
        return Matched(text, False) if found is None else self._stop(text, found)

    def cut(self, text: str) -> Matched:
        """A whole text at once: the text before the first stop sequence, and whether there was one."""
        head = self.feed(text)
        if head.stopped:
            return head
        tail = self.flush()
        return Matched(head.text + tail.text, tail.stopped)

    def _stop(self, text: str, at: int) -> Matched:
        self.stopped = True
        self._held = ""
        return Matched(text[:at], True)

    def _first(self, text: str) -> int | None:
        """Where the earliest stop sequence in ``text`` starts (None: none does)."""
        places = [place for place in (text.find(stop) for stop in self.stops) if place >= 0]
        return min(places, default=None)

    def _pending(self, text: str) -> int:
        """Where the earliest tail of ``text`` starts that a stop sequence begins with (``len(text)``: none)."""
        earliest = len(text)
        for stop in self.stops:
            place = text.find(stop[0], max(0, len(text) - len(stop) + 1))
            while 0 <= place < earliest:
                if stop.startswith(text[place:]):
                    earliest = place
                    break
                place = text.find(stop[0], place + 1)
        return earliest
