"""Snapshot tests of the main screens (pytest-textual-snapshot; Textual is pinned in pyproject)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from harmony_chat.tui.screenshots import show_approval, show_debug, tool_call_factory
from tests.tui.harness import make_app, send, settle

QUESTION = "How do I reverse a linked list in Python?"


async def _answered(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await send(pilot, QUESTION)


@pytest.fixture(autouse=True)
def _home(isolated_home: object) -> None:
    """Reuse the TUI isolation (no real home, caches or config)."""


def test_welcome_beside_the_pocket_model(snap_compare: Any) -> None:
    assert snap_compare(make_app(replay_demo=False), terminal_size=(100, 34), run_before=settle)


def test_chat_dark(snap_compare: Any) -> None:
    assert snap_compare(make_app(), terminal_size=(100, 34), run_before=_answered)


def test_chat_light(snap_compare: Any) -> None:
    from harmony_chat.config import Settings, UiSettings

    assert snap_compare(
        make_app(settings=Settings(ui=UiSettings(theme="harmony-light"))), terminal_size=(100, 34), run_before=_answered
    )


def test_debug_mode(snap_compare: Any) -> None:
    async def debug(pilot: Pilot[Any]) -> None:
        await _answered(pilot)
        await show_debug(pilot)

    assert snap_compare(make_app(), terminal_size=(130, 40), run_before=debug)


def test_help(snap_compare: Any) -> None:
    async def help_screen(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause(0.2)

    assert snap_compare(make_app(), terminal_size=(100, 40), run_before=help_screen)


def test_approval_modal(snap_compare: Any) -> None:
    assert snap_compare(make_app(factory=tool_call_factory()), terminal_size=(110, 36), run_before=show_approval)
