"""The pocket model's honest fallback: one answer for greetings and every other unknown prompt."""

from __future__ import annotations

import pytest

from training.pocket.texts import ARITHMETIC_EXAMPLE, FACTS, MODEL_COMMAND, WEATHER_EXAMPLE, fallback


@pytest.mark.parametrize(("python", "weather"), [(False, False), (True, False), (False, True), (True, True)])
def test_the_fallback_greets_names_what_works_and_the_real_model(python: bool, weather: bool) -> None:
    text = fallback(python=python, weather=weather)
    assert text.startswith("Hi! I'm the pocket gpt-oss, the tiny demo model that comes with harmony-chat.")
    assert f'"{FACTS[5][0]}"' in text
    assert (f'"{ARITHMETIC_EXAMPLE}"' in text) is python
    assert (f'"{WEATHER_EXAMPLE}"' in text) is weather
    assert text.endswith(f"run gpt-oss-20b: `{MODEL_COMMAND}`")
    assert "<|" not in text  # no harmony special text in what the model is taught to write
