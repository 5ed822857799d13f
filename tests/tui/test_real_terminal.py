"""The app in a real terminal (a pty): keys in one read, and quitting while an answer streams."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harmony_chat.history.store import HistoryStore, StoredConversation
from tests.tui.terminal import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

QUESTION = "What is the capital of France?"
LONG_QUESTION = "How do I reverse a linked list in Python?"
CTRL_Q = "\x11"


def _only_conversation(store: HistoryStore) -> StoredConversation:
    (row,) = store.list_conversations()
    return store.load(row.id)


def _start(tmp_path: Path, home: Path) -> tuple[Terminal, HistoryStore]:
    database = tmp_path / "history.sqlite3"
    terminal = Terminal(["--replay-demo", "--history-db", str(database)], home)
    terminal.wait_for("idle", after=terminal.wait_for("demo (replay)"))
    return terminal, HistoryStore(database)


def test_a_message_and_enter_in_one_write_are_sent_whole(tmp_path: Path, isolated_home: Path) -> None:
    terminal, store = _start(tmp_path, isolated_home)
    try:
        terminal.write(QUESTION + "\r")
        terminal.wait_for("effort medium ·", after=terminal.wait_for("Thinking"))  # the turn's footer
        terminal.write(CTRL_Q)
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
    users = [m.content[0].text for m in _only_conversation(store).messages if m.author.role.value == "user"]
    assert users == [QUESTION]


def test_quit_while_streaming_stops_at_once_and_keeps_the_partial_answer(tmp_path: Path, isolated_home: Path) -> None:
    terminal, store = _start(tmp_path, isolated_home)
    try:
        terminal.write(LONG_QUESTION)
        terminal.wait_for(LONG_QUESTION)
        terminal.write("\r")
        terminal.wait_for("answering")
        terminal.write(CTRL_Q)
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
    conversation = _only_conversation(store)
    assert [turn.status for turn in conversation.turns] == ["stopped"]
    final = conversation.messages[-1]
    assert final.channel == "final"
    full = _full_demo_answer(LONG_QUESTION)
    assert full.startswith(final.content[0].text) and len(final.content[0].text) < len(full) // 2


def test_a_terminal_that_goes_away_ends_the_app_like_quit(tmp_path: Path, isolated_home: Path) -> None:
    """Not its controlling terminal, so no SIGHUP: without a check the app spun at 100 % of a core."""
    terminal, store = _start(tmp_path, isolated_home)
    try:
        terminal.write(LONG_QUESTION + "\r")
        terminal.wait_for("answering")
        terminal.hang_up()
        assert terminal.wait_exit(timeout=30) == 0
    finally:
        terminal.close()
    conversation = _only_conversation(store)
    assert [turn.status for turn in conversation.turns] == ["stopped"]  # the partial answer kept, as on quit
    assert conversation.messages[-1].channel == "final"


def _full_demo_answer(question: str) -> str:
    """The whole answer the replayed demo gives to ``question`` (what an unstopped turn stores)."""
    from harmony_chat.chat.factory import create_backend
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.generation.turn import TurnOptions, run_turn
    from harmony_chat.harmony.events import ContentDelta
    from harmony_chat.harmony.session import ChatSession
    from harmony_chat.harmony.vocab import load_encoding

    backend, _ = create_backend(ChatOptions(replay_demo=True, replay_delay=0.0))
    backend.load()
    session = ChatSession(load_encoding())
    session.add_user(question)
    events = run_turn(session, backend, TurnOptions(), lambda: False)
    return "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")
