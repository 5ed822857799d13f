"""The compact vocabulary the pocket model trains on, and its expansion to the full o200k vocabulary.

Training sees only the tokens its data uses (a few thousand of 201,088), so every step updates a
few thousand embedding and output rows instead of all of them. Every other token shares one learned
stand-in embedding (:attr:`CompactVocab.unknown`): the model learns that text it never saw is text it
does not know. In the exported GGUF those tokens get the stand-in's embedding and an output row of
zeros, so each scores exactly 0 in llama.cpp; training accounts for them as one logit of
``log(count)`` (:attr:`CompactVocab.others_logit`), which makes its softmax the full vocabulary's.

Most compact tokens only ever appear in prompts (the out-of-scope text of many languages); the model
never writes them. With ``written_only`` only the *written* tokens (:attr:`CompactVocab.outputs`:
what the completions write, every digit and the harmony tokens) get a learned output row; the others
keep a row of zeros and count among the others' logit: the same softmax, a fifth of the rows to score.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from harmony_chat.harmony import tokens as tk
from training.pocket.unseen import UNSEEN

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

    from training.pocket.render import Example

Array = np.ndarray
EMBEDDING = "model.embed_tokens.weight"
OUTPUT = "lm_head.weight"


def digit_tokens(encoding: HarmonyEncoding) -> list[int]:
    """Every token of one to three digits (``0`` to ``999``, ``00`` and ``007`` too): any number's pieces."""
    found: list[int] = []
    for width in (1, 2, 3):
        for value in range(10**width):
            found += encoding.encode(f"{value:0{width}d}", allowed_special=set())
    return found


def training_vocab(encoding: HarmonyEncoding, examples: Iterable[Example], written_only: bool = False) -> CompactVocab:
    """The compact vocabulary of ``examples``, plus every digit token (any number can be copied).

    The prompts of the unseen places' examples stay outside (their names train the stand-in). With
    ``written_only`` the outputs are what the completions write, plus the digits; else every token.
    """
    tokens: set[int] = set()
    outputs: set[int] = set()
    for example in examples:
        outputs.update(example.completion)
        if example.name != UNSEEN:
            tokens.update(example.prompt)
    tokens |= outputs
    digits = digit_tokens(encoding)
    return CompactVocab([*tokens, *digits], outputs=[*outputs, *digits] if written_only else None)


class CompactVocab:
    """Dense ids for the tokens training uses, plus one id standing for every other token.

    ``outputs`` (token ids, all of them among ``tokens``) are the ones the model may write; None: all.
    Either way the stand-in is never written.
    """

    def __init__(self, tokens: Iterable[int], outputs: Iterable[int] | None = None) -> None:
        wanted = {*tokens, *tk.NAMES}
        self.ids: list[int] = sorted(wanted)
        self.unknown = len(self.ids)
        """The stand-in id for every token outside :attr:`ids`."""
        self.size = len(self.ids) + 1
        self._index = np.full(tk.VOCAB_SIZE, self.unknown, dtype=np.int64)
        self._index[self.ids] = np.arange(len(self.ids))
        written = wanted if outputs is None else {*outputs, *tk.NAMES}
        if not written <= wanted:
            raise ValueError(f"output tokens outside the vocabulary: {sorted(written - wanted)[:5]}")
        self.written_only = outputs is not None
        """Whether only :attr:`outputs` train output rows (else every compact token but the stand-in)."""
        self.outputs: Array = self._index[sorted(written)]
        """The compact ids of the tokens the model may write: the rows of the output matrix that train."""
        self.output_of: Array = np.full(self.size, -1, dtype=np.int64)
        """Compact id to its place in :attr:`outputs` (-1 for a token the model never writes)."""
        self.output_of[self.outputs] = np.arange(len(self.outputs))

    @property
    def others_logit(self) -> float:
        """The log of how many tokens score 0 in the exported model (all but :attr:`outputs`)."""
        return math.log(tk.VOCAB_SIZE - len(self.outputs))

    def compact(self, ids: Sequence[int]) -> Array:
        """Token ids to compact ids (unknown tokens to :attr:`unknown`)."""
        return self._index[np.asarray(ids, dtype=np.int64)]

    def expand(self, state: Mapping[str, Array]) -> dict[str, Array]:
        """A trained compact state dict with full-vocabulary embedding and output matrices."""
        full = dict(state)
        embedding = state[EMBEDDING]
        expanded = np.repeat(embedding[self.unknown][None], tk.VOCAB_SIZE, axis=0)
        expanded[self.ids] = embedding[: self.unknown]
        full[EMBEDDING] = expanded
        output = np.zeros((tk.VOCAB_SIZE, state[OUTPUT].shape[1]), dtype=np.float32)
        written = np.asarray(self.ids)[self.outputs]
        output[written] = state[OUTPUT][self.outputs]
        full[OUTPUT] = output
        return full
