"""The prompt under keys that arrive together, the newline keys, and where the cursor goes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from textual import events
from textual._xterm_parser import XTermParser
from textual.pilot import Pilot

from harmony_chat.tui.widgets.turn import UserMessage
from tests.tui.harness import make_app, send, settle

QUESTION = "What is the capital of France?"
README = Path(__file__).resolve().parents[2] / "README.md"


async def burst(pilot: Pilot[Any], typed: str) -> None:
    """Deliver ``typed`` the way the terminal driver does after one read: every event posted at once."""
    for event in XTermParser().feed(typed):
        pilot.app.post_message(event)
    await settle(pilot)


async def test_a_message_and_enter_in_one_read_are_sent_whole() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await burst(pilot, QUESTION + "\r")
        assert [str(message.render()) for message in app.chat.query(UserMessage)] == [QUESTION]
        assert app.chat.prompt.text == ""


async def test_keys_typed_after_enter_in_the_same_read_stay_in_the_prompt() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await burst(pilot, QUESTION + "\rand then")
        assert [str(message.render()) for message in app.chat.query(UserMessage)] == [QUESTION]
        assert app.chat.prompt.text == "and then"


async def test_slash_commands_and_newlines_in_one_read() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await burst(pilot, "/effort high\r")
        assert app.chat.status.effort == "high" and app.chat.prompt.text == ""
        await burst(pilot, "one\ntwo")  # ctrl+j in the middle of the read
        assert app.chat.prompt.text == "one\ntwo"
        await burst(pilot, "\r")
        await burst(pilot, "/edit\r")
        assert app.chat.prompt.text == "one\ntwo"
        assert not app.chat.query(UserMessage)


async def test_a_refused_send_keeps_the_text() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await burst(pilot, "/frobnicate\r")
        assert app.chat.prompt.text == "/frobnicate"


async def test_edit_puts_the_cursor_at_the_end() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, "What is 2 + 2?")
        app.chat.prompt.text = "/edit"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.chat.prompt.text == "What is 2 + 2?"
        await pilot.press("backspace", "backspace", "3", "?")
        assert app.chat.prompt.text == "What is 2 + 3?"


async def test_every_newline_key_inserts_a_newline() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        for key in ("ctrl+j", "alt+enter", "shift+enter"):
            app.chat.prompt.text = "a"
            app.chat.prompt.move_cursor(app.chat.prompt.document.end)
            await pilot.press(key, "b")
            assert app.chat.prompt.text == "a\nb", key
        assert not app.chat.query(UserMessage)


def test_terminals_send_the_newline_keys_as_the_readme_says() -> None:
    """What Textual makes of each terminal's bytes, and the README's keys table saying the same."""

    def keys(data: str, parser: XTermParser | None = None) -> list[str]:
        parser = parser or XTermParser()
        return [event.key for event in parser.feed(data) if isinstance(event, events.Key)]

    assert keys("\n") == ["ctrl+j"]  # every terminal
    assert keys("\x1b[13;3u") == ["alt+enter"]  # terminals with the kitty keyboard protocol
    assert keys("\x1b[13;2u") == ["shift+enter"]
    parser = XTermParser()
    assert keys("\x1b\r", parser) + keys("", parser) == ["enter"]  # xterm, tmux: ESC CR
    row = next(line for line in README.read_text(encoding="utf-8").splitlines() if "| Insert a newline" in line)
    assert re.search(r"`ctrl\+j`[^|]*every terminal", row), row
    assert re.search(r"`alt\+enter`[^|]*kitty keyboard protocol", row), row
    assert "tmux" in row and "xterm" in row, row
