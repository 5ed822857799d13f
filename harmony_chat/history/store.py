"""Store and read conversations: harmony messages plus per-turn metadata, and full-text search.

Every harmony message is kept as openai-harmony's JSON (exact round trips) beside its plain text.
Analysis (raw chain of thought) is only stored when asked, and then flagged; reasoning summaries
(user-facing text) are kept beside the messages; search covers user messages, final answers and
summaries. This module (with ``db.py``'s schema) is the only code that speaks SQL.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openai_harmony import Message, Role, ToolDescription

from harmony_chat.harmony.messages import message_text
from harmony_chat.harmony.visibility import Storage, is_answer, rule_of
from harmony_chat.history.db import HistoryError, open_database, reading, transaction
from harmony_chat.history.instances import InstanceLock, if_gone, instances_folder, sweep
from harmony_chat.history.text import ConversationHit, auto_title, fold, make_snippet, query_terms

TURN_STATUSES = ("generating", "complete", "stopped", "truncated", "error", "interrupted")


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One row of the history list."""

    id: int
    title: str
    created_at: float
    updated_at: float
    model: str
    messages: int


@dataclass(slots=True)
class TurnRow:
    """What is stored about one assistant turn."""

    id: int
    model: str
    effort: str
    status: str
    stop_reason: str | None
    stats: dict[str, Any]
    partial_text: str
    started_at: float
    finished_at: float | None


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """A reasoning summary the model wrote for the user during a turn (never part of the conversation)."""

    id: int
    """Its place among the conversation's messages: it follows the message ids below it."""
    turn: int | None
    text: str
    figures: dict[str, Any]
    """Part, live, analysis tokens and the summary's cost (see ``ReasoningSummary.as_dict``)."""


@dataclass(slots=True)
class StoredConversation:
    """A conversation as stored: settings, messages (with their turn ids) and turns."""

    id: int
    title: str
    model: str
    created_at: float
    settings: dict[str, Any]
    updated_at: float = 0.0
    """When it last changed: the time ``history list``, the app's history panel and exports show."""
    messages: list[Message] = field(default_factory=list)
    message_turns: list[int | None] = field(default_factory=list)
    message_analysis: list[bool] = field(default_factory=list)
    message_ids: list[int] = field(default_factory=list)
    message_meta: list[dict[str, Any]] = field(default_factory=list)
    """What is known besides each message (a tool result's status and approval)."""
    message_times: list[float] = field(default_factory=list)
    """When each message was stored (seconds since the epoch)."""
    turns: list[TurnRow] = field(default_factory=list)
    summaries: list[StoredSummary] = field(default_factory=list)

    @property
    def functions(self) -> list[ToolDescription]:
        """The declared function tools."""
        return [ToolDescription.model_validate(tool) for tool in self.settings.get("functions", [])]


class HistoryStore:
    """The conversation history in one SQLite file.

    Args:
        path: the database file (created, or migrated, on first use).
        store_analysis: also keep raw chain of thought (flagged as such); off by default.

    Raises:
        HistoryError: when the file is not a healthy history database (it is not overwritten).
    """

    def __init__(self, path: Path, store_analysis: bool = False) -> None:
        self.path = open_database(path)
        self.store_analysis = store_analysis
        self.instance = InstanceLock(self.path)
        """This process's claim on the turns it generates (so no other process "recovers" them)."""

    def close(self) -> None:
        """Release this instance's claim: turns it left ``generating`` become recoverable."""
        self.instance.release()

    def create_conversation(self, settings: dict[str, Any], model: str = "") -> int:
        """Start a conversation; ``settings`` hold effort, instructions, functions and start date."""
        now = time.time()
        with transaction(self.path) as db:
            cursor = db.execute(
                "INSERT INTO conversations (created_at, updated_at, model, settings_json) VALUES (?, ?, ?, ?)",
                (now, now, model, json.dumps(settings)),
            )
            return int(cursor.lastrowid or 0)

    def add_message(
        self, conversation_id: int, message: Message, turn: int | None = None, meta: dict[str, Any] | None = None
    ) -> int | None:
        """Store one message (skips analysis unless ``store_analysis``) with ``meta`` beside it; return its id."""
        analysis = rule_of(message).storage is Storage.WITH_ANALYSIS
        if analysis and not self.store_analysis:
            return None
        text = message_text(message)
        role = message.author.role.value
        now = time.time()
        with transaction(self.path) as db:
            cursor = db.execute(
                "INSERT INTO messages (conversation_id, turn_id, role, channel, recipient, is_analysis, text, "
                "message_json, meta_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conversation_id,
                    turn,
                    role,
                    message.channel,
                    message.recipient,
                    int(analysis),
                    text,
                    message.to_json(),
                    json.dumps(meta or {}),
                    now,
                ),
            )
            message_id = int(cursor.lastrowid or 0)
            if role == "user" or is_answer(message):
                db.execute(
                    "INSERT INTO search (text, conversation_id, message_id) VALUES (?, ?, ?)",
                    (fold(text), conversation_id, message_id),
                )
            if role == "user":
                db.execute(
                    "UPDATE conversations SET title = ? WHERE id = ? AND title = ''",
                    (auto_title(text), conversation_id),
                )
            if turn is not None:  # the streamed answer is stored now: recovery must not add it again
                db.execute("UPDATE turns SET partial_text = '' WHERE id = ?", (turn,))
            db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
            return message_id

    def add_summary(self, conversation_id: int, turn: int | None, text: str, figures: dict[str, Any]) -> int:
        """Store a reasoning summary (searchable); return its id. It never comes back as a message."""
        now = time.time()
        with transaction(self.path) as db:
            cursor = db.execute(
                "INSERT INTO messages (conversation_id, turn_id, role, kind, text, message_json, meta_json, "
                "created_at) VALUES (?, ?, 'assistant', 'summary', ?, '{}', ?, ?)",
                (conversation_id, turn, text, json.dumps(figures), now),
            )
            summary_id = int(cursor.lastrowid or 0)
            db.execute(
                "INSERT INTO search (text, conversation_id, message_id) VALUES (?, ?, ?)",
                (fold(text), conversation_id, summary_id),
            )
            return summary_id

    def begin_turn(self, conversation_id: int, model: str, effort: str) -> int:
        """Record that an assistant turn started (status ``generating`` until it ends), owned by this process."""
        instance = self.instance.claim()
        with transaction(self.path) as db:
            cursor = db.execute(
                "INSERT INTO turns (conversation_id, model, effort, status, started_at, instance) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (conversation_id, model, effort, "generating", time.time(), instance),
            )
            db.execute("UPDATE conversations SET model = ? WHERE id = ?", (model, conversation_id))
            return int(cursor.lastrowid or 0)

    def save_partial(self, turn: int, text: str) -> None:
        """Keep the answer generated so far, so a killed process loses (almost) nothing."""
        with transaction(self.path) as db:
            db.execute("UPDATE turns SET partial_text = ? WHERE id = ?", (text, turn))

    def finish_turn(self, turn: int, status: str, stop_reason: str | None, stats: dict[str, Any]) -> None:
        """Record how a turn ended and what it cost."""
        if status not in TURN_STATUSES:
            raise ValueError(f"unknown turn status {status!r}")
        with transaction(self.path) as db:
            db.execute(
                "UPDATE turns SET status = ?, stop_reason = ?, stats_json = ?, finished_at = ?, partial_text = '' "
                "WHERE id = ?",
                (status, stop_reason, json.dumps(stats), time.time(), turn),
            )

    def recover_interrupted(self) -> int:
        """Close the turns that ended processes left ``generating``: keep their partial answer, marked.

        A turn whose process still runs (another instance, streaming) is left alone.
        Returns how many turns were recovered.
        """
        with reading(self.path) as db:
            rows = db.execute("SELECT DISTINCT instance FROM turns WHERE status = 'generating'").fetchall()
        owners = [row["instance"] for row in rows if row["instance"] != self.instance.id]
        folder = instances_folder(self.path)
        recovered = 0
        for owner in owners:
            if owner is None:  # written before turns had owners
                recovered += self._recover(None)
                continue
            with if_gone(folder, owner) as gone:
                if gone:
                    recovered += self._recover(owner)
        sweep(folder, keep=self.instance.id)
        return recovered

    def _recover(self, owner: str | None) -> int:
        with transaction(self.path) as db:
            rows = db.execute(
                "SELECT id, conversation_id, partial_text FROM turns WHERE status = 'generating' AND instance IS ?",
                (owner,),
            )
            recovered = rows.fetchall()
            for row in recovered:
                if row["partial_text"]:
                    message = Message.from_role_and_content(Role.ASSISTANT, row["partial_text"]).with_channel("final")
                    cursor = db.execute(
                        "INSERT INTO messages (conversation_id, turn_id, role, channel, recipient, is_analysis, text, "
                        "message_json, created_at) VALUES (?, ?, 'assistant', 'final', NULL, 0, ?, ?, ?)",
                        (row["conversation_id"], row["id"], row["partial_text"], message.to_json(), time.time()),
                    )
                    db.execute(
                        "INSERT INTO search (text, conversation_id, message_id) VALUES (?, ?, ?)",
                        (fold(row["partial_text"]), row["conversation_id"], cursor.lastrowid),
                    )
                db.execute(
                    "UPDATE turns SET status = 'interrupted', finished_at = ?, partial_text = '' WHERE id = ?",
                    (time.time(), row["id"]),
                )
        return len(recovered)

    def list_conversations(self, limit: int = 200) -> list[ConversationSummary]:
        """The newest conversations first."""
        with reading(self.path) as db:
            rows = db.execute(
                "SELECT c.*, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id "
                "AND m.kind = 'message') AS count FROM conversations c ORDER BY updated_at DESC, id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            ConversationSummary(
                r["id"], r["title"] or "(empty)", r["created_at"], r["updated_at"], r["model"], r["count"]
            )
            for r in rows
        ]

    def latest(self) -> int | None:
        """The most recently updated conversation."""
        found = self.list_conversations(limit=1)
        return found[0].id if found else None

    def load(self, conversation_id: int) -> StoredConversation:
        """Read a whole conversation.

        Raises:
            HistoryError: if there is no such conversation.
        """
        with reading(self.path) as db:
            row = db.execute("SELECT * FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
            if row is None:
                raise HistoryError(f"no conversation {conversation_id} in the history")
            stored = StoredConversation(
                row["id"],
                row["title"],
                row["model"],
                row["created_at"],
                json.loads(row["settings_json"]),
                updated_at=row["updated_at"],
            )
            for message in db.execute(
                "SELECT * FROM messages WHERE conversation_id = ? ORDER BY id", (conversation_id,)
            ):
                if message["kind"] == "summary":
                    figures = json.loads(message["meta_json"])
                    stored.summaries.append(StoredSummary(message["id"], message["turn_id"], message["text"], figures))
                    continue
                stored.messages.append(Message.from_dict(json.loads(message["message_json"])))
                stored.message_turns.append(message["turn_id"])
                stored.message_analysis.append(bool(message["is_analysis"]))
                stored.message_ids.append(int(message["id"]))
                stored.message_meta.append(json.loads(message["meta_json"]))
                stored.message_times.append(float(message["created_at"]))
            for turn in db.execute("SELECT * FROM turns WHERE conversation_id = ? ORDER BY id", (conversation_id,)):
                stored.turns.append(
                    TurnRow(
                        turn["id"],
                        turn["model"],
                        turn["effort"],
                        turn["status"],
                        turn["stop_reason"],
                        json.loads(turn["stats_json"]),
                        turn["partial_text"],
                        turn["started_at"],
                        turn["finished_at"],
                    )
                )
        return stored

    def search(self, query: str, limit: int = 50) -> list[ConversationHit]:
        """Search user messages, answers and reasoning summaries for every word of ``query``, in any script.

        Each conversation appears once, with its best-matching message. Words of three characters or
        more use the trigram index; shorter ones (``東京``, ``ok``) are looked for in every indexed message.
        """
        terms = query_terms(query)
        if not terms:
            return []
        long_terms = [term for term in terms if len(term) >= 3]
        short_terms = [term for term in terms if len(term) < 3]
        conditions: list[str] = []
        values: list[str | int] = []
        if long_terms:
            conditions.append("search MATCH ?")
            values.append(" ".join('"' + term.replace('"', '""') + '"' for term in long_terms))
        for term in short_terms:
            conditions.append("instr(s.text, ?) > 0")
            values.append(term)
        order = "rank" if long_terms else "s.rowid DESC"
        with reading(self.path) as db:
            rows = db.execute(
                "SELECT s.conversation_id AS id, c.title AS title, m.text AS text FROM search s "
                "JOIN conversations c ON c.id = s.conversation_id JOIN messages m ON m.id = s.message_id "
                f"WHERE {' AND '.join(conditions)} ORDER BY {order} LIMIT ?",
                (*values, limit * 10),
            ).fetchall()
        best: dict[int, ConversationHit] = {}
        for row in rows:  # best match first; one hit per conversation
            if int(row["id"]) not in best:
                snippet, highlights = make_snippet(row["text"], terms)
                best[int(row["id"])] = ConversationHit(int(row["id"]), row["title"], snippet, highlights)
        return list(best.values())[:limit]

    def rename(self, conversation_id: int, title: str) -> None:
        """Give a conversation another title (kept from now on, whatever its first message becomes)."""
        with transaction(self.path) as db:
            changed = db.execute(
                "UPDATE conversations SET title = ?, title_custom = 1 WHERE id = ?", (title, conversation_id)
            ).rowcount
            if changed == 0:
                raise HistoryError(f"no conversation {conversation_id} in the history")

    def delete(self, conversation_id: int) -> None:
        """Delete a conversation with its messages, turns and search entries."""
        with transaction(self.path) as db:
            db.execute("DELETE FROM search WHERE conversation_id = ?", (conversation_id,))
            if db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,)).rowcount == 0:
                raise HistoryError(f"no conversation {conversation_id} in the history")

    def drop_exchange(self, conversation_id: int, user_message: int, keep_user: bool) -> None:
        """Forget what followed ``user_message``, and the message too unless ``keep_user``.

        Its messages, their search entries and the turns started since go; the automatic title
        follows the first user message left.
        """
        cutoff = user_message if keep_user else user_message - 1
        with transaction(self.path) as db:
            row = db.execute("SELECT created_at FROM messages WHERE id = ?", (user_message,)).fetchone()
            db.execute(
                "DELETE FROM search WHERE conversation_id = ? AND CAST(message_id AS INTEGER) > ?",
                (conversation_id, cutoff),
            )
            db.execute("DELETE FROM messages WHERE conversation_id = ? AND id > ?", (conversation_id, cutoff))
            if row is not None:
                db.execute(
                    "DELETE FROM turns WHERE conversation_id = ? AND started_at >= ?",
                    (conversation_id, row["created_at"]),
                )
            first = db.execute(
                "SELECT text FROM messages WHERE conversation_id = ? AND role = 'user' ORDER BY id LIMIT 1",
                (conversation_id,),
            ).fetchone()
            db.execute(
                "UPDATE conversations SET title = ? WHERE id = ? AND title_custom = 0",
                (auto_title(first["text"]) if first else "", conversation_id),
            )

    def import_messages(self, messages: list[Message], settings: dict[str, Any], model: str = "imported") -> int:
        """Store messages of an imported conversation; return its id."""
        conversation_id = self.create_conversation(settings, model)
        for message in messages:
            self.add_message(conversation_id, message)
        return conversation_id
