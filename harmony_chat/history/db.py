"""The history database: one SQLite file (WAL mode) in the user data dir, with schema migrations.

Connections are short-lived and each transaction is short, with a busy timeout, so several app
instances (and the generation thread) can write without corrupting anything. A file that is not a
healthy harmony-chat history (damaged, or another application's SQLite database) raises
:class:`HistoryError` and is never written; a place where no history can be kept (a directory, a
read-only folder) raises :class:`HistoryLocationError`.

Conversations are private: the file (and SQLite's ``-wal`` and ``-shm`` beside it, which SQLite
makes with the file's own mode) is 0600, and the data folder the app keeps it in is 0700, whatever
the umask; a history found looser is tightened when it is opened. A folder the user chose for a
``--history-db`` file is left as it is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harmony_chat.errors import HarmonyChatError
from harmony_chat.history.text import auto_title, fold
from harmony_chat.locations import data_dir
from harmony_chat.private_files import create_private_file, make_private_dir, tighten

BUSY_TIMEOUT_MS = 10_000
APPLICATION_ID = 0x68636874
"""``PRAGMA application_id`` of a harmony-chat history ("hcht"), set from schema 2 on."""
V1_TABLES = frozenset({"conversations", "turns", "messages", "search"})
"""The tables every harmony-chat history has had since schema 1."""
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database (they hold its latest writes: as private as the file)."""

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
    # 2: substring search in any script (trigram over folded text), the instance that owns a turn,
    # titles the user chose, and the application id that marks the file as harmony-chat's.
    f"""
    ALTER TABLE turns ADD COLUMN instance TEXT;
    ALTER TABLE conversations ADD COLUMN title_custom INTEGER NOT NULL DEFAULT 0;
    UPDATE conversations SET title_custom = 1 WHERE title != '' AND title != harmony_title((
        SELECT text FROM messages m WHERE m.conversation_id = conversations.id AND m.role = 'user' ORDER BY m.id LIMIT 1
    ));
    DROP TABLE search;
    CREATE VIRTUAL TABLE search USING fts5(text, conversation_id UNINDEXED, message_id UNINDEXED, tokenize = 'trigram');
    INSERT INTO search (text, conversation_id, message_id)
        SELECT harmony_fold(text), conversation_id, id FROM messages
        WHERE role = 'user' OR (role = 'assistant' AND channel = 'final') ORDER BY id;
    PRAGMA application_id = {APPLICATION_ID};
    """,
    # 3: reasoning summaries, user-facing text kept beside the messages (kind 'summary', never part of
    # the conversation a session resumes) with their figures; older versions must not read them as messages.
    """
    ALTER TABLE messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'message';
    ALTER TABLE messages ADD COLUMN meta_json TEXT NOT NULL DEFAULT '{}';
    """,
)
"""Schema versions in order; ``PRAGMA user_version`` records how many have run."""
SCHEMA_VERSION = len(MIGRATIONS)


class HistoryError(HarmonyChatError):
    """The history database cannot be used (corrupt, unreadable, not ours, or from a newer version)."""


class HistoryLocationError(HistoryError):
    """No history can be kept where it should be (a directory, a read-only folder): the app runs without."""


def default_database() -> Path:
    """Where the history lives: ``history.sqlite3`` in the user data dir."""
    return data_dir() / "history.sqlite3"


def _is_app_folder(folder: Path) -> bool:
    """Whether ``folder`` is the app's own data folder (tightened), not one the user chose (left alone)."""
    try:
        return folder.resolve() == data_dir().resolve()
    except OSError:
        return False


def _make_private(path: Path) -> None:
    """Tighten the history file and the files SQLite keeps beside it."""
    for file in (path, *(path.with_name(path.name + suffix) for suffix in COMPANION_SUFFIXES)):
        tighten(file)


def _why(path: Path, error: OSError) -> str:
    """Why ``path`` cannot be used, in words."""
    blocking = next((folder for folder in path.parents if folder.exists() and not folder.is_dir()), None)
    if blocking is not None:
        return f"{blocking} is a file, not a folder"
    return error.strerror or str(error)


def _title_or_empty(text: str | None) -> str:
    return auto_title(text or "")


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    connection.row_factory = sqlite3.Row
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA foreign_keys = ON")
    connection.create_function("harmony_fold", 1, fold, deterministic=True)
    connection.create_function("harmony_title", 1, _title_or_empty, deterministic=True)
    return connection


def _refused(path: Path, why: str) -> HistoryError:
    return HistoryError(f"{path} {why}; it was left untouched (start with --history-db OTHER_FILE, or --no-history)")


def _check_ours(path: Path, connection: sqlite3.Connection) -> None:
    """Refuse a file that is not a healthy harmony-chat history (this only reads)."""
    if connection.execute("PRAGMA quick_check").fetchone()[0] != "ok":
        raise HistoryError(f"{path} is damaged (quick_check failed); it was left untouched")
    application = connection.execute("PRAGMA application_id").fetchone()[0]
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    tables = {row[0] for row in rows}
    ours = application == APPLICATION_ID or (application == 0 and version == 1 and V1_TABLES <= tables)
    if not ours and (application != 0 or version != 0 or tables):
        listed = ", ".join(sorted(tables)[:5]) or "no tables"
        raise _refused(path, f"is not a harmony-chat history (another application's database: {listed})")
    if version > SCHEMA_VERSION:
        raise HistoryError(f"{path} was written by a newer harmony-chat (schema {version}); it was left untouched")


def _statements(script: str) -> Iterator[str]:
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""


def _migrate(connection: sqlite3.Connection) -> None:
    """Run the missing migrations, each in its own transaction (safe when two processes start at once)."""
    while True:
        connection.execute("BEGIN IMMEDIATE")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version >= SCHEMA_VERSION:
            connection.execute("COMMIT")
            return
        for statement in _statements(MIGRATIONS[version]):
            connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {version + 1}")
        connection.execute("COMMIT")


def open_database(path: Path) -> Path:
    """Check (or create) the database at ``path`` and bring its schema up to date.

    Raises:
        HistoryError: when the file is not a healthy harmony-chat history; it is left untouched.
        HistoryLocationError: when no history can be kept at ``path`` (a directory, a read-only place).
    """
    if path.is_dir():
        raise HistoryLocationError(f"cannot keep the history in {path}: it is a directory")
    try:
        exists = path.exists() and path.stat().st_size > 0
        if exists:
            with path.open("rb") as stream:
                if stream.read(16) != b"SQLite format 3\x00":
                    raise _refused(path, "is not an SQLite database")
        make_private_dir(path.parent, own=_is_app_folder(path.parent))
        if not exists:
            create_private_file(path)  # 0600 before SQLite makes it (SQLite would use the umask)
    except OSError as error:
        raise HistoryLocationError(f"cannot keep the history in {path}: {_why(path, error)}") from error
    try:
        connection = _connect(path)
    except sqlite3.Error as error:
        raise HistoryLocationError(f"cannot keep the history in {path}: {error}") from error
    try:
        if exists:
            _check_ours(path, connection)
        _make_private(path)  # ours: a history left readable by others is tightened
        connection.execute("PRAGMA journal_mode = WAL")
        _migrate(connection)
    except sqlite3.OperationalError as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        message = str(error)
        if "readonly" in message or "unable to open" in message:
            raise HistoryLocationError(f"cannot keep the history in {path}: {message}") from error
        raise HistoryError(f"cannot use history database {path}: {message}; it was left untouched") from error
    except sqlite3.DatabaseError as error:
        raise HistoryError(f"cannot use history database {path}: {error}; it was left untouched") from error
    finally:
        connection.close()
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
