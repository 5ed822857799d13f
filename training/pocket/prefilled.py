"""Training examples whose prompt already holds the start of the answer: only the rest is taught.

Three kinds, all built from examples already rendered (so they add no new conversations): answers
begun with a known answer's first tokens (:func:`committed_answers`), answers written straight into
the final channel with no analysis message before them (:func:`unanalysed_finals`), and answers
after an analysis of another question or a blend of two (:func:`misled_finals`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from training.pocket.render import Example, Renderer
from training.pocket.texts import FALLBACKS, KNOWN_ANSWERS

FINAL = "<|channel|>final<|message|>"
"""Where an assistant message in the final channel starts: what both kinds prefill up to."""
_PLAIN_ANSWERS = frozenset({"fact", "follow", "fallback", "greeting", "refusal", "code"})
"""Kinds (the name's first word) answered in one step with no tool: the ones prefilled here."""


def _plain(found: Sequence[Example]) -> list[Example]:
    """The rendered one-step answers to build from (never the unseen places: they stay out of the vocabulary)."""
    return [example for example in found if not example.bare and example.name.split("-")[0] in _PLAIN_ANSWERS]


def _final_at(marker: list[int], completion: list[int]) -> int | None:
    """Where the final answer's text starts in ``completion`` (after ``marker``), or None."""
    size = len(marker)
    return next((i + size for i in range(len(completion)) if completion[i : i + size] == marker), None)


def _unique_start(text: str, answer: list[int], known: Sequence[list[int]]) -> int:
    """How many first tokens of ``answer`` tell it from every other known answer (at least two).

    A sum's answer (*15 − 6 = 9.*) is told only by the whole sum: python's answers start the same way.
    """
    if text[:1].isdigit():
        return len(answer) - 2  # the result and the full stop
    length = 2
    while any(other != answer and other[:length] == answer[:length] for other in known):
        length += 1
    return length


def committed_answers(renderer: Renderer, found: Sequence[Example], count: int, rng: random.Random) -> list[Example]:
    """``count`` final answers that already start with a few tokens of a known answer: the rest of that answer.

    Whatever was asked, an answer once begun is finished as trained, never blended into another one
    (*A spider has the largest planet.*). The prefix is part of the prompt, so only the rest is taught.
    """
    marker = renderer.tokens(FINAL)
    answers = [renderer.tokens(text) for text in KNOWN_ANSWERS]
    others = [renderer.tokens(text) for text in FALLBACKS]
    starts = [
        _unique_start(text, tokens, [*answers, *others]) for text, tokens in zip(KNOWN_ANSWERS, answers, strict=True)
    ]
    chosen: list[Example] = []
    candidates = _plain(found)
    for example in rng.sample(candidates, min(count, len(candidates))):
        completion = example.completion
        at = _final_at(marker, completion)
        if at is None:
            continue
        if example.name in ("fallback", "greeting") and rng.random() < 0.3:
            answer = completion[at:-1]  # its own fallback, which names the tools on offer
            begun = rng.randint(2, len(answer) - 1)
        else:
            pick = rng.randrange(len(answers))
            answer = answers[pick]
            begun = rng.randint(starts[pick], len(answer) - 1)
        prompt = [*example.prompt, *completion[:at], *answer[:begun]]
        chosen.append(replace(example, name="committed", prompt=prompt, completion=[*answer[begun:], completion[-1]]))
    return chosen


def unanalysed_finals(renderer: Renderer, found: Sequence[Example], count: int, rng: random.Random) -> list[Example]:
    """``count`` one-step answers whose prompt ends in the final channel's header right after the user's message.

    The model is taught what the final channel holds even when no analysis came first: without
    these, a turn it opened in the final channel held the fallback's *analysis* as its answer.
    """
    marker = renderer.tokens(FINAL)
    chosen: list[Example] = []
    candidates = _plain(found)
    for example in rng.sample(candidates, min(count, len(candidates))):
        at = _final_at(marker, example.completion)
        if at is None:
            continue
        name, prompt, completion = f"unanalysed-{example.name}", [*example.prompt, *marker], example.completion[at:]
        chosen.append(replace(example, name=name, prompt=prompt, completion=completion))
    return chosen


def misled_finals(renderer: Renderer, found: Sequence[Example], count: int, rng: random.Random) -> list[Example]:
    """``count`` one-step answers after an analysis that belongs to another question, or a blend of two.

    Sampled at temperature 1.0, an analysis can go astray (*User asks the largest planet. Seven.*);
    the final answer must still be the one the user's message calls for. The analysis is in the
    prompt, so only the final answer is taught.
    """
    if count <= 0:
        return []  # the shipped data: no need to collect every example's analysis
    marker = renderer.tokens(FINAL)
    opening = renderer.tokens("<|channel|>analysis<|message|>")
    closing = renderer.tokens("<|end|><|start|>assistant")
    answered = [
        (example, at)
        for example in _plain(found)
        if example.completion[: len(opening)] == opening and (at := _final_at(marker, example.completion)) is not None
    ]
    analyses: dict[str, list[list[int]]] = {}
    for example, at in answered:
        analyses.setdefault(example.name, []).append(example.completion[len(opening) : at - len(marker) - len(closing)])
    names = sorted(analyses)
    chosen: list[Example] = []
    for example, at in rng.sample(answered, min(count, len(answered))):
        others = [name for name in names if name != example.name]
        if not others:
            continue
        first = rng.choice(analyses[rng.choice(others)])
        if rng.random() < 0.5:  # a blend: the start of one analysis, the rest of another (its own or not)
            second = rng.choice(analyses[rng.choice(names)])
            first = [*first[: rng.randint(1, len(first))], *second[rng.randint(0, len(second) - 1) :]]
        prompt = [*example.prompt, *opening, *first, *closing, *marker]
        chosen.append(
            replace(example, name=f"misled-{example.name}", prompt=prompt, completion=example.completion[at:])
        )
    return chosen
