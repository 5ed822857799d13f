"""Which files the history opens: other applications' databases, bad places, and older schemas."""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import Message, Role

from harmony_chat.history.db import (
    MIGRATIONS,
    SCHEMA_VERSION,
    HistoryError,
    HistoryLocationError,
    default_database,
    reading,
)
from harmony_chat.history.instances import instances_folder
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
    assert [hit.conversation_id for hit in store.search("東京")] == [1]
    assert [hit.conversation_id for hit in store.search("Прив")] == [2]
    assert store.recover_interrupted() == 1  # a turn from before turns had owners
    assert store.load(1).messages[-1].content[0].text == "half an answer"
    stored = store.load(2)
    assert stored.title == "My renamed chat"
    store.drop_exchange(2, 2, keep_user=False)
    assert store.load(2).title == "My renamed chat"  # recognised as the user's choice: kept
    store.drop_exchange(1, 1, keep_user=False)
    assert store.load(1).title == ""  # automatic: follows the first message


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The loosest umask: files come out as their creator asks, 0666 for SQLite's."""
    old = os.umask(0)
    yield
    os.umask(old)


posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")


@posix_only
def test_a_new_history_is_private_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_umask: None
) -> None:
    data = tmp_path / "share" / "harmony-chat"
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(data))
    store = HistoryStore(default_database())
    conversation = store.create_conversation({}, "pocket")
    with reading(store.path) as connection:  # an open connection keeps SQLite's -wal and -shm
        connection.execute("SELECT count(*) FROM conversations").fetchone()
        store.add_message(conversation, Message.from_role_and_content(Role.USER, "a private question"))
        companions = [store.path.with_name(store.path.name + suffix) for suffix in ("-wal", "-shm")]
        assert all(path.exists() for path in companions)
        assert [mode(path) for path in [store.path, *companions]] == [0o600] * 3
    assert store.instance.claim() is not None
    (lock,) = instances_folder(store.path).iterdir()
    assert (mode(data.parent), mode(data), mode(instances_folder(store.path)), mode(lock)) == (0o700,) * 3 + (0o600,)


@posix_only
def test_a_history_others_can_read_is_tightened_when_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(data))
    store = HistoryStore(default_database())
    store.create_conversation({}, "pocket")
    assert store.instance.claim() is not None
    store.close()
    companions = [store.path.with_name(store.path.name + suffix) for suffix in ("-wal", "-shm")]
    with reading(store.path) as connection:  # another process's connection keeps -wal and -shm
        connection.execute("SELECT count(*) FROM conversations").fetchone()
        for path in [data, instances_folder(store.path), store.path, *companions]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # as an older version left them
        HistoryStore(default_database()).list_conversations()
        assert [mode(path) for path in [data, store.path, *companions]] == [0o700, 0o600, 0o600, 0o600]
    HistoryStore(default_database()).instance.claim()
    assert mode(instances_folder(store.path)) == 0o700


@posix_only
def test_a_folder_the_user_chose_is_left_alone(tmp_path: Path, open_umask: None) -> None:
    """``--history-db`` in a project folder: the file is private, the folder is the user's business."""
    project = tmp_path / "project"
    project.mkdir(mode=0o755)
    project.chmod(0o755)
    store = HistoryStore(project / "chats.sqlite3")
    store.create_conversation({}, "pocket")
    assert (mode(project), mode(store.path)) == (0o755, 0o600)
    made = HistoryStore(tmp_path / "new" / "place" / "chats.sqlite3")  # folders the app makes are its own
    assert (mode(tmp_path / "new"), mode(made.path.parent), mode(made.path)) == (0o700, 0o700, 0o600)


@posix_only
def test_another_applications_database_keeps_its_mode(tmp_path: Path) -> None:
    other = foreign_database(tmp_path / "other.db", "CREATE TABLE foo (x);")
    other.chmod(0o644)
    with pytest.raises(HistoryError):
        HistoryStore(other)
    assert mode(other) == 0o644
