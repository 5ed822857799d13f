"""The history database: one SQLite file (WAL mode) in the user data dir, with schema migrations.

Connections are short-lived and each transaction is short, with a busy timeout, so several app
instances (and the generation thread) can write without corrupting anything. A file that is not a
healthy SQLite database raises :class:`HistoryError` and is never overwritten.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harmony_chat.errors import HarmonyChatError
from harmony_chat.locations import data_dir

BUSY_TIMEOUT_MS = 10_000

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        title TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        model TEXT NOT NULL DEFAULT '',
        settings_json TEXT NOT NULL
    );
    CREATE TABLE turns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        effort TEXT NOT NULL,
        status TEXT NOT NULL,
        stop_reason TEXT,
        stats_json TEXT NOT NULL DEFAULT '{}',
        partial_text TEXT NOT NULL DEFAULT '',
        started_at REAL NOT NULL,
        finished_at REAL
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        turn_id INTEGER REFERENCES turns(id) ON DELETE SET NULL,
        role TEXT NOT NULL,
        channel TEXT,
        recipient TEXT,
        is_analysis INTEGER NOT NULL DEFAULT 0,
        text TEXT NOT NULL,
        message_json TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
    CREATE INDEX turns_by_conversation ON turns(conversation_id, id);
    CREATE VIRTUAL TABLE search USING fts5(
        text, conversation_id UNINDEXED, message_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2'
    );
    """,
)
"""Schema versions in order; ``PRAGMA user_version`` records how many have run."""
SCHEMA_VERSION = len(MIGRATIONS)


class HistoryError(HarmonyChatError):
    """The history database cannot be used (corrupt, unreadable, or from a newer version)."""


def default_database() -> Path:
    """Where the history lives: ``history.sqlite3`` in the user data dir."""
    return data_dir() / "history.sqlite3"


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    connection.row_factory = sqlite3.Row
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


def open_database(path: Path) -> Path:
    """Check (or create) the database at ``path`` and bring its schema up to date.

    Raises:
        HistoryError: when the file is not a healthy harmony-chat history; it is left untouched.
    """
    exists = path.exists() and path.stat().st_size > 0
    if exists:
        with path.open("rb") as stream:
            if stream.read(16) != b"SQLite format 3\x00":
                raise HistoryError(
                    f"{path} is not an SQLite database; it was left untouched "
                    "(start with --history-db OTHER_FILE, or --no-history)"
                )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        connection = _connect(path)
        try:
            if exists and connection.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise HistoryError(f"{path} is damaged (quick_check failed); it was left untouched")
            connection.execute("PRAGMA journal_mode = WAL")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise HistoryError(f"{path} was written by a newer harmony-chat (schema {version})")
            for number in range(version, SCHEMA_VERSION):
                connection.executescript(
                    f"BEGIN IMMEDIATE;\n{MIGRATIONS[number]}\nPRAGMA user_version = {number + 1};\nCOMMIT;"
                )
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise HistoryError(f"cannot use history database {path}: {error}; it was left untouched") from error
    return path


@contextmanager
def transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """A short write transaction on a fresh connection (thread-safe by construction)."""
    connection = _connect(path)
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield connection
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection."""
    connection = _connect(path)
    try:
        yield connection
    finally:
        connection.close()
