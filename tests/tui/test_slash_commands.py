"""Slash commands that are wrong or cannot run now: one notice, and the command stays in the prompt, selected."""

from __future__ import annotations

from typing import Any

import pytest

from harmony_chat.tui.slash import SlashError, parse_slash
from tests.tui.harness import make_app, send, settle


def errors(app: Any) -> list[str]:
    return [str(notice.message) for notice in app._notifications if notice.severity in ("error", "warning")]


def test_a_lone_slash_is_a_slash_error() -> None:
    for text in ("/", "  /  ", "/\n"):
        with pytest.raises(SlashError, match="type a command after /"):
            parse_slash(text)


async def test_a_lone_slash_and_enter_is_one_notice() -> None:
    app = make_app()
    async with app.run_test(size=(110, 36), notifications=True) as pilot:
        await settle(pilot)
        await send(pilot, "/")
        assert app.is_running and app.chat.prompt.text == "/"
        assert errors(app) == ["type a command after /; try /help"]


@pytest.mark.parametrize(
    "command",
    [
        "/foo",  # unknown
        "/effort bogus",  # bad argument
        "/theme nope",  # no such theme (found out when it runs)
        "/copy",  # nothing to copy yet
        "/regen",  # nothing to regenerate
        "/edit",  # nothing to edit
    ],
)
async def test_a_failed_command_stays_selected_so_the_next_one_replaces_it(command: str) -> None:
    app = make_app()
    async with app.run_test(size=(110, 36), notifications=True) as pilot:
        await settle(pilot)
        theme = app.theme
        await send(pilot, command)
        prompt = app.chat.prompt
        assert prompt.text == command and prompt.selected_text == command
        assert len(errors(app)) == 1
        await pilot.press(*"/debug")  # typing replaces the failed command, never appends to it
        assert prompt.text == "/debug"
        await pilot.press("enter")
        await settle(pilot)
        assert app.chat.has_class("-debug") and prompt.text == ""
        assert app.theme == theme


async def test_a_command_that_runs_clears_the_prompt() -> None:
    app = make_app()
    async with app.run_test(size=(110, 36), notifications=True) as pilot:
        await settle(pilot)
        await send(pilot, "/effort high")
        assert app.chat.prompt.text == "" and not errors(app)
        assert app.chat.conversation is not None and app.chat.conversation.effort == "high"
