"""Wrong but trained, or garbled: the pocket evaluation's split of its misses (answers the model really gave)."""

from __future__ import annotations

import json

import pytest

from training.pocket.garbled import TRAINED_ANSWERS, is_garbled
from training.pocket.texts import WEATHER_FAILED, fallback
from training.pocket.weather import weather_final, weather_result

FALLBACK = fallback(python=True, weather=True)
ALGIERS = weather_result("Algiers")


@pytest.mark.parametrize(
    ("answer", "calls", "results"),
    [
        ("A spider has 8 legs.", [], []),  # a known question's answer to another question
        ("The capital of France is Paris.", [], []),
        (FALLBACK, [], []),
        (weather_final("Algiers", ALGIERS), [("functions.get_weather", '{"location": "Algiers"}')], [ALGIERS]),
        ("1234 × 5678 = 7006652.", [("python", "print(1234 * 5678)")], ["7006652\n"]),
        ("10 ÷ 4 ≈ 2.5.", [("python", "print(round(10 / 4, 4))")], ["2.5\n"]),
        (WEATHER_FAILED, [("functions.get_weather", '{"location": "Oslo"}')], ["error: the server went away"]),
    ],
)
def test_answers_made_of_what_it_was_trained_to_say_are_not_garbled(
    answer: str, calls: list[tuple[str, str]], results: list[str]
) -> None:
    assert not is_garbled(answer, calls, results)


@pytest.mark.parametrize(
    ("answer", "calls", "results"),
    [
        ("The square root of 9 is 9.", [], []),
        ("That is the pocket gpt-20b.", [], []),
        ("15 + 27 = 27.", [], []),  # an arithmetic answer without the call that computes it
        (None, [], []),
        (FALLBACK, [("python", "print(960 - )")], ["SyntaxError: invalid syntax"]),  # code python cannot run
        (
            "It is -4 °C and foggy in python right now.",
            [("functions.get_weather", json.dumps({"location": "Hi! I'm the pocket gpt-20b. Try "}))],
            [json.dumps({"temperature": -4, "condition": "foggy"})],
        ),
        ("1234 × 5678 = 7006653.", [("python", "print(1234 * 5678)")], ["7006652\n"]),  # misquotes the output
        (FALLBACK, [("browser.search", '{"query": "x"}')], ["..."]),  # a tool it never calls
    ],
)
def test_anything_it_was_never_trained_to_write_is_garbled(
    answer: str | None, calls: list[tuple[str, str]], results: list[str]
) -> None:
    assert is_garbled(answer, calls, results)


def test_every_fallback_is_trained_text_whatever_tools_it_names() -> None:
    """A fallback naming other examples than the setup's is a wrong answer, not a garbled one."""
    variants = {fallback(python=python, weather=weather) for python in (False, True) for weather in (False, True)}
    assert len(variants) == 4 and variants <= TRAINED_ANSWERS
    assert not any(is_garbled(text, [], []) for text in variants)
    assert is_garbled(FALLBACK[:-20], [], [])  # cut short
    assert is_garbled("Not one of the questions I was trained on.", [], [])
