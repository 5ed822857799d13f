"""Fixtures of the backend tests: the fake engines on loopback (tests/support/fake_engine.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from openai_harmony import HarmonyEncoding

from tests.support.fake_engine import FakeEngine, load_fixture


@pytest.fixture
def serve(encoding: HarmonyEncoding) -> Iterator[Any]:
    """Start fake engines (``serve(engine, stream, **options)``); each is closed after the test.

    ``encoding`` puts the vocabulary where the fake engine's ``/tokenize`` reads it.
    """
    engines: list[FakeEngine] = []

    def start(engine: str, stream: str | list[str] = "answer", **options: Any) -> FakeEngine:
        fake = FakeEngine(load_fixture(engine), stream, **options)
        engines.append(fake)
        return fake

    yield start
    for fake in engines:
        fake.close()
