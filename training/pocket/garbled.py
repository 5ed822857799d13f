"""Telling a wrong answer of the pocket model from a garbled one.

A miss can still be made of what the model was trained to say: a known question's answer to the
wrong question (*How many eyes does a spider have?* → *A spider has 8 legs.*), a weather call for a
city of its training data, its fallback as it reads with other tools. A garbled turn holds
something it was never trained to write: an answer that is none of its trained answers (*The square
root of 9 is 9.*), code python cannot run, a weather call for a place that is no city (text copied
from its fallback), or no answer at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from training.pocket.arithmetic import Arithmetic
from training.pocket.texts import FALLBACKS, KNOWN_ANSWERS, PYTHON_FAILED, WEATHER_FAILED
from training.pocket.weather import KNOWN_CITIES, TRAINING_CITIES, weather_final

TRAINED_ANSWERS = frozenset(
    {
        *KNOWN_ANSWERS,
        PYTHON_FAILED,
        WEATHER_FAILED,
        *FALLBACKS,
    }
)
"""Answers that need no tool result: known questions, the refusal, the code, a failed tool, the fallbacks."""
CITIES = frozenset({*KNOWN_CITIES, *TRAINING_CITIES})
_CODE = re.compile(r"print\((?:round\()?(\d+) ([-+*/]) (\d+)(?:, 4\))?\)\Z")


def _computation(code: str) -> Arithmetic | None:
    """The computation of python code the model was trained to write (``print(a op b)``), else None."""
    found = _CODE.match(code.strip())
    if found is None:
        return None
    computed = Arithmetic("", int(found.group(1)), found.group(2), int(found.group(3)))
    return computed if computed.code == code.strip() else None


def _city(arguments: str) -> str | None:
    """The city of ``get_weather`` arguments, if they name one of its training data."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return None
    location = parsed.get("location") if isinstance(parsed, dict) else None
    return location if location in CITIES else None


def is_garbled(answer: str | None, calls: Sequence[tuple[str, str]], results: Sequence[str]) -> bool:
    """Whether a turn holds anything the model was not trained to write (see the module docstring)."""
    if answer is None:
        return True
    expected = set(TRAINED_ANSWERS)
    for number, (name, arguments) in enumerate(calls):
        result = results[number] if number < len(results) else None
        if name == "python":
            computed = _computation(arguments)
            if computed is None:
                return True
            if result is not None:
                expected.add(computed.final(result))
        elif name.endswith("get_weather"):
            city = _city(arguments)
            if city is None:
                return True
            if result is not None:
                try:
                    expected.add(weather_final(city, result))
                except (ValueError, KeyError, TypeError):
                    pass  # not the demo tool's answer: only the failure answer fits
        else:
            return True
    return answer not in expected
