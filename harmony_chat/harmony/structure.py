"""Harmony's grammar at the token level: which special tokens may come next in an assistant completion.

An assistant completion is one or more messages, each a header (``assistant``, ``<|channel|>`` and
its name, maybe ``to=…`` and ``<|constrain|>…``) then ``<|message|>``, content and one stop token:
``<|call|>`` when the header addresses a tool, ``<|return|>`` or ``<|end|>`` on ``final``, ``<|end|>``
otherwise; after ``<|end|>`` the next message opens with ``<|start|>``. :class:`StructureGuard`
follows a completion token by token and says what may come next, so a backend that can mask
logits (llama.cpp in process) never samples a special token out of place. That rules out by
construction every repair of the decoder that a misplaced special token causes (a stray token in
content, a header cut by another header, a missing ``<|start|>`` or ``<|message|>``, a header past
:data:`~harmony_chat.harmony.decoder.MAX_HEADER_TOKENS`, a call token on a message to no tool).
The header's words are held to harmony's grammar too (:mod:`~harmony_chat.harmony.header_grammar`):
one of the known channel names, a recipient that is a tool name, a content type, nothing else, so
no header needs the decoder's word repairs either. A header whose words the grammar does not know
(one a prompt already holds) is followed by its special tokens only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
from numpy.typing import NDArray
from openai_harmony import HarmonyEncoding

from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.decoder import MAX_HEADER_TOKENS
from harmony_chat.harmony.header import is_tool_recipient, read_header
from harmony_chat.harmony.header_grammar import DEAD, ROLE_DONE, START
from harmony_chat.harmony.header_mask import header_masks


class Place(Enum):
    """Where in a message the completion is."""

    HEADER = "header"
    CONTENT = "content"
    BETWEEN = "between"
    """After ``<|end|>``: only ``<|start|>`` may follow."""


@dataclass(frozen=True, slots=True, eq=False)
class Allowed:
    """What may come next: these special token ids, and ordinary text or not."""

    specials: frozenset[int]
    text: bool
    words: NDArray[np.intp] | None = None
    """When given, the only ordinary tokens that may come (a header's words)."""
    refused: tuple[NDArray[np.intp], ...] | None = None
    """With ``words``, when most ordinary tokens may come: the ones that may not (cheaper to mask)."""


_ONLY_START = Allowed(frozenset({tk.START}), text=False)
_CALL_STOPS = frozenset({tk.CALL})
_FINAL_STOPS = frozenset({tk.END, tk.RETURN})
_OTHER_STOPS = frozenset({tk.END})


class StructureGuard:
    """Follows one assistant completion and tells which tokens keep it well-formed harmony.

    Args:
        encoding: the harmony encoding (to read a header's recipient).
        context: the prompt's token ids; the guard starts from its last ``<|start|>`` (a prompt
            that ends with ``<|start|>assistant`` starts it in a header; one that already holds
            part of the completion, as after a grammar restart, starts it where that part ends).
        max_header_tokens: the longest header the decoder reads without salvaging it.
        headers: when given, the only headers a message may have (their tokens after ``<|start|>``,
            :func:`call_headers`): a forced tool call. The first of them (an analysis) is allowed
            once, as the completion's first message; then only the others.
    """

    def __init__(
        self,
        encoding: HarmonyEncoding,
        context: Sequence[int],
        *,
        max_header_tokens: int = MAX_HEADER_TOKENS,
        headers: Sequence[Sequence[int]] | None = None,
    ) -> None:
        self._encoding = encoding
        self._max_header = max_header_tokens
        self._headers = [tuple(header) for header in headers] if headers else None
        self._forced: dict[tuple[int, ...], Allowed | None] = {}
        self.place = Place.HEADER
        self._header: list[int] = []
        self._channel_at: int | None = None
        """Where in the header ``<|channel|>`` stands (None: not yet)."""
        self._constrained = False
        self._stops: frozenset[int] = frozenset()
        """The tokens that may end the message being generated."""
        self._masks = header_masks(encoding)
        start = max((index for index, token in enumerate(context) if token == tk.START), default=-1)
        self._words = self._masks.grammar.number(START if start >= 0 else ROLE_DONE)
        """The header automaton's state (``DEAD``: the header's words are not followed)."""
        for token in context[start + 1 :]:
            self.advance(token)

    def advance(self, token: int) -> None:
        """Take one token of the completion (the guard follows whatever came, allowed or not)."""
        if self.place is Place.BETWEEN:
            if token == tk.START:
                self._open_header()
        elif self.place is Place.CONTENT:
            if token == tk.START:
                self._open_header()
            elif token in tk.MESSAGE_STOPS:
                self.place = Place.BETWEEN
        elif token == tk.MESSAGE:
            if self._headers is not None and len(self._headers) > 1 and (*self._header, token) == self._headers[0]:
                self._headers = self._headers[1:]  # the analysis came: the call comes next
                self._forced.clear()
            self._open_content()
        elif token == tk.START:
            self._open_header()
        elif token in tk.MESSAGE_STOPS:
            self.place = Place.BETWEEN
        else:
            if self._words != DEAD:
                grammar = self._masks.grammar
                special = tk.is_special(token)
                self._words = grammar.special(self._words, token) if special else self._masks.walk(self._words, token)
            if token == tk.CHANNEL and self._channel_at is None:
                self._channel_at = len(self._header)
            self._constrained = self._constrained or token == tk.CONSTRAIN
            self._header.append(token)

    @property
    def content_stops(self) -> frozenset[int]:
        """The tokens that may end the message whose content is being generated."""
        return self._stops

    def allowed(self) -> Allowed:
        """The special tokens that may come next, and whether ordinary text may."""
        if self.place is Place.BETWEEN:
            return _ONLY_START
        if self.place is Place.CONTENT:
            return Allowed(self._stops, text=True)
        if self._headers is not None and (forced := self._forced_header()) is not None:
            return forced
        room = self._max_header - len(self._header)
        if self._words != DEAD and (words := self._allowed_words(room)) is not None:
            return words
        named = self._channel_at is not None and len(self._header) > self._channel_at + 1
        needed = 0 if named else 1 if self._channel_at is not None else 2  # channel token and name still to come
        specials: set[int] = set()
        if named:
            specials.add(tk.MESSAGE)
        if self._channel_at is None and room >= 2:
            specials.add(tk.CHANNEL)
        if not self._constrained and (named or self._channel_at is None) and room >= 1 + needed:
            specials.add(tk.CONSTRAIN)  # never between the channel token and its name
        text = room >= 1 + (0 if self._channel_at is not None else needed)
        return Allowed(frozenset(specials), text)

    def _forced_header(self) -> Allowed | None:
        """The next token of the allowed headers this header has followed so far (None: it follows none)."""
        prefix = tuple(self._header)
        if prefix not in self._forced:
            assert self._headers is not None
            nexts = {
                header[len(prefix)]
                for header in self._headers
                if len(header) > len(prefix) and header[: len(prefix)] == prefix
            }
            specials = frozenset(token for token in nexts if tk.is_special(token))
            words = np.array(sorted(token for token in nexts if not tk.is_special(token)), dtype=np.intp)
            words.flags.writeable = False
            self._forced[prefix] = Allowed(specials, text=bool(words.size), words=words) if nexts else None
        return self._forced[prefix]

    def _allowed_words(self, room: int) -> Allowed | None:
        """What the header grammar allows (None where it allows nothing: a prompt's header too long to close)."""
        grammar = self._masks.grammar
        specials = frozenset(
            token
            for token, after in grammar.special_moves[self._words].items()
            if token == tk.MESSAGE or grammar.closing[after] <= room
        )
        words, refused = self._masks.allowed(self._words, room)
        if not specials and not words.size:
            return None
        masked = None if refused is None else (self._masks.never, refused)
        return Allowed(specials, text=bool(words.size), words=words, refused=masked)

    def _open_header(self) -> None:
        self.place = Place.HEADER
        self._words = self._masks.grammar.number(START)
        self._header = []
        self._channel_at = None
        self._constrained = False

    def _open_content(self) -> None:
        self._stops = message_stops(self._encoding, self._header)
        self.place = Place.CONTENT


def call_headers(encoding: HarmonyEncoding, functions: Sequence[str]) -> list[list[int]]:
    """The headers of a forced call: an analysis message, or a JSON call to one of ``functions`` (``functions.x``).

    Each is the tokens after ``<|start|>``, as harmony writes them.
    """
    texts = ["assistant<|channel|>analysis<|message|>"]  # first: allowed once
    texts += [f"assistant<|channel|>commentary to={name} <|constrain|>json<|message|>" for name in functions]
    return [list(encoding.encode(text, allowed_special="all")) for text in texts]


def message_stops(encoding: HarmonyEncoding, header: Sequence[int]) -> frozenset[int]:
    """The tokens that may end a message with this header (its tokens between ``<|start|>`` and ``<|message|>``)."""
    read = read_header(str(encoding.decode(list(header))), closed=True)
    if is_tool_recipient(read.recipient):
        return _CALL_STOPS
    return _FINAL_STOPS if read.channel == "final" else _OTHER_STOPS


def open_message_stops(encoding: HarmonyEncoding, tokens: Sequence[int]) -> frozenset[int] | None:
    """The stops of the message whose content ``tokens`` end inside, or None when they end elsewhere."""
    start = max((index for index, token in enumerate(tokens) if token == tk.START), default=-1)
    header = list(tokens[start + 1 :])
    if tk.MESSAGE not in header:
        return None
    end = header.index(tk.MESSAGE)
    if any(token in tk.MESSAGE_STOPS for token in header[end + 1 :]):
        return None
    return message_stops(encoding, header[:end])
