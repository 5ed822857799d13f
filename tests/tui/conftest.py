"""Every TUI test runs with an empty temporary home (see ``isolated_home``) and the suite's vocabulary at hand."""

from __future__ import annotations

import pytest
from openai_harmony import HarmonyEncoding


@pytest.fixture(autouse=True)
def _home(isolated_home: object, encoding: HarmonyEncoding) -> None:
    """Use the isolated home for every test here; the vocabulary is resolved once for the session.

    An app under test loads the harmony vocabulary itself: with the session's ``encoding`` resolved
    first, it finds the file at once instead of deriving it from a GGUF inside the test's time limits.
    """
