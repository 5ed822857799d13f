"""The server's SQLite store: stored responses (``previous_response_id``) and conversations with their items.

One file in the user data dir by default (``serve.sqlite3``, mode 0600: it holds what clients
said), moved with ``serve --store-path`` or kept in memory (``:memory:``), so a restart keeps
``previous_response_id`` chains and conversations. Both are bounded: the least recently used
responses and conversations beyond a count are forgotten, and so is whatever was not used for
:data:`DEFAULT_MAX_AGE_S`. A file that is not a harmony-chat store is refused and left untouched.

Every method takes the store's lock and runs one short transaction, so the event loop may call
it directly (from any thread).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harmony_chat.errors import HarmonyChatError
from harmony_chat.locations import data_dir

DEFAULT_STORE_SIZE = 256
"""Responses kept for ``previous_response_id`` (and conversations kept); older ones are forgotten."""
DEFAULT_MAX_AGE_S = 30 * 24 * 3600
"""Responses and conversations not used for this long are forgotten."""
MAX_CONVERSATION_ITEMS = 10_000
"""The most items one conversation may hold."""
MEMORY = ":memory:"
"""The ``--store-path`` that keeps the store in memory (gone when the server stops)."""
APPLICATION_ID = 0x68637376
"""``PRAGMA application_id`` of a harmony-chat server store ("hcsv")."""
SCHEMA = """
CREATE TABLE responses (
    id TEXT PRIMARY KEY,
    used_at REAL NOT NULL,
    response_json TEXT NOT NULL,
    items_json TEXT NOT NULL
);
CREATE INDEX responses_by_use ON responses(used_at);
CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    used_at REAL NOT NULL,
    metadata_json TEXT NOT NULL
);
CREATE INDEX conversations_by_use ON conversations(used_at);
CREATE TABLE conversation_items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    item_json TEXT NOT NULL,
    UNIQUE (conversation_id, id)
);
"""

Item = dict[str, Any]


class StoreError(HarmonyChatError):
    """The store cannot be used (not a harmony-chat store, a newer one, or a place no file can be kept)."""

    exit_code = 2


def default_store_path() -> Path:
    """Where the store lives unless ``--store-path`` says otherwise: ``serve.sqlite3`` in the user data dir."""
    return data_dir() / "serve.sqlite3"


def store_location(option: str | None) -> Path | None:
    """The file ``--store-path`` names (None: in memory); the default file when it is not given."""
    if option is None:
        return default_store_path()
    if option == MEMORY:
        return None
    return Path(option).expanduser()


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """What a later request continues from: the whole conversation as Responses items."""

    response: dict[str, Any]
    """The response object as it was returned."""
    items: list[Item] = field(default_factory=list)
    """Every input item of the request (its previous responses' included), then the output items."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """A conversation's own fields (its items are listed separately)."""

    id: str
    created_at: int
    metadata: dict[str, str]

    def as_object(self) -> dict[str, Any]:
        """The conversation object of OpenAI's Conversations API."""
        return {"id": self.id, "object": "conversation", "created_at": self.created_at, "metadata": self.metadata}


def _prepare_file(path: Path) -> None:
    """Create the file (0600, its folder 0700) or check that an existing one is an SQLite database.

    Raises:
        StoreError: when it is a folder, not an SQLite file, or cannot be created.
    """
    if path.is_dir():
        raise StoreError(f"cannot keep the server's store in {path}: it is a directory")
    try:
        if path.exists() and path.stat().st_size > 0:
            with path.open("rb") as stream:
                if stream.read(16) != b"SQLite format 3\x00":
                    raise StoreError(f"{path} is not an SQLite database; it was left untouched (give --store-path)")
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)
    except OSError as error:
        raise StoreError(f"cannot keep the server's store in {path}: {error.strerror or error}") from error


class ServerStore:
    """Responses and conversations in one SQLite database.

    Args:
        path: the database file (created 0600 when missing); None keeps everything in memory.
        size: how many responses, and how many conversations, are kept (least recently used out).
        max_age_s: how long an unused response or conversation is kept.
        clock: seconds since the epoch (tests pass their own).

    Raises:
        StoreError: when ``path`` is not a harmony-chat store or no file can be kept there.
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        size: int = DEFAULT_STORE_SIZE,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        clock: Any = time.time,
    ) -> None:
        self.path = path
        self.size = max(0, size)
        self.max_age_s = max_age_s
        self._clock = clock
        self._lock = threading.Lock()
        if path is not None:
            _prepare_file(path)
        try:
            self._db = sqlite3.connect(path or MEMORY, isolation_level=None, check_same_thread=False, timeout=10)
            self._db.execute("PRAGMA foreign_keys = ON")
            self._open()
        except sqlite3.Error as error:
            raise StoreError(f"cannot use the server's store {path or MEMORY}: {error}") from error

    def _open(self) -> None:
        db = self._db
        application = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        if application != APPLICATION_ID and (application != 0 or version != 0 or tables):
            raise StoreError(f"{self.path} is not a harmony-chat server store; it was left untouched")
        if version > 1:
            raise StoreError(f"{self.path} was written by a newer harmony-chat; it was left untouched")
        if self.path is not None:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        if version == 0:
            db.execute("BEGIN IMMEDIATE")
            for statement in _statements(SCHEMA):
                db.execute(statement)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute("PRAGMA user_version = 1")
            db.execute("COMMIT")

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    # -- responses -------------------------------------------------------------------------------

    def put(self, response_id: str, stored: StoredResponse) -> None:
        """Keep a response, forgetting the least recently used beyond the bound and the ones too old."""
        now = self._clock()
        with self._lock, self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO responses (id, used_at, response_json, items_json) VALUES (?, ?, ?, ?)",
                (response_id, now, json.dumps(stored.response), json.dumps(stored.items)),
            )
            self._prune("responses", now)

    def get(self, response_id: str) -> StoredResponse | None:
        """The stored response, or None when it was never stored, or was forgotten."""
        now = self._clock()
        with self._lock, self._transaction():
            self._prune("responses", now)
            row = self._db.execute(
                "SELECT response_json, items_json FROM responses WHERE id = ?", (response_id,)
            ).fetchone()
            if row is None:
                return None
            self._db.execute("UPDATE responses SET used_at = ? WHERE id = ?", (now, response_id))
        return StoredResponse(json.loads(row[0]), json.loads(row[1]))

    def __len__(self) -> int:
        with self._lock:
            count: int = self._db.execute("SELECT count(*) FROM responses").fetchone()[0]
            return count

    # -- conversations ---------------------------------------------------------------------------

    def create_conversation(self, conversation_id: str, metadata: dict[str, str], items: list[Item]) -> Conversation:
        """A new conversation holding ``items`` (each with its ``id``)."""
        now = self._clock()
        created = int(now)
        with self._lock, self._transaction():
            self._db.execute(
                "INSERT INTO conversations (id, created_at, used_at, metadata_json) VALUES (?, ?, ?, ?)",
                (conversation_id, created, now, json.dumps(metadata)),
            )
            self._insert_items(conversation_id, items)
            self._prune("conversations", now)
        return Conversation(conversation_id, created, metadata)

    def conversation(self, conversation_id: str) -> Conversation | None:
        """The conversation, or None when there is none (or it was forgotten)."""
        now = self._clock()
        with self._lock, self._transaction():
            return self._touch(conversation_id, now)

    def update_conversation(self, conversation_id: str, metadata: dict[str, str]) -> Conversation | None:
        """Replace the conversation's metadata; None when there is no such conversation."""
        now = self._clock()
        with self._lock, self._transaction():
            if self._touch(conversation_id, now) is None:
                return None
            self._db.execute(
                "UPDATE conversations SET metadata_json = ? WHERE id = ?", (json.dumps(metadata), conversation_id)
            )
            return self._touch(conversation_id, now)

    def delete_conversation(self, conversation_id: str) -> bool:
        """Forget the conversation and its items; False when there was none."""
        with self._lock, self._transaction():
            cursor = self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            return cursor.rowcount > 0

    def add_items(self, conversation_id: str, items: list[Item]) -> bool:
        """Append items (each with its ``id``); False when there is no such conversation.

        Raises:
            StoreFull: when the conversation would hold more than :data:`MAX_CONVERSATION_ITEMS`.
        """
        now = self._clock()
        with self._lock, self._transaction():
            if self._touch(conversation_id, now) is None:
                return False
            self._insert_items(conversation_id, items)
            return True

    def items(self, conversation_id: str) -> list[Item] | None:
        """Every item of the conversation, oldest first (None: no such conversation)."""
        now = self._clock()
        with self._lock, self._transaction():
            if self._touch(conversation_id, now) is None:
                return None
            rows = self._db.execute(
                "SELECT item_json FROM conversation_items WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
            )
            return [json.loads(row[0]) for row in rows]

    def item(self, conversation_id: str, item_id: str) -> Item | None:
        """One item of the conversation, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT item_json FROM conversation_items WHERE conversation_id = ? AND id = ?",
                (conversation_id, item_id),
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def delete_item(self, conversation_id: str, item_id: str) -> bool:
        """Remove one item; False when the conversation has no such item."""
        now = self._clock()
        with self._lock, self._transaction():
            cursor = self._db.execute(
                "DELETE FROM conversation_items WHERE conversation_id = ? AND id = ?", (conversation_id, item_id)
            )
            if cursor.rowcount:
                self._db.execute("UPDATE conversations SET used_at = ? WHERE id = ?", (now, conversation_id))
            return cursor.rowcount > 0

    # -- internals -------------------------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _touch(self, conversation_id: str, now: float) -> Conversation | None:
        self._prune("conversations", now)
        row = self._db.execute(
            "SELECT created_at, metadata_json FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        if row is None:
            return None
        self._db.execute("UPDATE conversations SET used_at = ? WHERE id = ?", (now, conversation_id))
        return Conversation(conversation_id, int(row[0]), json.loads(row[1]))

    def _insert_items(self, conversation_id: str, items: list[Item]) -> None:
        held = self._db.execute(
            "SELECT count(*) FROM conversation_items WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()[0]
        if held + len(items) > MAX_CONVERSATION_ITEMS:
            raise StoreFull(f"a conversation holds at most {MAX_CONVERSATION_ITEMS} items")
        self._db.executemany(
            "INSERT INTO conversation_items (conversation_id, id, item_json) VALUES (?, ?, ?)",
            [(conversation_id, item["id"], json.dumps(item)) for item in items],
        )

    def _prune(self, table: str, now: float) -> None:
        """Forget rows of ``table`` unused for too long, then the least recently used beyond the bound."""
        self._db.execute(f"DELETE FROM {table} WHERE used_at < ?", (now - self.max_age_s,))  # noqa: S608
        self._db.execute(
            f"DELETE FROM {table} WHERE id NOT IN (SELECT id FROM {table} ORDER BY used_at DESC LIMIT ?)",  # noqa: S608
            (self.size,),
        )


class StoreFull(HarmonyChatError):
    """A conversation has as many items as it may hold."""


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _statements(script: str) -> list[str]:
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return statements
