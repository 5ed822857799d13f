"""Bracketed pastes whose text holds escape characters stay one paste of text.

The terminal sends a paste between ``ESC [200~`` and ``ESC [201~``. Textual's input parser
(``XTermParser``) takes every ``ESC`` inside a paste for the start of a key sequence: it
reads up to 32 more characters into that sequence and sends them as key presses (an ``ESC`` as
``^``, a carriage return as Enter, which sent the prompt), and the paste loses them. A paste of
logs with colour codes became thousands of key presses, each an edit of the prompt, and froze
the app for minutes.

:class:`PasteFilter` sits in front of Textual's parser: between the paste markers it replaces
each ``ESC`` with its picture (``␛``), so the parser sees the paste as the text it is and sends one
:class:`~textual.events.Paste`. It looks at each character a bounded number of times, whatever
the input, and holds back at most the start of a possible end marker until the next read.
Outside pastes, input passes unchanged (and at once: a lone escape key is never held).
Textual's parser is private; :mod:`~harmony_chat.tui.textual_private` reaches it (where a Textual
release lacks it, the driver keeps its own parser and the filter is skipped, with a logged notice).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.message import Message

from harmony_chat.tui.textual_private import input_parser

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
ESCAPE = "\x1b"
ESCAPE_PICTURE = "\u241b"
"""What an escape character in pasted text becomes (␛)."""


def _partial(text: str, marker: str) -> int:
    """The length of the longest end of ``text`` that begins ``marker`` (without being all of it)."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:size]):
            return size
    return 0


class PasteFilter:
    """Terminal input in, the same input out, with the escape characters inside pastes made text."""

    def __init__(self) -> None:
        self.pasting = False
        """Whether the input is inside a paste."""
        self._held = ""
        """Inside a paste: the end of the last read, which may begin the end marker."""
        self._tail = ""
        """Outside a paste: the end of the input passed on, which may begin the start marker."""

    def feed(self, data: str) -> str:
        """Return what to hand to the parser for ``data`` (possibly less, for now: see :meth:`flush`)."""
        out: list[str] = []
        while data:
            if not self.pasting:
                seen = self._tail + data
                found = seen.find(PASTE_START)
                if found < 0:
                    out.append(data)
                    self._tail = seen[len(seen) - _partial(seen, PASTE_START) :]
                    break
                cut = found + len(PASTE_START) - len(self._tail)  # just past the marker, in ``data``
                out.append(data[:cut])
                data, self._tail, self.pasting = data[cut:], "", True
            else:
                text, self._held = self._held + data, ""
                found = text.find(PASTE_END)
                if found < 0:
                    keep = _partial(text, PASTE_END)
                    out.append(text[: len(text) - keep].replace(ESCAPE, ESCAPE_PICTURE))
                    self._held = text[len(text) - keep :]
                    break
                out += [text[:found].replace(ESCAPE, ESCAPE_PICTURE), PASTE_END]
                data, self.pasting = text[found + len(PASTE_END) :], False
        return "".join(out)

    def flush(self) -> str:
        """What was held back, as pasted text (the input ended inside a paste)."""
        held, self._held = self._held, ""
        return held.replace(ESCAPE, ESCAPE_PICTURE)


class PasteSafeParser:
    """Textual's input parser behind a :class:`PasteFilter` (what the driver's input loop uses: feed, tick)."""

    def __init__(self, debug: bool = False) -> None:
        self.parser = input_parser(debug)
        self.pastes = PasteFilter()

    def feed(self, data: str) -> Iterable[Message]:
        """Parse ``data`` (``""``: the input ended)."""
        filtered = self.pastes.feed(data) if data else self.pastes.flush()
        if filtered:
            yield from self.parser.feed(filtered)
        if not data:
            yield from self.parser.feed("")

    def tick(self) -> Iterable[Message]:
        """What the parser has due by now (a lone escape key once nothing follows it)."""
        return self.parser.tick()
