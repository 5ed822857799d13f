"""Fixtures the pocket model's test modules share."""

from __future__ import annotations

import pytest
from openai_harmony import HarmonyEncoding

from training.pocket.data import Example, build_examples


@pytest.fixture(scope="session")
def sample(encoding: HarmonyEncoding) -> list[Example]:
    """A small set from the same generators (another seed)."""
    return build_examples(
        encoding,
        conversations=600,
        copies=100,
        bare_copies=40,
        unseen=60,
        greetings=80,
        known=60,
        unknown=60,
        pastes=40,
        quoted=40,
        seed=99,
    )
