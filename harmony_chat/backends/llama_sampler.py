"""Harmony's grammar and a JSON schema's grammar inside llama.cpp's own sampler, at a fixed cost per token.

A Python logits processor costs llama-cpp-python a record array over the whole 201,088-entry
candidate buffer each token, handed over and copied back, and every Python step inside the
sampler runs with caches the model's decode has just emptied. So most tokens get no Python at
all: in content (the long stretches where harmony allows any text) the only rule is which
special tokens may come, which a native logit-bias sampler at the head of a llama.cpp sampler
chain applies (:class:`GuardedSampler` keeps one such chain per set of allowed stops). Only a
header's tokens, where the words are held to harmony's grammar too, go through
:class:`HarmonyStage`, a Python first stage working on a numpy view of the chain's own
candidate buffer (its address never changes): it cuts the buffer down to the tokens the grammar
allows, so the rest of the chain samples from those few. The backend tells the
:class:`~harmony_chat.harmony.structure.StructureGuard` each token as it yields it, so nothing
walks token ids inside the sampler.

A JSON schema's grammar (llama.cpp's grammar sampler) is never applied to the whole vocabulary
on the way to every token: that costs tens of milliseconds a token. The token the chain picks is
checked against the grammar and kept when it fits (one candidate, a few microseconds); only when
it does not is the token sampled again, with the grammar asked about the likeliest candidates, or
about all of them when it allows none of those (:mod:`~harmony_chat.backends.grammar_check`). That is exactly the
chain's distribution over the tokens the grammar allows (up to the least likely tail when the
likeliest hold an allowed token). While a grammar is on, every special token but the message's
own stop is refused (llama.cpp's grammar would take ``<|end|>`` as text inside a JSON string); the
stop is an end-of-generation token, which the grammar lets through only once the JSON is complete.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harmony_chat.backends.grammar_check import CANDIDATE, GrammarCheck
from harmony_chat.errors import ModelError
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.structure import Place, StructureGuard

LogitsProcessor = Callable[[Any, Any], Any]
"""``(input_ids, scores) -> scores``, as llama-cpp-python calls it."""
ChainFactory = Callable[[list[LogitsProcessor] | None], Any]
"""Builds llama-cpp-python's sampler chain for this generation's settings, with these processors first."""

_clock = time.thread_time
"""Sampler costs are this thread's CPU time (other processes' load does not stretch it)."""
JSON_STOPS = frozenset({tk.RETURN, tk.CALL})
"""The stops that may end grammar-constrained JSON: ``<|return|>`` (a final answer), ``<|call|>`` (arguments)."""


@dataclass(slots=True)
class SamplerCosts:
    """Seconds the sampler's own parts took over a generation (kept only when a benchmark asks)."""

    tokens: int = 0
    follow_s: float = 0.0
    """Following each token with the structure guard."""
    native_s: float = 0.0
    native_tokens: int = 0
    """Tokens sampled by a native chain (a logit bias for harmony's special-token rule)."""
    python_s: float = 0.0
    python_tokens: int = 0
    """Tokens sampled through the Python first stage (a header's, a test's processor)."""
    stage_s: float = 0.0
    """Inside the Python stage, masking (header words and special tokens)."""
    check_s: float = 0.0
    """Asking the JSON grammar about each picked token and accepting it."""
    resample_s: float = 0.0
    resampled: int = 0
    """Tokens the JSON grammar refused, sampled again under it."""

    @property
    def handover_s(self) -> float:
        """What sampling through Python cost beyond the masking itself, against a native chain's token."""
        native = self.native_s / self.native_tokens if self.native_tokens else 0.0
        return max(0.0, self.python_s - self.stage_s - native * self.python_tokens)


class StructureMask:
    """Masks the tokens harmony's grammar does not allow next, special or header words (a :class:`StructureGuard`).

    :meth:`apply` masks a logits row indexed by token id for the guard's current place; :meth:`__call__`
    is the same as a llama-cpp-python logits processor, following the ids it is handed first.
    """

    def __init__(self, guard: StructureGuard, prompt_length: int) -> None:
        self.guard = guard
        self.seen = prompt_length
        self._kept: dict[tuple[frozenset[int], int | None], tuple[NDArray[np.intp], object]] = {}
        """Kept ids per allowed set; each entry holds the words array its key's id names."""

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Follow the tokens generated since the last call, then mask what may not come next."""
        for token in input_ids[self.seen :]:
            self.guard.advance(int(token))
        self.seen = len(input_ids)
        self.apply(scores)
        return scores

    def apply(self, scores: Any) -> None:
        """Set the logit of every token the guard does not allow next to -inf, in place."""
        allowed = self.guard.allowed()
        if allowed.refused is not None:  # most words may come: mask the others
            for refused in allowed.refused:
                scores[refused] = -np.inf
        if allowed.text and (allowed.words is None or allowed.refused is not None):
            kept = self._kept_ids(allowed.specials, None)  # only special tokens are still to refuse
            values = scores[kept]
            scores[tk.FIRST_SPECIAL :] = -np.inf
        else:
            kept = self._kept_ids(allowed.specials, allowed.words if allowed.text else None)
            values = scores[kept]
            scores[:] = -np.inf
        scores[kept] = values

    def kept_ids(self) -> NDArray[np.intp] | None:
        """The only ids that may come next, ascending; None where any ordinary token may (only specials are refused)."""
        allowed = self.guard.allowed()
        if allowed.text and allowed.words is None:
            return None
        return self._kept_ids(allowed.specials, allowed.words if allowed.text else None)

    def _kept_ids(self, specials: frozenset[int], words: NDArray[np.intp] | None) -> NDArray[np.intp]:
        """The ids that keep their logits, ascending: a header's allowed words, then the allowed specials."""
        key = (specials, None if words is None else id(words))
        found = self._kept.get(key)
        if found is None:
            ids = np.array(sorted(specials), dtype=np.intp)
            found = self._kept[key] = (ids if words is None else np.concatenate([words, ids]), words)
        return found[0]


def cut_candidates(rows: NDArray[np.uint32], kept: NDArray[np.intp]) -> int:
    """Move the candidates ``kept`` names to the buffer's front, in their order; return how many there are.

    ``rows`` is a full candidate buffer in token-id order, each record a row of 32-bit words (numpy
    copies those fast, structured records slowly).
    """
    rows[: len(kept)] = np.take(rows, kept, axis=0)
    return len(kept)


class HarmonyStage:
    """What one generation samples under: harmony's grammar, a JSON grammar, a test's logits processor.

    As a sampler stage (:meth:`apply`) it is the Python first stage of a chain, for the tokens a
    native logit bias cannot rule (a header's, a test's processor, a token the grammar refused).

    Args:
        mask: harmony's grammar (None: special tokens are not held to it).
        grammar: the JSON grammar of this generation, if any.
        eog: the JSON stops the loaded model treats as end of generation.
        extra: a Python logits processor to run first (tests that force tokens), and the ids it is handed.
    """

    def __init__(
        self,
        mask: StructureMask | None,
        grammar: GrammarCheck | None,
        eog: frozenset[int],
        extra: tuple[LogitsProcessor, Callable[[], Any]] | None = None,
    ) -> None:
        self.mask = mask
        self.grammar = grammar
        self.eog = eog
        self.extra = extra
        self.narrowing = False
        """Set while a token the grammar refused is sampled again."""
        self.costs: SamplerCosts | None = None
        """Where the sampler's parts add up their time (benchmarks only)."""
        self._view: tuple[int, int, NDArray[np.void], NDArray[np.uint32]] | None = None
        self._json_stops: dict[frozenset[int], frozenset[int]] = {}
        self._json_kept: dict[frozenset[int], NDArray[np.intp]] = {}

    def follow(self, token: int) -> None:
        """Take one sampled token (the guard's place moves on)."""
        if self.mask is not None:
            if self.costs is None:
                self.mask.guard.advance(token)
                return
            started = _clock()
            self.mask.guard.advance(token)
            self.costs.follow_s += _clock() - started

    def content_stops(self) -> frozenset[int] | None:
        """The special tokens that may come next when only special tokens are ruled (content); else None."""
        if self.extra is not None:
            return None
        if self.mask is None:
            stops = JSON_STOPS
        else:
            guard = self.mask.guard
            if guard.place is not Place.CONTENT:
                return None
            stops = guard.content_stops
        if self.grammar is None:
            return stops
        found = self._json_stops.get(stops)
        if found is None:
            found = self._json_stops[stops] = stops & self.eog
        return found

    def candidates(self, cur_p: Any) -> NDArray[np.void]:
        """The chain's candidate buffer as a numpy record array (the view is kept while the buffer stays)."""
        array = cur_p.contents
        address = ctypes.cast(array.data, ctypes.c_void_p).value or 0
        size = int(array.size)
        view = self._view
        if view is None or view[0] != address or view[1] != size:
            buffer = (ctypes.c_char * (size * CANDIDATE.itemsize)).from_address(address)
            records = np.frombuffer(memoryview(buffer), dtype=CANDIDATE)
            if size != tk.VOCAB_SIZE or records["id"][-1] != size - 1:
                raise ModelError(f"llama.cpp handed the sampler {size} candidates, not the {tk.VOCAB_SIZE} expected")
            view = self._view = (address, size, records, records.view(np.uint32).reshape(size, -1))
        return view[2]

    def apply(self, cur_p: Any) -> None:
        """Mask the candidates (llama.cpp calls this, with the full buffer in token-id order).

        Where harmony's grammar names the only tokens that may come (a header's words, a special
        token), the buffer is cut down to those, in the same order: the rest of the chain then works
        on them alone, and picks what it would have picked with the others at -inf.
        """
        started = _clock() if self.costs is not None else 0.0
        candidates = self.candidates(cur_p)
        assert self._view is not None
        cur_p.contents.size = self.rule(candidates, self._view[3])
        if self.narrowing and self.grammar is not None:
            self.grammar.narrow(cur_p, candidates)
        elif self.costs is not None:
            self.costs.stage_s += _clock() - started

    def rule(self, candidates: NDArray[np.void], rows: NDArray[np.uint32]) -> int:
        """Rule a full candidate buffer (records, and the same as rows of words); return how many stay in front.

        The extra processor runs first, then either the buffer is cut down to the tokens harmony's
        grammar names, or the refused ones are masked in place (all stay).
        """
        logits = candidates["logit"]
        kept = None if self.narrowing else self._kept_ids()
        if kept is None:
            self.process(None, logits)
            return len(candidates)
        self._run_extra(logits)
        return cut_candidates(rows, kept)

    def _kept_ids(self) -> NDArray[np.intp] | None:
        """The only ids harmony's grammar lets come next, where it names them (None: mask instead)."""
        if self.mask is None or (self.grammar is not None and self.mask.guard.place is Place.CONTENT):
            return None
        kept = self.mask.kept_ids()
        return kept if kept is not None and kept.size else None

    def process(self, input_ids: Any, logits: Any) -> Any:
        """The stage as a plain logits processor (``input_ids`` unused): the extra processor, then the masks."""
        self._run_extra(logits)
        self.mask_logits(logits)
        return logits

    def _run_extra(self, logits: Any) -> None:
        """The extra logits processor (a test's, logprobs, a logit bias), on the full row by token id."""
        if self.extra is not None:
            processor, ids = self.extra
            result = processor(ids(), logits)
            if result is not logits:
                logits[:] = result

    def mask_logits(self, logits: Any) -> None:
        """Refuse what may not come next in a logits row indexed by token id."""
        if self.mask is not None and (self.grammar is None or self.mask.guard.place is not Place.CONTENT):
            self.mask.apply(logits)  # a grammar runs on content only
            return
        if self.grammar is None:
            return
        stops = self.mask.guard.content_stops if self.mask is not None else JSON_STOPS
        kept = self._json_kept.get(stops)
        if kept is None:
            kept = self._json_kept[stops] = np.array(sorted(stops & self.eog), dtype=np.intp)
        values = logits[kept]
        logits[tk.FIRST_SPECIAL :] = -np.inf
        logits[kept] = values


_bias_lock = threading.Lock()
_biases: dict[frozenset[int], Any] = {}


def _refused_specials(llama_cpp: Any, kept: frozenset[int]) -> Any:
    """A ``llama_logit_bias`` array that refuses every special token but ``kept`` (built once per set)."""
    with _bias_lock:
        found = _biases.get(kept)
        if found is None:
            refused = [token for token in range(tk.FIRST_SPECIAL, tk.VOCAB_SIZE) if token not in kept]
            found = (llama_cpp.llama_logit_bias * len(refused))()
            for entry, token in zip(found, refused, strict=True):
                entry.token = token
                entry.bias = -np.inf
            _biases[kept] = found
        return found


@dataclass(slots=True)
class _ChainState:
    """What one of a generation's chains has seen of the tokens the others sampled."""

    dist: Any
    """The chain's random sampler (its last, ``dist``), or None (a greedy chain)."""
    draws: int = 0
    """The random draws it has made, its own and the ones it caught up on."""
    accepted: int = 0
    """The tokens it has been told of (its penalties count them)."""


class GuardedSampler:
    """The samplers of one generation: a native chain per set of allowed stops, a Python-led one for the rest.

    Stands in for llama-cpp-python's ``LlamaSampler`` in ``Llama.generate`` (which only calls ``sample``).
    Each chain keeps its own random sampler and its own penalties' window; before a chain samples,
    it catches up on what the others did since it last ran (see :meth:`_in_step`), so the
    generation samples as one chain would.

    Args:
        llama_cpp: the ``llama_cpp`` module.
        build: builds a llama-cpp-python chain for the generation's settings, these processors first.
        stage: what the generation samples under.
        python_chain: the chain ``build`` made with the Python stage at its head.
        penalty_window: the tokens the penalties look back on (0: no penalties are set).
    """

    def __init__(
        self, llama_cpp: Any, build: ChainFactory, stage: HarmonyStage, python_chain: Any, penalty_window: int = 0
    ) -> None:
        self._api = llama_cpp
        self._build = build
        self.stage = stage
        self._python = python_chain
        self._native: dict[frozenset[int], Any] = {}
        self._one = (llama_cpp.llama_token_data * 1)()
        self._single = ctypes.byref(
            llama_cpp.llama_token_data_array(
                data=ctypes.cast(self._one, llama_cpp.llama_token_data_p), size=1, selected=-1, sorted=False
            )
        )
        self._draws = 0
        """Random draws made so far, by whichever chain."""
        self._sampled = 0
        """Tokens sampled so far."""
        self._recent: deque[int] | None = deque(maxlen=penalty_window) if penalty_window > 0 else None
        """The latest tokens, as many as the penalties look back on (None: no penalties, nothing to tell)."""
        self._chains: dict[int, _ChainState] = {}
        """Per chain (by ``id``; every chain lives as long as this sampler)."""
        self._keep(python_chain)

    @classmethod
    def create(
        cls, llama_cpp: Any, build: ChainFactory, stage: HarmonyStage, penalty_window: int = 0
    ) -> GuardedSampler | None:
        """The sampler, or None when this llama-cpp-python's chain is not laid out as expected.

        The caller then falls back to a plain logits processor and llama.cpp's own grammar sampler.
        """
        chain = build([_placeholder])
        customs = getattr(chain, "custom_samplers", None)
        if not customs or customs[0][0] != 0 or not hasattr(customs[0][1], "apply_func"):
            return None
        customs[0][1].apply_func = stage.apply
        return cls(llama_cpp, build, stage, chain, penalty_window)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """Sample the next token; under a grammar, one it allows, which then moves the grammar on."""
        stage = self.stage
        if stage.costs is not None:
            return self._measured(ctx, idx, stage.costs)
        stops = stage.content_stops()
        chain = self._python if stops is None else self._native.get(stops) or self._native_chain(stops)
        token = self._in_step(chain, ctx, idx)
        grammar = stage.grammar
        if grammar is not None:
            if not grammar.allows(token):
                token = self._resample(ctx, idx, grammar)
            grammar.accept(token)
        return token

    def _in_step(self, chain: Any, ctx: Any, idx: int) -> int:
        """Sample with ``chain``, once it has caught up with what the other chains did.

        With a seed, each token then takes the same draw of the same random sequence whichever
        chain samples it, as one chain would: the same seed picks the same tokens as llama-cpp-
        python's single chain with a Python processor did (a grammar's redraws aside); and the
        penalties count the tokens every chain sampled. A chain catches up when it is next used
        (a message's header after its content), not on every token.
        """
        state = self._chains[id(chain)]
        if state.draws != self._draws or state.accepted != self._sampled:
            self._catch_up(chain, state)
        token = int(chain.sample(ctx, idx))  # the chain accepts the token itself
        self._draws += 1
        self._sampled += 1
        state.draws, state.accepted = self._draws, self._sampled
        if self._recent is not None:
            self._recent.append(token)
        return token

    def _catch_up(self, chain: Any, state: _ChainState) -> None:
        """Make the chain's random sampler take the draws it missed, and tell its penalties the tokens they missed."""
        api = self._api
        if state.dist is not None:
            for _ in range(self._draws - state.draws):
                api.llama_sampler_apply(state.dist, self._single)  # a one-candidate buffer: one draw each
        missed = self._sampled - state.accepted
        if self._recent is not None and missed > 0:
            for token in list(self._recent)[-missed:]:
                api.llama_sampler_accept(chain.sampler, token)
        state.draws, state.accepted = self._draws, self._sampled

    def _keep(self, chain: Any) -> None:
        """Note a new chain, with its random sampler if it has one; it catches up when first used."""
        api = self._api
        last = api.llama_sampler_chain_get(chain.sampler, api.llama_sampler_chain_n(chain.sampler) - 1)
        dist = last if last and api.llama_sampler_name(last) == b"dist" else None
        self._chains[id(chain)] = _ChainState(dist)

    def _resample(self, ctx: Any, idx: int, grammar: GrammarCheck) -> int:
        """Sample again, under the grammar (the token picked does not fit it)."""
        self._sampled -= 1  # the refused token is not part of the answer (the chain that picked it hears of the next)
        for state in self._chains.values():
            state.accepted = min(state.accepted, self._sampled)
        if self._recent is not None:
            self._recent.pop()
        self.stage.narrowing = True
        try:
            token = self._in_step(self._python, ctx, idx)
        finally:
            self.stage.narrowing = False
        if not grammar.allows(token):
            raise ModelError("the JSON schema's grammar allows no token here")
        return token

    def _measured(self, ctx: Any, idx: int, costs: SamplerCosts) -> int:
        """:meth:`sample`, adding up where the time goes."""
        stage = self.stage
        started = _clock()
        stops = stage.content_stops()
        chain = self._python if stops is None else self._native.get(stops) or self._native_chain(stops)
        token = self._in_step(chain, ctx, idx)
        sampled = _clock()
        if stops is None:
            costs.python_s += sampled - started
            costs.python_tokens += 1
        else:
            costs.native_s += sampled - started
            costs.native_tokens += 1
        costs.tokens += 1
        grammar = stage.grammar
        if grammar is None:
            return token
        if not grammar.allows(token):
            refused = _clock()
            token = self._resample(ctx, idx, grammar)
            costs.resample_s += _clock() - refused
            costs.resampled += 1
            sampled += _clock() - refused
        grammar.accept(token)
        costs.check_s += _clock() - sampled
        return token

    def _native_chain(self, stops: frozenset[int]) -> Any:
        """The generation's chain with a logit bias refusing every special token but ``stops`` at its head."""
        api = self._api
        chain = self._build(None)
        pointer = chain.sampler
        rest = [api.llama_sampler_chain_remove(pointer, 0) for _ in range(api.llama_sampler_chain_n(pointer))]
        refused = _refused_specials(api, stops)
        api.llama_sampler_chain_add(pointer, api.llama_sampler_init_logit_bias(tk.VOCAB_SIZE, len(refused), refused))
        for sampler in rest:
            api.llama_sampler_chain_add(pointer, sampler)
        self._native[stops] = chain
        self._keep(chain)
        return chain


def _placeholder(input_ids: Any, scores: Any) -> Any:
    """Holds the chain's first place for :meth:`HarmonyStage.apply`."""
    return scores
