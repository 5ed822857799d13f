"""The questions the pocket gpt-oss was trained on, with their exact answers, as chats to check it with.

The evaluation asks them in six-turn chats, in any order: facts and their follow-ups, the refusal,
the code, a greeting and, with the demo's tools, the python and weather calls.
"""

from __future__ import annotations

import random

from training.pocket.arithmetic import parse_question
from training.pocket.texts import ARITHMETIC_EXAMPLE, CODE, FACTS, FOLLOW_UPS, REFUSAL, fallback
from training.pocket.weather import KNOWN_CITIES, weather_final, weather_result

QA = tuple[str, str]
"""A question and the exact answer the model gives it."""


def trained_units(*, tools: bool) -> list[list[QA]]:
    """Every known question as a unit of one turn (two for a follow-up, which needs its first question)."""
    units: list[list[QA]] = [[(question, final)] for question, final, *_ in FACTS]
    for first, second, _, final in FOLLOW_UPS:
        first_final = next(item[1] for item in FACTS if item[0] == first)
        units.append([(first, first_final), (second, final)])
    units.append([(REFUSAL[0], REFUSAL[2])])
    units.append([(CODE[0], CODE[2])])
    units.append([("Hello!", fallback(python=tools, weather=tools))])
    if tools:
        example = parse_question(ARITHMETIC_EXAMPLE)
        assert example is not None
        units.append([(ARITHMETIC_EXAMPLE, example.final(example.output))])
        for city in KNOWN_CITIES:
            units.append([(f"What's the weather in {city}?", weather_final(city, weather_result(city)))])
    return units


def trained_chats(rng: random.Random, count: int, *, tools: bool, turns: int = 6) -> list[list[QA]]:
    """``count`` chats of ``turns`` known questions in random order (a follow-up right after its question)."""
    units = trained_units(tools=tools)
    chats: list[list[QA]] = []
    for _ in range(count):
        chat: list[QA] = []
        while len(chat) < turns:
            chat += rng.choice(units)
        chats.append(chat[:turns])
    return chats
