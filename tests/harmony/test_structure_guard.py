"""The token-level harmony grammar: what the structure guard lets come next, checked against the decoder."""

from __future__ import annotations

import random

import numpy as np
import pytest
from numpy.typing import NDArray
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.llama_sampler import StructureMask
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.decoder import MAX_HEADER_TOKENS, StreamDecoder
from harmony_chat.harmony.events import Recovery
from harmony_chat.harmony.header_grammar import ALPHABET
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
CONTENT_REPAIRS = frozenset({"malformed-arguments", "repaired-arguments", "truncated-tool-call"})
"""Repairs of a tool call's JSON arguments: content, which the guard leaves free."""


def _guard(encoding: HarmonyEncoding, completion: str = "") -> StructureGuard:
    return StructureGuard(encoding, ids(encoding, PROMPT_END + completion))


def _words(encoding: HarmonyEncoding) -> list[int]:
    text = "assistant analysis commentary final to=functions.get_weather to=python json Paris hello , { } 42"
    return sorted(set(ids(encoding, text)))


def _walk(encoding: HarmonyEncoding, rng: random.Random, guided: bool) -> list[int]:
    """A random completion: each token drawn from what the guard allows (or from anything).

    In a header the guided walk draws from the header's allowed words (a few of the pool's, or
    any of them), so it writes channel names, recipients and content types of every shape.
    """
    guard = _guard(encoding)
    words = _words(encoding)
    completion: list[int] = []
    while len(completion) < 3000:
        allowed = guard.allowed()
        specials = sorted(allowed.specials) if guided else SPECIALS
        pool = words if allowed.text or not guided else []
        if guided and allowed.words is not None:
            header_words = allowed.words
            known = [word for word in words if word in _as_set(header_words)]
            drawn = [int(rng.choice(header_words))] if header_words.size else []
            pool = known if known and rng.random() < 0.7 else drawn
        token = rng.choice(specials) if specials and (not pool or rng.random() < 0.3) else rng.choice(pool)
        completion.append(token)
        guard.advance(token)
        if token in tk.GENERATION_STOPS:
            break
    return completion


_SETS: dict[int, tuple[object, frozenset[int]]] = {}


def _as_set(words: NDArray[np.intp]) -> frozenset[int]:
    """The guard's cached words array as a set (cached by identity, holding the array)."""
    if id(words) not in _SETS:
        _SETS[id(words)] = (words, frozenset(words.tolist()))
    return _SETS[id(words)][1]


def _repairs(encoding: HarmonyEncoding, completion: list[int]) -> set[str]:
    decoder = StreamDecoder(encoding, functions=["get_weather"], stop_on_final=False, raw_tokens=False)
    kinds: set[str] = set()
    for token in completion:
        kinds.update(event.kind for event in decoder.feed(token) if isinstance(event, Recovery))
    return kinds


def test_random_completions_the_guard_allows_never_need_a_repair(encoding: HarmonyEncoding) -> None:
    rng = random.Random(5)
    ended = 0
    headers: set[str] = set()
    for _ in range(300):
        completion = _walk(encoding, rng, guided=True)
        ended += completion[-1] in tk.GENERATION_STOPS
        assert not _repairs(encoding, completion) - CONTENT_REPAIRS, encoding.decode(completion)
        headers.update(_headers(encoding.decode(completion)))
    assert ended > 280  # the walks reach a stop token: they cover whole completions
    assert any(" to=" in header for header in headers) and any("<|constrain|>" in header for header in headers)
    assert {"analysis", "commentary", "final"} <= {_channel(header) for header in headers}


def _headers(text: str) -> list[str]:
    return [part.split("<|message|>")[0] for part in text.split("<|start|>") if "<|message|>" in part]


def _channel(header: str) -> str:
    return header.split("<|channel|>")[1].split(" ")[0].split("<|")[0]


def test_the_same_walk_unguided_needs_structural_repairs(encoding: HarmonyEncoding) -> None:
    rng = random.Random(5)
    found = set().union(*(_repairs(encoding, _walk(encoding, rng, guided=False)) for _ in range(300)))
    assert {"stray-special", "restarted-header", "missing-start", "call-without-tool"} <= found


def test_a_header_needs_its_channel_named_before_the_message_token(encoding: HarmonyEncoding) -> None:
    guard = _guard(encoding)
    assert guard.place is Place.HEADER
    assert guard.allowed().specials == {tk.CHANNEL} and guard.allowed().text
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
    assert guard.allowed().specials == set() and _allows(guard, encoding, "assistant")  # a fresh header: its role


def _allows(guard: StructureGuard, encoding: HarmonyEncoding, text: str) -> bool:
    """Whether the guard lets ``text``'s tokens come one after another (following them as it goes)."""
    for token in ids(encoding, text):
        allowed = guard.allowed()
        words = allowed.words
        if token not in allowed.specials and not (allowed.text and (words is None or token in words)):
            return False
        guard.advance(token)
    return True


def test_a_header_is_closed_before_the_decoder_would_overflow_it(encoding: HarmonyEncoding) -> None:
    first = "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.a"
    piece = ids(encoding, "_b")
    assert len(piece) == 1
    guard = _guard(encoding, first)
    grown = 0
    while _allows(guard, encoding, "_b"):
        grown += 1
    assert guard.allowed().specials == {tk.MESSAGE} and not guard.allowed().text
    start = ids(encoding, first)
    header = len(ids(encoding, "assistant<|channel|>commentary to=functions.a"))
    assert header + grown == MAX_HEADER_TOKENS
    assert "header-overflow" not in _repairs(encoding, [*start, *piece * grown, tk.MESSAGE])
    assert "header-overflow" in _repairs(encoding, [*start, *piece * (grown + 1), tk.MESSAGE])


def test_a_long_header_still_leaves_room_for_a_channel_name(encoding: HarmonyEncoding) -> None:
    """A recipient before the channel may only grow while the channel token and a name still fit."""
    first = "<|channel|>analysis<|message|>x<|end|><|start|>assistant to=functions.a"
    guard = _guard(encoding, first)
    while _allows(guard, encoding, "_b"):
        pass
    rng = random.Random(3)
    closing: list[int] = []
    while tk.MESSAGE not in guard.allowed().specials:
        allowed = guard.allowed()
        options = sorted(allowed.specials) + (allowed.words.tolist() if allowed.words is not None else [])
        closing.append(rng.choice(options))
        guard.advance(closing[-1])
    header = encoding.decode(closing)
    assert header.startswith("<|channel|>") and _channel(header) in {"analysis", "commentary", "final"}
    whole = [*ids(encoding, first), *ids(encoding, "_b") * 0, *closing, tk.MESSAGE]
    assert not _repairs(encoding, whole)


def test_a_restarted_stream_continues_from_the_completion_in_its_prompt(encoding: HarmonyEncoding) -> None:
    restarted = _guard(encoding, "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>")
    assert restarted.place is Place.CONTENT and restarted.allowed().specials == {tk.END, tk.RETURN}
    bare = StructureGuard(encoding, [])
    assert bare.place is Place.HEADER and tk.CHANNEL in bare.allowed().specials


@pytest.mark.parametrize(
    "header",
    [
        "<|channel|>analysis",
        "<|channel|>commentary",
        "<|channel|>final",
        "<|channel|>commentary to=functions.get_weather <|constrain|>json",
        "<|channel|>commentary to=functions.generate_file<|constrain|>json",
        "<|channel|>commentary to=functions.get_weather json",
        "<|channel|>commentary to=browser.search code",
        "<|channel|>analysis to=python code",
        "<|channel|>commentary to=assistant",
        "<|channel|>commentary<|constrain|>json",
        "<|channel|>final <|constrain|> json",
        " to=functions.lookup_weather<|channel|>commentary <|constrain|>json",
        " to=lookup_weather<|channel|>analysis code",
        " to=functions.get-weather_2<|channel|>commentary json",
    ],
)
def test_every_header_gpt_oss_writes_is_allowed(encoding: HarmonyEncoding, header: str) -> None:
    """The format guide's headers, the golden vectors' and the variants gpt-oss emits, token by token."""
    guard = _guard(encoding)
    assert _allows(guard, encoding, header + "<|message|>")
    assert guard.place is Place.CONTENT


@pytest.mark.parametrize(
    "header",
    [
        "<|channel|>analysis, the pocket gpt-oss-oss-20b-GGUF",  # the pocket model's blind German paste
        "<|channel|>thinking",
        "<|channel|>analysis json",
        "<|channel|>final answer",
        "<|channel|>commentary to=functions.get_weather to=python",
        "<|channel|>commentary to=functions.get_weather json code",
        "<|channel|>commentary to=<|constrain|>json",
        "<|channel|>commentary to=functions. x",
        "<|channel|>commentary <|constrain|>json <|constrain|>json",
        " hello<|channel|>final",
        " to=functions.x to=python<|channel|>commentary",
    ],
)
def test_header_words_the_decoder_would_repair_or_drop_are_not_allowed(encoding: HarmonyEncoding, header: str) -> None:
    assert not _allows(_guard(encoding), encoding, header + "<|message|>")


def test_what_follows_a_channel_name(encoding: HarmonyEncoding) -> None:
    guard = _guard(encoding, "<|channel|>analysis")
    allowed = guard.allowed()
    assert allowed.specials == {tk.MESSAGE, tk.CONSTRAIN} and allowed.words is not None
    assert {encoding.decode([int(token)]) for token in allowed.words} == {" ", " t", " to"}


def test_a_header_the_grammar_does_not_know_is_followed_by_its_special_tokens_only(encoding: HarmonyEncoding) -> None:
    """A prompt may already hold an odd header (a restart); the guard then keeps the old, looser rule."""
    guard = _guard(encoding, "<|channel|>analysis, odd")
    allowed = guard.allowed()
    assert allowed.words is None and allowed.text and allowed.specials == {tk.MESSAGE, tk.CONSTRAIN}


def test_the_mask_keeps_only_a_headers_allowed_tokens(encoding: HarmonyEncoding) -> None:
    prompt = ids(encoding, PROMPT_END + "<|channel|>analysis")
    mask = StructureMask(StructureGuard(encoding, prompt), len(prompt))
    scores = np.zeros(tk.VOCAB_SIZE, dtype=np.single)
    mask(np.array(prompt), scores)
    kept = {encoding.decode([int(token)]) for token in np.flatnonzero(np.isfinite(scores))}
    assert kept == {" ", " t", " to", "<|message|>", "<|constrain|>"}
    scores = np.zeros(tk.VOCAB_SIZE, dtype=np.single)
    mask(np.array([*prompt, tk.MESSAGE]), scores)  # content: every ordinary token, and the stop token
    assert np.isfinite(scores[: tk.FIRST_SPECIAL]).all()
    assert np.flatnonzero(np.isfinite(scores[tk.FIRST_SPECIAL :])).tolist() == [tk.END - tk.FIRST_SPECIAL]


def test_every_character_a_header_may_hold_is_a_token_of_its_own(encoding: HarmonyEncoding) -> None:
    """The room the guard keeps to close a header counts one token per character: never more."""
    assert all(len(ids(encoding, char)) == 1 for char in ALPHABET)


def test_a_prompts_header_too_long_to_close_in_grammar_falls_back_to_the_special_token_rule(
    encoding: HarmonyEncoding,
) -> None:
    """A restart whose prompt already holds a 62-token header: no channel name fits, the old rule decides."""
    guard = _guard(encoding, " to=functions.a" + "_b" * 57)
    allowed = guard.allowed()
    assert allowed.words is None and allowed.specials == {tk.CHANNEL} and not allowed.text


def test_the_mask_keeps_exactly_the_allowed_tokens_where_most_words_may_come(encoding: HarmonyEncoding) -> None:
    """In a recipient most ASCII tokens may come: the mask then works on the refused ones, to the same effect."""
    prompt = ids(encoding, PROMPT_END + "<|channel|>commentary to=functions.get")
    guard = StructureGuard(encoding, prompt)
    allowed = guard.allowed()
    assert allowed.refused is not None and allowed.words is not None and allowed.words.size > 100_000
    scores = np.zeros(tk.VOCAB_SIZE, dtype=np.single)
    StructureMask(guard, len(prompt))(np.array(prompt), scores)
    assert set(np.flatnonzero(np.isfinite(scores)).tolist()) == {*allowed.words.tolist(), *allowed.specials}
