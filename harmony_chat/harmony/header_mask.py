"""Which ordinary tokens may come next in a header: the header automaton over a whole vocabulary.

Each state of :class:`~harmony_chat.harmony.header_grammar.HeaderGrammar` is walked once, with
every candidate token of the vocabulary at the same time (numpy), and the token ids that keep the
header well formed *and* leave room to close it are kept for the rest of the process. Candidates
are the ordinary tokens whose text is printable ASCII of at most :data:`LONGEST` characters (no
header word of gpt-oss is a longer single token; 125,498 of o200k's 199,998 qualify).
"""

from __future__ import annotations

import threading

import numpy as np
from numpy.typing import NDArray
from openai_harmony import HarmonyEncoding

from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.header_grammar import DEAD, HeaderGrammar

LONGEST = 32
"""Longer tokens (runs of spaces or dashes) are never allowed in a header."""
_PAD = 128
"""The code that pads shorter tokens: it leaves a state as it is."""


class HeaderMasks:
    """The header automaton's allowed token ids per state, for one encoding's vocabulary."""

    def __init__(self, encoding: HarmonyEncoding, grammar: HeaderGrammar | None = None) -> None:
        self.grammar = grammar or HeaderGrammar()
        self._texts: dict[int, str] = {}
        candidates: list[tuple[int, str]] = []
        for token in range(tk.FIRST_SPECIAL):
            text = str(encoding.decode([token]))
            if 0 < len(text) <= LONGEST and all(32 <= ord(char) < 127 for char in text):
                candidates.append((token, text))
                self._texts[token] = text
        candidates.sort(key=lambda pair: -len(pair[1]))
        self.ids: NDArray[np.intp] = np.array([token for token, _ in candidates], dtype=np.intp)
        self._codes = np.full((LONGEST, len(candidates)), _PAD, dtype=np.intp)
        for column, (_, text) in enumerate(candidates):
            self._codes[: len(text), column] = [ord(char) for char in text]
        lengths = np.array([len(text) for _, text in candidates])
        self._active = [int(np.count_nonzero(lengths > position)) for position in range(LONGEST)]
        states = len(self.grammar.spots)
        table = np.zeros((states + 1, 129), dtype=np.intp)  # row 0: no state; row s + 1: state s
        table[1:, :128] = np.array(self.grammar.moves, dtype=np.intp) + 1
        table[:, _PAD] = np.arange(states + 1)
        self._table = table
        self._closing = np.array([float("inf"), *self.grammar.closing])
        never = np.ones(tk.FIRST_SPECIAL, dtype=bool)
        never[self.ids] = False
        self.never: NDArray[np.intp] = np.flatnonzero(never)
        """The ordinary tokens that are never a header's words."""
        self.never.flags.writeable = False
        self._ends: dict[int, NDArray[np.intp]] = {}
        self._allowed: dict[tuple[int, int], tuple[NDArray[np.intp], NDArray[np.intp] | None]] = {}
        self._most = int(max(cost for cost in self.grammar.closing if cost != float("inf")))

    def text(self, token: int) -> str | None:
        """A candidate token's text (None: the token can never be part of a header)."""
        return self._texts.get(token)

    def walk(self, state: int, token: int) -> int:
        """The state after an ordinary token."""
        text = self.text(token)
        return DEAD if text is None else self.grammar.walk(state, text)

    def allowed(self, state: int, room: int) -> tuple[NDArray[np.intp], NDArray[np.intp] | None]:
        """The token ids that may come in ``state`` with ``room`` header tokens left (before ``<|message|>``).

        Returns those ids, and, when most candidates may come, the candidates that may not (masking
        them and :attr:`never` is then cheaper than keeping the allowed ones); else None.
        """
        key = (state, min(room, self._most + 1))
        found = self._allowed.get(key)
        if found is None:
            ends = self._end_rows(state)
            fits = (ends != 0) & (self._closing[ends] <= room)
            words = np.sort(self.ids[fits])
            refused = np.sort(self.ids[~fits]) if 2 * len(words) > len(self.ids) else None
            for array in (words, refused):
                if array is not None:
                    array.flags.writeable = False
            found = self._allowed[key] = (words, refused)
        return found

    def _end_rows(self, state: int) -> NDArray[np.intp]:
        ends = self._ends.get(state)
        if ends is None:
            ends = np.full(len(self.ids), state + 1, dtype=np.intp)
            for position, active in enumerate(self._active):
                ends[:active] = self._table[ends[:active], self._codes[position, :active]]
            self._ends[state] = ends
        return ends


_lock = threading.Lock()
_masks: dict[str, HeaderMasks] = {}


def header_masks(encoding: HarmonyEncoding) -> HeaderMasks:
    """The masks for ``encoding``'s vocabulary, built once per process (about a third of a second)."""
    with _lock:
        masks = _masks.get(encoding.name)
        if masks is None:
            masks = _masks[encoding.name] = HeaderMasks(encoding)
        return masks
