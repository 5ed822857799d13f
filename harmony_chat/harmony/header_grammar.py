"""The words of an assistant message's header, as a character automaton.

Harmony writes a header as ``assistant``, maybe `` to=RECIPIENT``, ``<|channel|>``, one of the
channel names, then maybe a recipient (`` to=RECIPIENT``, if none came before the channel), a
content type (``<|constrain|>TYPE``, optionally after a space, on any channel; or a bare `` TYPE``
word after a recipient) and ``<|message|>``. That covers every header of the format guide and of
gpt-oss's own output (``<|channel|>commentary to=functions.get_weather <|constrain|>json``,
``assistant to=functions.x<|channel|>commentary <|constrain|>json``, ``to=python code``,
``to=f<|constrain|>json`` glued), and nothing the decoder would repair (an unknown channel name,
a recipient that is not a tool name, stray words). :class:`HeaderGrammar` enumerates its states
once; :mod:`~harmony_chat.harmony.header_mask` turns each state into the token ids that may come
next.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from enum import Enum

from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.header import KNOWN_CHANNELS

ROLE = "assistant"
TO = "to="
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
NAME_START = _LETTERS | {"_"}
"""What may start a recipient's name or one of its dotted parts."""
NAME_CHARS = NAME_START | _DIGITS | {"-"}
TYPE_CHARS = NAME_CHARS | set("./+")
"""A content type's characters (the decoder's rule)."""
ALPHABET = "".join(chr(code) for code in range(32, 127))
"""The characters the automaton reads; anything else ends it (``DEAD``)."""


class Phase(Enum):
    """Where in the header the words are."""

    ROLE = "role"
    """Spelling ``assistant`` (``text`` holds what came of it)."""
    ROLE_SPACE = "role-space"
    TO = "to"
    """Spelling ``to=`` (``text``)."""
    RECIPIENT_START = "recipient-start"
    RECIPIENT = "recipient"
    RECIPIENT_DOT = "recipient-dot"
    NAME = "name"
    """Spelling a channel name after ``<|channel|>`` (``text``)."""
    AFTER = "after"
    """Right after a whole channel name."""
    SPACE = "space"
    TYPE = "type"
    """A bare content type after a recipient."""
    CONSTRAIN = "constrain"
    """Right after ``<|constrain|>``."""
    CONSTRAIN_SPACE = "constrain-space"
    CONSTRAINED_TYPE = "constrained-type"


@dataclass(frozen=True, slots=True)
class Spot:
    """One state of the automaton."""

    phase: Phase
    text: str = ""
    channel: bool = False
    """``<|channel|>`` came."""
    recipient: bool = False
    """A recipient was named."""
    typed: bool = False
    """A content type was given."""


START = Spot(Phase.ROLE)
"""Right after ``<|start|>``."""
ROLE_DONE = Spot(Phase.ROLE, ROLE)
"""After ``<|start|>assistant``, where a prompt for a completion ends."""
DEAD = -1
"""The index of no state: the words so far are not a header harmony would write."""


def step(spot: Spot, char: str) -> Spot | None:
    """The state after one more character (None: not a well-formed header)."""
    phase = spot.phase
    if phase is Phase.ROLE:
        if ROLE.startswith(spot.text + char):
            return replace(spot, text=spot.text + char)
        return Spot(Phase.ROLE_SPACE) if spot.text == ROLE and char == " " else None
    if phase in (Phase.ROLE_SPACE, Phase.SPACE) and char == "t" and not spot.recipient:
        return replace(spot, phase=Phase.TO, text="t")
    if phase is Phase.TO:
        text = spot.text + char
        if not TO.startswith(text):
            return None
        return replace(spot, phase=Phase.RECIPIENT_START, text="") if text == TO else replace(spot, text=text)
    if phase in (Phase.RECIPIENT_START, Phase.RECIPIENT_DOT):
        return replace(spot, phase=Phase.RECIPIENT, recipient=True) if char in NAME_START else None
    if phase is Phase.RECIPIENT:
        if char in NAME_CHARS:
            return spot
        if char == ".":
            return replace(spot, phase=Phase.RECIPIENT_DOT)
        return replace(spot, phase=Phase.SPACE) if char == " " and spot.channel else None
    if phase is Phase.NAME:
        text = spot.text + char
        if text in KNOWN_CHANNELS:
            return replace(spot, phase=Phase.AFTER, text="")
        return replace(spot, text=text) if any(name.startswith(text) for name in KNOWN_CHANNELS) else None
    if phase is Phase.AFTER:
        return replace(spot, phase=Phase.SPACE) if char == " " else None
    if phase is Phase.SPACE:
        typed = spot.recipient and not spot.typed and char in TYPE_CHARS
        return replace(spot, phase=Phase.TYPE, typed=True) if typed else None
    if phase in (Phase.TYPE, Phase.CONSTRAINED_TYPE):
        if char in TYPE_CHARS:
            return spot
        return replace(spot, phase=Phase.SPACE) if char == " " else None
    if phase is Phase.CONSTRAIN and char == " ":
        return replace(spot, phase=Phase.CONSTRAIN_SPACE)
    if phase in (Phase.CONSTRAIN, Phase.CONSTRAIN_SPACE) and char in TYPE_CHARS:
        return replace(spot, phase=Phase.CONSTRAINED_TYPE)
    return None


def specials(spot: Spot) -> dict[int, Spot]:
    """The special tokens that may come in this state, each with the state it leads to.

    ``<|message|>`` leads nowhere in the header (it ends it); it maps to the state unchanged.
    """
    phase = spot.phase
    if not spot.channel:
        if (phase is Phase.ROLE and spot.text == ROLE) or phase is Phase.RECIPIENT:
            return {tk.CHANNEL: Spot(Phase.NAME, channel=True, recipient=spot.recipient)}
        return {}
    allowed: dict[int, Spot] = {}
    if phase in (Phase.AFTER, Phase.SPACE, Phase.RECIPIENT, Phase.TYPE, Phase.CONSTRAIN, Phase.CONSTRAINED_TYPE):
        allowed[tk.MESSAGE] = spot
    if phase in (Phase.AFTER, Phase.SPACE, Phase.RECIPIENT) and not spot.typed:
        allowed[tk.CONSTRAIN] = replace(spot, phase=Phase.CONSTRAIN, typed=True)
    return allowed


class HeaderGrammar:
    """Every state of the automaton, numbered, with its moves and the shortest way to close it.

    Attributes:
        spots: the states (index = state number).
        moves: per state, per character code 0-127, the next state's number or :data:`DEAD`.
        special_moves: per state, the special tokens allowed and the state each leads to.
        closing: per state, the fewest tokens (``<|message|>`` included) that close the header,
            counting one token per character (every ASCII character is a token of its own).
    """

    def __init__(self) -> None:
        self.spots: list[Spot] = []
        self._index: dict[Spot, int] = {}
        self.moves: list[list[int]] = []
        self.special_moves: list[dict[int, int]] = []
        queue = deque([self.number(START), self.number(ROLE_DONE)])
        while queue:
            state = queue.popleft()
            spot = self.spots[state]
            row = [DEAD] * 128
            for char in ALPHABET:
                if (after := step(spot, char)) is not None:
                    row[ord(char)] = self._visit(after, queue)
            self.moves.append(row)
            self.special_moves.append({token: self._visit(after, queue) for token, after in specials(spot).items()})
        self.closing = self._closing()

    def number(self, spot: Spot) -> int:
        """The state number of ``spot`` (numbering it if new)."""
        if spot not in self._index:
            self._index[spot] = len(self.spots)
            self.spots.append(spot)
        return self._index[spot]

    def _visit(self, spot: Spot, queue: deque[int]) -> int:
        known = spot in self._index
        state = self.number(spot)
        if not known:
            queue.append(state)
        return state

    def _closing(self) -> list[float]:
        closing = [1.0 if tk.MESSAGE in moves else float("inf") for moves in self.special_moves]
        changed = True
        while changed:
            changed = False
            for state in range(len(self.spots)):
                targets = [target for target in self.moves[state] if target != DEAD]
                targets += [target for token, target in self.special_moves[state].items() if token != tk.MESSAGE]
                best = min((1 + closing[target] for target in targets), default=float("inf"))
                if best < closing[state]:
                    closing[state], changed = best, True
        return closing

    def walk(self, state: int, text: str) -> int:
        """The state after ``text`` (:data:`DEAD` once a character is not allowed)."""
        for char in text:
            code = ord(char)
            if state == DEAD or code >= 128:
                return DEAD
            state = self.moves[state][code]
        return state

    def special(self, state: int, token: int) -> int:
        """The state after a special token (:data:`DEAD` if it may not come here)."""
        return DEAD if state == DEAD else self.special_moves[state].get(token, DEAD)
