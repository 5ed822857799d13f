"""One llama.cpp grammar sampler driven by hand: is a token allowed next, accept it, narrow a candidate buffer.

Asking llama.cpp's grammar about one candidate costs microseconds; about the whole vocabulary,
tens of milliseconds (about a microsecond a candidate). :class:`GrammarCheck` asks about the
picked token only, and when the grammar refuses it, about the likeliest candidates first
(:data:`RESAMPLE_TIERS`), all of them only when it allows none of those, and then remembers the
answer for a schema's opening (the tokens every answer under it starts with).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harmony_chat.errors import ModelError

CANDIDATE = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
"""llama.cpp's ``llama_token_data``, as numpy sees it."""
RESAMPLE_TIERS = (128, 4096, 32768)
"""How many of the likeliest candidates the grammar is asked about, in turn, when it refused the token picked
(llama.cpp finds up to 128 of them by a partial sort, several times faster than the bucket sort it uses
for more)."""
OPENING_TOKENS = 32
"""While a grammar has accepted at most this many tokens, a full pass over the vocabulary is kept
(the grammar's state is a function of the tokens accepted; a schema's opening ``{"key": `` is the
same in every answer, and asking llama.cpp about every candidate costs tens of milliseconds)."""
OPENINGS_KEPT = 256


class GrammarCheck:
    """One llama.cpp grammar sampler, driven by hand: which tokens it allows next, and accepting one.

    The grammar is never part of a sampler chain, so a token it refuses is never accepted into it
    (llama.cpp aborts the process on that).
    """

    def __init__(self, llama_cpp: Any, sampler: Any, grammar: str) -> None:
        self._api = llama_cpp
        self.sampler = sampler
        self.grammar = grammar
        """The GBNF text (rule ``root``)."""
        self._one = (llama_cpp.llama_token_data * 1)()
        self._single = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self._one, llama_cpp.llama_token_data_p), size=1, selected=-1, sorted=False
        )
        self._single_ref = ctypes.byref(self._single)
        self._tops: dict[int, Any] = {}
        """llama.cpp's top-k sampler for each of :data:`RESAMPLE_TIERS`."""
        self._accepted: list[int] = []
        """The tokens accepted since the grammar's start (while they are few)."""
        self._opening: dict[tuple[int, ...], NDArray[np.intp]] = {}
        """What the grammar allows after an opening it was asked about in full (a schema's fixed keys)."""
        self._saved: NDArray[np.void] | None = None

    @classmethod
    def build(cls, llama_cpp: Any, vocab: Any, grammar: str) -> GrammarCheck:
        """Parse a GBNF grammar (rule ``root``) for ``vocab``.

        Raises:
            ModelError: when llama.cpp cannot parse it.
        """
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
        if not sampler:
            raise ModelError("llama.cpp could not parse the JSON schema's grammar")
        return cls(llama_cpp, sampler, grammar)

    def reset(self) -> None:
        """Back to the grammar's start (a new generation)."""
        self._api.llama_sampler_reset(self.sampler)
        self._accepted.clear()

    def allows(self, token: int) -> bool:
        """Whether ``token`` may come next."""
        entry = self._one[0]
        entry.id = token
        entry.logit = 0.0
        self._single.size = 1
        self._api.llama_sampler_apply(self.sampler, self._single_ref)
        return bool(entry.logit == 0.0)

    def accept(self, token: int) -> None:
        """Advance the grammar past ``token`` (one it :meth:`allows`)."""
        self._api.llama_sampler_accept(self.sampler, token)
        if len(self._accepted) <= OPENING_TOKENS:
            self._accepted.append(token)

    def narrow(self, cur_p: Any, candidates: NDArray[np.void]) -> None:
        """Refuse, in a full candidate buffer, what the grammar does not allow next.

        The grammar is asked about the likeliest candidates first, :data:`RESAMPLE_TIERS` at a
        time (it costs about a microsecond a candidate); the buffer keeps the first tier that
        holds an allowed token, or, when none does, every candidate, each asked about.
        """
        api = self._api
        array = cur_p.contents
        size = int(array.size)
        if self._saved is None or len(self._saved) != size:
            self._saved = np.empty(size, dtype=CANDIDATE)
        address = ctypes.cast(array.data, ctypes.c_void_p).value or 0
        ctypes.memmove(self._saved.ctypes.data, address, size * CANDIDATE.itemsize)
        for tier in RESAMPLE_TIERS:
            if tier != RESAMPLE_TIERS[0]:  # a wider tier: its likeliest from the whole buffer again
                self._restore(array, address, size)
            top = self._tops.get(tier)
            if top is None:
                top = self._tops[tier] = api.llama_sampler_init_top_k(tier)
            api.llama_sampler_apply(top, cur_p)  # the likeliest first, sorted; the buffer shrinks to them
            api.llama_sampler_apply(self.sampler, cur_p)
            if np.isfinite(candidates["logit"][: array.size]).any():
                array.sorted = False  # the grammar's -inf break the order
                return
        self._restore(array, address, size)
        opening = tuple(self._accepted) if len(self._accepted) <= OPENING_TOKENS else None
        allowed = self._opening.get(opening) if opening is not None else None
        if allowed is None:
            api.llama_sampler_apply(self.sampler, cur_p)
            if opening is not None and len(self._opening) < OPENINGS_KEPT:
                self._opening[opening] = np.flatnonzero(np.isfinite(candidates["logit"]))
            return
        logits = candidates["logit"]
        kept = logits[allowed]
        logits[:] = -np.inf
        logits[allowed] = kept

    def _restore(self, array: Any, address: int, size: int) -> None:
        """Put the full candidate buffer back as it was handed over (token-id order)."""
        assert self._saved is not None
        ctypes.memmove(address, self._saved.ctypes.data, size * CANDIDATE.itemsize)
        array.size = size
        array.sorted = False
        array.selected = -1

    def close(self) -> None:
        """Free the llama.cpp samplers."""
        if self.sampler:
            self._api.llama_sampler_free(self.sampler)
            self.sampler = None
        for top in self._tops.values():
            self._api.llama_sampler_free(top)
        self._tops.clear()
