"""Every TUI test runs with an empty temporary home (see ``isolated_home``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _home(isolated_home: object) -> None:
    """Use the isolated home for every test here."""
