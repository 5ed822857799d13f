"""Pasted text in the prompt is data: inserted whole where the cursor is, shown as text, never sent by itself."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from harmony_chat.tui.pasted_text import PASTE_END, PASTE_START, PasteSafeParser
from harmony_chat.tui.widgets.turn import UserMessage
from tests.tui.harness import make_app, settle

LOG_LINE = "\x1b[32mINFO\x1b[0m worker 7 finished job 1234 in 0.52 s\r"


async def paste(pilot: Pilot[Any], text: str) -> None:
    """Deliver a bracketed paste of ``text`` as the terminal driver does (its reads of 4 KiB, parsed)."""
    wire = PASTE_START + text + PASTE_END
    parser = PasteSafeParser()
    for start in range(0, len(wire), 4096):
        for event in parser.feed(wire[start : start + 4096]):
            pilot.app.post_message(event)
    await settle(pilot)


async def test_control_characters_are_shown_and_line_ends_are_newlines() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        prompt = app.chat.prompt
        prompt.text = "before  after"
        prompt.move_cursor((0, 7))
        await paste(pilot, "a\x1b[31mb\x07\x7f\r\nc\rd\te\x9b")
        assert prompt.text == "before a␛[31mb␇␡\nc\nd\te� after"
        assert not app.chat.query(UserMessage) and not app.chat.generating  # nothing was sent


async def test_a_paste_replaces_the_selection() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        prompt = app.chat.prompt
        prompt.text = "/foo"
        prompt.select_all()
        await paste(pilot, "pasted")
        assert prompt.text == "pasted"


async def test_a_large_coloured_paste_lands_whole_and_the_app_still_answers_keys() -> None:
    pasted = LOG_LINE * (124_000 // len(LOG_LINE))
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await paste(pilot, pasted)
        prompt = app.chat.prompt
        expected = pasted.replace("\x1b", "␛").replace("\r", "\n")
        assert prompt.text == expected and not app.chat.query(UserMessage)
        await pilot.press("!")
        assert prompt.text == expected + "!"
