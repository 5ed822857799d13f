"""The compact vocabulary the pocket model trains on, and its expansion to the full o200k vocabulary.

Training sees only the tokens its data uses (a few thousand of 201,088), so every step updates a
few thousand embedding and output rows instead of all of them. Every other token shares one learned
stand-in embedding (:attr:`CompactVocab.unknown`): the model learns that text it never saw is text it
does not know. In the exported GGUF those tokens get the stand-in's embedding and an output row of
zeros, so each scores exactly 0 in llama.cpp; training accounts for them as one logit of
``log(count)`` (:attr:`CompactVocab.others_logit`), which makes its softmax the full vocabulary's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from harmony_chat.harmony import tokens as tk

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

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


def training_vocab(encoding: HarmonyEncoding, sequences: Iterable[Sequence[int]]) -> CompactVocab:
    """The compact vocabulary of the training data, plus every digit token (any number can be copied)."""
    return CompactVocab([*(token for sequence in sequences for token in sequence), *digit_tokens(encoding)])


class CompactVocab:
    """Dense ids for the tokens training uses, plus one id standing for every other token."""

    def __init__(self, tokens: Iterable[int]) -> None:
        wanted = {*tokens, *tk.NAMES}
        self.ids: list[int] = sorted(wanted)
        self.unknown = len(self.ids)
        """The stand-in id for every token outside :attr:`ids`."""
        self.size = len(self.ids) + 1
        self._index = np.full(tk.VOCAB_SIZE, self.unknown, dtype=np.int64)
        self._index[self.ids] = np.arange(len(self.ids))

    @property
    def others_logit(self) -> float:
        """The log of how many tokens score 0 in the exported model (all but :attr:`ids`)."""
        return math.log(tk.VOCAB_SIZE - len(self.ids))

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
        output[self.ids] = state[OUTPUT][: self.unknown]
        full[OUTPUT] = output
        return full
