"""Which files the history opens: other applications' databases, bad places, and older schemas."""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
from pathlib import Path

import pytest
from openai_harmony import Message, Role

from harmony_chat.history.db import MIGRATIONS, SCHEMA_VERSION, HistoryError, HistoryLocationError
from harmony_chat.history.store import HistoryStore


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def foreign_database(path: Path, script: str) -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(script)
    db.close()
    return path


@pytest.mark.parametrize(
    "script",
    [
        "CREATE TABLE foo (x INTEGER); INSERT INTO foo VALUES (1);",
        "CREATE TABLE notes (body TEXT); PRAGMA user_version = 1;",
        "CREATE TABLE conversations (x); CREATE TABLE turns (x); CREATE TABLE messages (x); "
        "CREATE TABLE search (x); PRAGMA user_version = 2;",  # our table names, another application's version
        "PRAGMA application_id = 42; CREATE TABLE foo (x);",
        "PRAGMA user_version = 7;",
    ],
)
def test_another_applications_database_is_refused_and_never_written(tmp_path: Path, script: str) -> None:
    path = foreign_database(tmp_path / "other.db", script)
    before = digest(path)
    with pytest.raises(HistoryError, match="not a harmony-chat history") as raised:
        HistoryStore(path)
    assert "\n" not in str(raised.value) and "left untouched" in str(raised.value)
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]  # no journal, no lock folder


def test_an_empty_sqlite_file_becomes_a_history(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).execute("VACUUM").connection.close()
    assert HistoryStore(path).list_conversations() == []


def test_a_directory_is_not_a_history_file(tmp_path: Path) -> None:
    with pytest.raises(HistoryLocationError, match="is a directory"):
        HistoryStore(tmp_path)


def test_a_folder_that_cannot_be_made(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    with pytest.raises(HistoryLocationError) as raised:
        HistoryStore(blocker / "history.sqlite3")
    assert (
        str(raised.value)
        == f"cannot keep the history in {blocker / 'history.sqlite3'}: {blocker} is a file, not a folder"
    )


def test_a_read_only_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(HistoryLocationError, match="Read-only file system"):
        HistoryStore(tmp_path / "home" / ".local" / "share" / "history.sqlite3")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(HistoryLocationError):
            HistoryStore(folder / "history.sqlite3")
    finally:
        folder.chmod(0o700)


def schema_1_database(path: Path) -> None:
    """A history as the first release wrote it (schema 1, unicode61 search, no application id)."""
    with sqlite3.connect(path) as db:
        db.executescript(MIGRATIONS[0] + "PRAGMA user_version = 1;")
        for conversation, title, texts in [
            (1, "東京の天気はどうですか？", ["東京の天気はどうですか？"]),
            (2, "My renamed chat", ["Привет, как дела?"]),
        ]:
            db.execute(
                "INSERT INTO conversations (id, title, created_at, updated_at, settings_json) "
                "VALUES (?, ?, 0, 0, '{}')",
                (conversation, title),
            )
            for text in texts:
                cursor = db.execute(
                    "INSERT INTO messages (conversation_id, role, text, message_json, created_at) "
                    "VALUES (?, 'user', ?, ?, 0)",
                    (conversation, text, Message.from_role_and_content(Role.USER, text).to_json()),
                )
                db.execute(
                    "INSERT INTO search (text, conversation_id, message_id) VALUES (?, ?, ?)",
                    (text, conversation, cursor.lastrowid),
                )
        db.execute(
            "INSERT INTO turns (conversation_id, model, effort, status, partial_text, started_at) "
            "VALUES (1, 'tiny', 'low', 'generating', 'half an answer', 0)"
        )
    db.close()


def test_schema_1_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    schema_1_database(path)
    store = HistoryStore(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()
    assert [hit.conversation for hit in store.search("東京")] == [1]
    assert [hit.conversation for hit in store.search("Прив")] == [2]
    assert store.recover_interrupted() == 1  # a turn from before turns had owners
    assert store.load(1).messages[-1].content[0].text == "half an answer"
    stored = store.load(2)
    assert stored.title == "My renamed chat"
    store.drop_exchange(2, 2, keep_user=False)
    assert store.load(2).title == "My renamed chat"  # recognised as the user's choice: kept
    store.drop_exchange(1, 1, keep_user=False)
    assert store.load(1).title == ""  # automatic: follows the first message
