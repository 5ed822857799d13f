"""The server's SQLite store: stored responses (``previous_response_id``) and conversations with their items.

One file in the user data dir by default (``serve.sqlite3``, mode 0600: it holds what clients
said), moved with ``serve --store-path`` or kept in memory (``:memory:``), so a restart keeps
``previous_response_id`` chains and conversations. Both are bounded: the least recently used
responses and conversations beyond a count are forgotten, and so is whatever was not used for
:data:`DEFAULT_MAX_AGE_S`; in bytes, by :class:`StoreLimits` (an item, a conversation, a stored
response, the whole file), past which :class:`StoreFull` says which bound was reached. Pages of
a conversation's items are read with ``LIMIT`` in SQL, never the whole conversation. A file that
is not a harmony-chat store is refused and left untouched.

Every method takes the store's lock and runs one short transaction, from any thread: the server
calls them from its thread pool, never on the event loop.
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
_MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class StoreLimits:
    """The store's bounds in bytes (of JSON text)."""

    item_bytes: int = 1 * _MIB
    """One conversation item."""
    conversation_bytes: int = 64 * _MIB
    """All the items of one conversation."""
    response_bytes: int = 32 * _MIB
    """One stored response with the items it continues from."""
    store_bytes: int = 1024 * _MIB
    """The whole database (its pages in use)."""


DEFAULT_STORE_LIMITS = StoreLimits()
"""The bounds ``serve`` uses by default (its ``--store-item-kb``, ``--store-conversation-mb``, ``--store-max-mb``)."""


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
    metadata_json TEXT NOT NULL,
    bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX conversations_by_use ON conversations(used_at);
CREATE TABLE conversation_items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    item_json TEXT NOT NULL,
    bytes INTEGER NOT NULL DEFAULT 0,
    UNIQUE (conversation_id, id)
);
CREATE INDEX items_in_order ON conversation_items(conversation_id, seq);
"""
SCHEMA_VERSION = 2
MIGRATE_1_TO_2 = """
ALTER TABLE conversations ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversation_items ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
UPDATE conversation_items SET bytes = length(CAST(item_json AS BLOB));
UPDATE conversations SET bytes = (
    SELECT coalesce(sum(bytes), 0) FROM conversation_items WHERE conversation_id = conversations.id
);
CREATE INDEX items_in_order ON conversation_items(conversation_id, seq);
"""
"""Version 1 kept no sizes: they are counted once, when a newer harmony-chat opens the store."""

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
        limits: the bounds in bytes.
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
        limits: StoreLimits | None = None,
        clock: Any = time.time,
    ) -> None:
        self.path = path
        self.limits = limits or StoreLimits()
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
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path} was written by a newer harmony-chat; it was left untouched")
        if self.path is not None:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            db.execute("BEGIN IMMEDIATE")
            for statement in _statements(SCHEMA if version == 0 else MIGRATE_1_TO_2):
                db.execute(statement)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    # -- responses -------------------------------------------------------------------------------

    def put(self, response_id: str, stored: StoredResponse) -> None:
        """Keep a response, forgetting the least recently used beyond the bound and the ones too old.

        Raises:
            StoreFull: when the response is over its bound in bytes, or the store is full.
        """
        now = self._clock()
        response_json, items_json = json.dumps(stored.response), json.dumps(stored.items)
        size = len(response_json.encode("utf-8")) + len(items_json.encode("utf-8"))
        if size > self.limits.response_bytes:
            raise StoreFull(
                f"the response is {size:,} bytes, over the {self.limits.response_bytes:,} a stored one may hold",
                "response_too_large",
            )
        with self._lock, self._transaction():
            self._prune("responses", now)
            self._check_room(size)
            self._db.execute(
                "INSERT OR REPLACE INTO responses (id, used_at, response_json, items_json) VALUES (?, ?, ?, ?)",
                (response_id, now, response_json, items_json),
            )

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
        """Every item of the conversation, oldest first (None: no such conversation): what a response continues."""
        now = self._clock()
        with self._lock, self._transaction():
            if self._touch(conversation_id, now) is None:
                return None
            rows = self._db.execute(
                "SELECT item_json FROM conversation_items WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
            )
            return [json.loads(row[0]) for row in rows]

    def items_page(
        self, conversation_id: str, *, limit: int, after: str | None = None, newest_first: bool = True
    ) -> tuple[list[Item], bool] | None:
        """At most ``limit`` items after the item ``after`` in the order asked, and whether more follow.

        None when there is no such conversation; read with ``LIMIT`` in SQL, so a page of a long
        conversation costs a page.

        Raises:
            KeyError: when the conversation has no item ``after``.
        """
        now = self._clock()
        order, compare = ("DESC", "<") if newest_first else ("ASC", ">")
        with self._lock, self._transaction():
            if self._touch(conversation_id, now) is None:
                return None
            start = None
            if after:
                row = self._db.execute(
                    "SELECT seq FROM conversation_items WHERE conversation_id = ? AND id = ?", (conversation_id, after)
                ).fetchone()
                if row is None:
                    raise KeyError(after)
                start = int(row[0])
            where = "conversation_id = ?" + (f" AND seq {compare} ?" if start is not None else "")
            parameters: tuple[Any, ...] = (conversation_id, *(() if start is None else (start,)), limit + 1)
            rows = self._db.execute(
                f"SELECT item_json FROM conversation_items WHERE {where} ORDER BY seq {order} LIMIT ?",  # noqa: S608
                parameters,
            ).fetchall()
        page = [json.loads(row[0]) for row in rows[:limit]]
        return page, len(rows) > limit

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
            row = self._db.execute(
                "SELECT seq, bytes FROM conversation_items WHERE conversation_id = ? AND id = ?",
                (conversation_id, item_id),
            ).fetchone()
            if row is None:
                return False
            self._db.execute("DELETE FROM conversation_items WHERE seq = ?", (row[0],))
            self._db.execute(
                "UPDATE conversations SET used_at = ?, bytes = bytes - ? WHERE id = ?",
                (now, int(row[1]), conversation_id),
            )
            return True

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
        texts = [json.dumps(item) for item in items]
        sizes = [len(text.encode("utf-8")) for text in texts]
        limits = self.limits
        for item, size in zip(items, sizes, strict=True):
            if size > limits.item_bytes:
                raise StoreFull(
                    f"item {str(item['id'])[:80]!r} is {size:,} bytes, over the {limits.item_bytes:,} an item may hold",
                    "item_too_large",
                )
        held = self._db.execute(
            "SELECT count(*) FROM conversation_items WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()[0]
        held_bytes = self._db.execute("SELECT bytes FROM conversations WHERE id = ?", (conversation_id,)).fetchone()[0]
        if held + len(items) > MAX_CONVERSATION_ITEMS:
            raise StoreFull(f"a conversation holds at most {MAX_CONVERSATION_ITEMS} items", "conversation_full")
        if held_bytes + sum(sizes) > limits.conversation_bytes:
            raise StoreFull(
                f"a conversation holds at most {limits.conversation_bytes:,} bytes of items"
                f" ({held_bytes:,} held, {sum(sizes):,} more asked)",
                "conversation_full",
            )
        self._check_room(sum(sizes))
        self._db.executemany(
            "INSERT INTO conversation_items (conversation_id, id, item_json, bytes) VALUES (?, ?, ?, ?)",
            [(conversation_id, item["id"], text, size) for item, text, size in zip(items, texts, sizes, strict=True)],
        )
        self._db.execute("UPDATE conversations SET bytes = bytes + ? WHERE id = ?", (sum(sizes), conversation_id))

    def _check_room(self, more: int) -> None:
        """Raise ``StoreFull`` when ``more`` bytes would take the database past its bound (pages in use)."""
        pages = (
            self._db.execute("PRAGMA page_count").fetchone()[0]
            - self._db.execute("PRAGMA freelist_count").fetchone()[0]
        )
        used = pages * self._db.execute("PRAGMA page_size").fetchone()[0]
        if used + more > self.limits.store_bytes:
            raise StoreFull(
                f"the server's store is full ({used:,} of {self.limits.store_bytes:,} bytes): delete conversations"
                " or responses, or start serve with a larger store",
                "store_full",
            )

    def _prune(self, table: str, now: float) -> None:
        """Forget rows of ``table`` unused for too long, then the least recently used beyond the bound."""
        self._db.execute(f"DELETE FROM {table} WHERE used_at < ?", (now - self.max_age_s,))  # noqa: S608
        self._db.execute(
            f"DELETE FROM {table} WHERE id NOT IN (SELECT id FROM {table} ORDER BY used_at DESC LIMIT ?)",  # noqa: S608
            (self.size,),
        )


class StoreFull(HarmonyChatError):
    """A bound of the store was reached: ``code`` says which (``item_too_large``, ``conversation_full``...)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


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
