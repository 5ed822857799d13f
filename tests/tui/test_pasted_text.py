"""Bracketed pastes with escape characters inside: one paste of text, however the reads split it."""

from __future__ import annotations

from textual import events

from harmony_chat.tui.pasted_text import ESCAPE_PICTURE, PASTE_END, PASTE_START, PasteFilter, PasteSafeParser

LOG_LINE = "\x1b[32mINFO\x1b[0m worker 7 finished job 1234 in 0.52 s\r"
"""A coloured log line, as a terminal pastes it (a carriage return ends it)."""


def parse(chunks: list[str]) -> list[object]:
    parser = PasteSafeParser()
    found: list[object] = []
    for chunk in chunks:
        found += list(parser.feed(chunk))
    found += list(parser.feed(""))
    return found


def test_escapes_inside_a_paste_become_text_however_the_input_is_split() -> None:
    text = "abc\x1bdef\rghi \x1b[200~nested\x1b[201 \x1b"
    wire = "x" + PASTE_START + text + PASTE_END + "y"
    expected = "x" + PASTE_START + text.replace("\x1b", ESCAPE_PICTURE) + PASTE_END + "y"
    for cut in range(len(wire) + 1):
        for second in range(cut, len(wire) + 1):
            pastes = PasteFilter()
            out = pastes.feed(wire[:cut]) + pastes.feed(wire[cut:second]) + pastes.feed(wire[second:])
            assert out + pastes.flush() == expected, (cut, second)
            assert not pastes.pasting


def test_outside_a_paste_nothing_is_changed_or_held() -> None:
    pastes = PasteFilter()
    assert pastes.feed("\x1b") == "\x1b"  # a lone escape key goes on at once
    assert pastes.feed("[A") == "[A"
    assert pastes.feed("\x1b[20") == "\x1b[20"  # maybe a paste's start: passed on, and remembered
    assert pastes.feed("0~a\x1bb") == f"0~a{ESCAPE_PICTURE}b" and pastes.pasting
    assert pastes.feed("\x1b[2") == ""  # maybe the end: held until the next read says
    assert pastes.feed("01~\x1b") == "\x1b[201~\x1b" and not pastes.pasting


def test_a_large_coloured_paste_is_one_paste_event_and_no_key() -> None:
    pasted = LOG_LINE * (124_000 // len(LOG_LINE))
    wire = PASTE_START + pasted + PASTE_END
    found = parse([wire[start : start + 4096] for start in range(0, len(wire), 4096)])  # the driver's reads
    assert [type(event) for event in found] == [events.Paste]
    paste = found[0]
    assert isinstance(paste, events.Paste) and paste.text == pasted.replace("\x1b", ESCAPE_PICTURE)


def test_keys_around_a_paste_are_still_keys() -> None:
    found = parse(["a\x1b[A", PASTE_START + "q\x1b\r" + PASTE_END, "\r"])
    keys = [event.key for event in found if isinstance(event, events.Key)]
    assert keys == ["a", "up", "enter"]
    assert [event.text for event in found if isinstance(event, events.Paste)] == [f"q{ESCAPE_PICTURE}\r"]
