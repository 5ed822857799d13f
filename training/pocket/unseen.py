"""Place names the pocket gpt-oss never learns: they teach it to say it does not know a city.

A city the model never saw as a whole reaches it as tokens it has no embedding for (they all share
the unseen-token stand-in, :attr:`~training.pocket.vocab.CompactVocab.unknown`). Asked for the
weather there, it must not call ``get_weather`` for some city it knows: it gives the honest fallback.
The training data teaches that with names built from capitalized tokens that no other example uses;
Training leaves those examples out of the vocabulary, so their names train the stand-in.
Tokens of the held-out cities are never chosen.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from harmony_chat.harmony import tokens as tk
from training.pocket.heldout import held_out_cities

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

UNSEEN = "unseen"
"""The kind (and example name) of weather questions about an unseen place."""
_WORD = re.compile(r" [A-Z][a-z]{3,}")


def _held_out_tokens(encoding: HarmonyEncoding) -> set[int]:
    found: set[int] = set()
    for city in held_out_cities():
        for text in (city.title(), " " + city.title(), city, " " + city):
            found.update(encoding.encode(text, allowed_special=set()))
    return found


def unseen_names(encoding: HarmonyEncoding, used: Iterable[int], count: int, seed: int) -> list[str]:
    """``count`` place-like names (one or two words) whose tokens are capitalized words outside ``used``."""
    avoid = {*used, *_held_out_tokens(encoding)}
    words: list[tuple[int, str]] = []
    for token in range(tk.VOCAB_SIZE):
        if token in avoid:
            continue
        try:
            text = encoding.decode_utf8([token])
        except Exception:  # special and reserved ids have no text
            continue
        if _WORD.fullmatch(text):
            words.append((token, text))
    rng = random.Random(seed)
    names: list[str] = []
    while len(names) < count:
        chosen = rng.sample(words, 1 if rng.random() < 0.6 else 2)
        name = "".join(text for _, text in chosen)
        if encoding.encode(name, allowed_special=set()) == [token for token, _ in chosen]:
            names.append(name.strip())
    return names
