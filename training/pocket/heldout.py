"""The held-out prompts that measure the pocket gpt-oss: written by hand, never trained on.

``heldout.json`` holds eight lists: ``out_of_scope`` (anything the model does not know, in many
languages, lengths and shapes; expected: the honest fallback), ``greetings`` (expected: a greeting
and the fallback), ``arithmetic`` (one operation on two whole numbers; expected: a python call and
an answer quoting its output), ``weather_cities`` and ``weather_questions`` (cities the training data
never names), ``out_of_scope_confirmation`` (out-of-scope prompts written after the shipped build
was chosen by its rates on the others; later builds were screened on them too) and
``out_of_scope_fresh`` (150 more, written before those later builds were trained; the builds of
2026-11-27, the shipped one among them, were screened on it) and ``out_of_scope_blind`` (150 more,
written after the shipped build was chosen and before it or any other build was measured on them).
None is a prompt of the training data (adding each list left the data as it was): the training
data generators never read them except to leave them out (:func:`is_held_out`).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

_FILE = Path(__file__).with_name("heldout.json")
KINDS = (
    "out_of_scope",
    "greetings",
    "arithmetic",
    "weather_cities",
    "weather_questions",
    "out_of_scope_confirmation",
    "out_of_scope_fresh",
    "out_of_scope_blind",
)


@cache
def held_out_prompts() -> dict[str, tuple[str, ...]]:
    """The held-out lists by name."""
    data = json.loads(_FILE.read_text(encoding="utf-8"))
    return {kind: tuple(data[kind]) for kind in KINDS}


def normalized(text: str) -> str:
    """``text`` lower-cased with punctuation and repeated spaces gone (how training and held-out prompts compare)."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


@cache
def _held_out_keys() -> frozenset[str]:
    prompts = held_out_prompts()
    return frozenset(normalized(text) for kind in KINDS if kind != "weather_cities" for text in prompts[kind])


def is_held_out(text: str) -> bool:
    """Whether a training prompt would repeat a held-out one (ignoring case and punctuation)."""
    return normalized(text) in _held_out_keys()


def held_out_cities() -> frozenset[str]:
    """The held-out cities, lower-cased."""
    return frozenset(city.lower() for city in held_out_prompts()["weather_cities"])
