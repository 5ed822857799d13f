"""The token-level harmony grammar: what the structure guard lets come next, checked against the decoder."""

from __future__ import annotations

import random

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.decoder import MAX_HEADER_TOKENS, StreamDecoder
from harmony_chat.harmony.events import Recovery
from harmony_chat.harmony.structure import Place, StructureGuard
from tests.helpers import ids

PROMPT_END = "<|start|>user<|message|>hi<|end|><|start|>assistant"
SPECIALS = sorted({*tk.STRUCTURAL, tk.ENDOFTEXT, 200010})  # 200010: a reserved id
STRUCTURAL_REPAIRS = frozenset(
    {
        "unknown-token",
        "missing-message",
        "partial-header",
        "endoftext",
        "implicit-end",
        "stray-special",
        "duplicate-start",
        "restarted-header",
        "header-overflow",
        "stray-stop",
        "missing-start",
        "headerless",
        "call-without-tool",
        "rebuilt-message",
    }
)
"""The decoder's repairs a misplaced special token causes (the rest are about words in a header)."""


def _guard(encoding: HarmonyEncoding, completion: str = "") -> StructureGuard:
    return StructureGuard(encoding, ids(encoding, PROMPT_END + completion))


def _words(encoding: HarmonyEncoding) -> list[int]:
    text = "assistant analysis commentary final to=functions.get_weather to=python json Paris hello , { } 42"
    return sorted(set(ids(encoding, text)))


def _walk(encoding: HarmonyEncoding, rng: random.Random, guided: bool) -> list[int]:
    """A random completion: each token drawn from what the guard allows (or from anything)."""
    guard = _guard(encoding)
    words = _words(encoding)
    completion: list[int] = []
    while len(completion) < 3000:
        allowed = guard.allowed()
        specials = sorted(allowed.specials) if guided else SPECIALS
        pool = specials + (words if allowed.text or not guided else [])
        token = rng.choice(specials) if specials and rng.random() < 0.3 else rng.choice(pool)
        completion.append(token)
        guard.advance(token)
        if token in tk.GENERATION_STOPS:
            break
    return completion


def _repairs(encoding: HarmonyEncoding, completion: list[int]) -> set[str]:
    decoder = StreamDecoder(encoding, functions=["get_weather"], stop_on_final=False, raw_tokens=False)
    kinds: set[str] = set()
    for token in completion:
        kinds.update(event.kind for event in decoder.feed(token) if isinstance(event, Recovery))
    return kinds


def test_random_completions_the_guard_allows_never_need_a_structural_repair(encoding: HarmonyEncoding) -> None:
    rng = random.Random(5)
    ended = 0
    for _ in range(300):
        completion = _walk(encoding, rng, guided=True)
        ended += completion[-1] in tk.GENERATION_STOPS
        assert not _repairs(encoding, completion) & STRUCTURAL_REPAIRS, encoding.decode(completion)
    assert ended > 280  # the walks reach a stop token: they cover whole completions


def test_the_same_walk_unguided_needs_structural_repairs(encoding: HarmonyEncoding) -> None:
    rng = random.Random(5)
    found = set().union(*(_repairs(encoding, _walk(encoding, rng, guided=False)) for _ in range(300)))
    assert {"stray-special", "restarted-header", "missing-start", "call-without-tool"} <= found


def test_a_header_needs_its_channel_named_before_the_message_token(encoding: HarmonyEncoding) -> None:
    guard = _guard(encoding)
    assert guard.place is Place.HEADER
    assert guard.allowed().specials == {tk.CHANNEL, tk.CONSTRAIN} and guard.allowed().text
    guard.advance(tk.CHANNEL)
    assert guard.allowed().specials == set()  # no second channel, no constrain before the name
    guard.advance(ids(encoding, "final")[0])
    assert guard.allowed().specials == {tk.MESSAGE, tk.CONSTRAIN}


@pytest.mark.parametrize(
    ("completion", "stops"),
    [
        ("<|channel|>analysis<|message|>Think", {tk.END}),
        ("<|channel|>commentary<|message|>Checking", {tk.END}),
        ("<|channel|>final<|message|>Paris", {tk.END, tk.RETURN}),
        ('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"a"', {tk.CALL}),
        ("<|channel|>analysis to=python code<|message|>print(1)", {tk.CALL}),
        ("<|channel|>commentary to=assistant<|message|>x", {tk.END}),
    ],
)
def test_content_ends_with_the_stop_its_header_calls_for(
    encoding: HarmonyEncoding, completion: str, stops: set[int]
) -> None:
    guard = _guard(encoding, completion)
    assert guard.place is Place.CONTENT
    assert guard.allowed().specials == stops and guard.allowed().text


def test_after_an_end_token_only_a_start_token_may_follow(encoding: HarmonyEncoding) -> None:
    guard = _guard(encoding, "<|channel|>analysis<|message|>Think.<|end|>")
    assert guard.place is Place.BETWEEN
    assert guard.allowed().specials == {tk.START} and not guard.allowed().text
    guard.advance(tk.START)
    assert guard.allowed().specials == {tk.CHANNEL, tk.CONSTRAIN} and guard.allowed().text  # a fresh header


def test_a_header_is_closed_before_the_decoder_would_overflow_it(encoding: HarmonyEncoding) -> None:
    first = "<|channel|>analysis<|message|>x<|end|><|start|>"
    word = ids(encoding, " hello")[0]
    guard = _guard(encoding, first)
    header = 0
    while guard.allowed().text:
        guard.advance(word)
        header += 1
    assert header == MAX_HEADER_TOKENS - 2 and guard.allowed().specials == {tk.CHANNEL}
    guard.advance(tk.CHANNEL)
    assert guard.allowed().text and guard.allowed().specials == set()
    guard.advance(word)
    assert not guard.allowed().text and guard.allowed().specials == {tk.MESSAGE}
    start = ids(encoding, first)
    assert "header-overflow" not in _repairs(encoding, [*start, *[word] * header, tk.CHANNEL, word, tk.MESSAGE])
    assert "header-overflow" in _repairs(encoding, [*start, *[word] * (header + 1), tk.CHANNEL, word, tk.MESSAGE])


def test_a_restarted_stream_continues_from_the_completion_in_its_prompt(encoding: HarmonyEncoding) -> None:
    restarted = _guard(encoding, "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>")
    assert restarted.place is Place.CONTENT and restarted.allowed().specials == {tk.END, tk.RETURN}
    bare = StructureGuard(encoding, [])
    assert bare.place is Place.HEADER and tk.CHANNEL in bare.allowed().specials
