"""Pastes in a real terminal (a pty): text with escape characters and line ends stays text, never sent by itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harmony_chat.history.store import HistoryStore
from tests.tui.terminal import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

PASTED = "abc\x1bdef\rghi \x1b[31mred\x1b[0m\r\x1b[201 end"
"""Escape characters (a colour code, a fake end marker), and carriage returns as a terminal pastes line ends."""
IN_THE_PROMPT = "abc␛def\nghi ␛[31mred␛[0m\n␛[201 end"
CTRL_Q = "\x11"


def test_a_paste_with_escapes_is_sent_whole_by_the_user_s_enter_only(tmp_path: Path, isolated_home: Path) -> None:
    database = tmp_path / "history.sqlite3"
    terminal = Terminal(["--replay-demo", "--history-db", str(database)], isolated_home)
    try:
        terminal.wait_for("idle", after=terminal.wait_for("demo (replay)"))
        terminal.write("\x1b[200~" + PASTED + "\x1b[201~")
        shown = terminal.wait_for("␛[201 end")  # in the prompt, as text
        assert b"Thinking" not in terminal.output[shown:]  # nothing was sent by the paste
        terminal.write("\r")
        terminal.wait_for("effort medium ·", after=terminal.wait_for("Thinking", after=shown))
        terminal.write(CTRL_Q)
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
    store = HistoryStore(database)
    (row,) = store.list_conversations()
    users = [m.content[0].text for m in store.load(row.id).messages if m.author.role.value == "user"]
    assert users == [IN_THE_PROMPT]
