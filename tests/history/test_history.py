"""The SQLite history: round trips, analysis policy, resume, search, exports, damage, concurrency."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding, Message, Role, ToolDescription

from harmony_chat.backends.base import GenerationStats
from harmony_chat.cli import main
from harmony_chat.generation.turn import TurnStats
from harmony_chat.harmony.events import StopReason
from harmony_chat.harmony.session import ChatSession, TurnRecord
from harmony_chat.history.db import HistoryError
from harmony_chat.history.export import to_harmony, to_json, to_markdown
from harmony_chat.history.link import ConversationLink
from harmony_chat.history.recording import TurnRecorder, resume_session, session_settings
from harmony_chat.history.store import HistoryStore
from tests.helpers import decode, ids

ROOT = Path(__file__).resolve().parents[2]
TOOL = ToolDescription.new("get_weather", "Weather.", parameters={"type": "object", "properties": {}})
TURN = (
    "<|channel|>analysis<|message|>secret reasoning about café<|end|><|start|>assistant<|channel|>commentary"
    "<|message|>One moment.<|end|><|start|>assistant<|channel|>final<|message|>Tōkyō is sunny, 天気 晴れ.<|return|>"
)


def record_turn(store: HistoryStore, conversation: int, session: ChatSession, encoding: HarmonyEncoding) -> None:
    recorder = TurnRecorder(store, conversation, "tiny", session.effort)
    result = decode(encoding, ids(encoding, TURN))
    for event in result.events:
        recorder.on_event(event)
    stats = TurnStats(StopReason.RETURN, session.effort, GenerationStats(80, 20, 30, 0.5, 1.5))
    recorder.finish(stats)
    session.add_assistant_turn(result.messages, TurnRecord(session.effort, "return"))


@pytest.fixture
def chat(tmp_path: Path, encoding: HarmonyEncoding) -> tuple[HistoryStore, int, ChatSession]:
    store = HistoryStore(tmp_path / "history.sqlite3")
    session = ChatSession(encoding, effort="high", instructions="Be kind.", functions=[TOOL], start_date="2026-01-02")
    conversation = store.create_conversation(session_settings(session), "tiny")
    session.add_user("Weather in Tōkyō? café 東京")
    store.add_message(conversation, session.history[-1])
    record_turn(store, conversation, session, encoding)
    return store, conversation, session


def test_every_field_round_trips(chat: tuple[HistoryStore, int, ChatSession]) -> None:
    store, conversation, session = chat
    stored = store.load(conversation)
    assert stored.title == "Weather in Tōkyō? café 東京" and stored.model == "tiny"
    assert stored.settings == {
        "effort": "high",
        "instructions": "Be kind.",
        "functions": [TOOL.model_dump()],
        "start_date": "2026-01-02",
        "builtin": [],
    }
    assert stored.functions == [TOOL]
    kept = [m for m in session.history if m.channel != "analysis"]
    assert stored.messages == kept
    (turn,) = stored.turns
    assert (turn.model, turn.effort, turn.status, turn.stop_reason) == ("tiny", "high", "complete", "return")
    assert turn.stats["prompt_tokens"] == 80 and turn.stats["generated_tokens"] == 30 and turn.finished_at
    assert stored.message_turns == [None, turn.id, turn.id]


def test_analysis_is_only_stored_when_asked(tmp_path: Path, encoding: HarmonyEncoding) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3", store_analysis=True)
    session = ChatSession(encoding)
    conversation = store.create_conversation(session_settings(session))
    session.add_user("q")
    store.add_message(conversation, session.history[-1])
    record_turn(store, conversation, session, encoding)
    stored = store.load(conversation)
    assert stored.message_analysis == [False, True, False, False]
    assert "secret reasoning" in to_markdown(stored, with_reasoning=True)
    assert "Reasoning (raw chain of thought" in to_markdown(stored, with_reasoning=True)
    assert "secret reasoning" not in to_markdown(stored)
    assert store.search("secret") == []


def test_resume_keeps_the_prompt_prefix(chat: tuple[HistoryStore, int, ChatSession], encoding: HarmonyEncoding) -> None:
    store, conversation, session = chat
    resumed = resume_session(encoding, store.load(conversation), None)
    for each in (session, resumed):
        each.add_user("And tomorrow?")
    assert resumed.render().tokens == session.render().tokens
    assert resumed.start_date == "2026-01-02" and resumed.function_names == ["get_weather"]


def test_search_covers_user_messages_and_finals_with_non_ascii(chat: tuple[HistoryStore, int, ChatSession]) -> None:
    store, conversation, _ = chat
    for query in ("東京", "tokyo", "cafe", "晴れ", "sunny"):
        assert [hit.conversation_id for hit in store.search(query)] == [conversation], query
    assert store.search("moment") == []  # preambles are not indexed
    assert store.search("reasoning") == []
    assert store.search('"') == [] and store.search("") == []


def test_exports(chat: tuple[HistoryStore, int, ChatSession], encoding: HarmonyEncoding, tmp_path: Path) -> None:
    store, conversation, _ = chat
    stored = store.load(conversation)
    markdown = to_markdown(stored)
    assert "## You\n\nWeather in Tōkyō?" in markdown and "## Assistant\n\nTōkyō is sunny" in markdown
    assert "*One moment.*" in markdown and "café<" not in markdown
    data = json.loads(to_json(stored, encoding))
    assert data["harmony_chat"]["turns"][0]["effort"] == "high"
    assert [m["role"] for m in data["messages"]][:3] == ["system", "developer", "user"]
    path = tmp_path / "exported.json"
    path.write_text(to_json(stored, encoding))
    assert ChatSession.load(encoding, path).history == stored.messages
    harmony = to_harmony(stored, encoding)
    assert harmony.startswith("<|start|>system<|message|>") and "Current date: 2026-01-02" in harmony
    assert "<|channel|>final<|message|>Tōkyō is sunny, 天気 晴れ.<|end|>" in harmony


def test_rename_delete_and_list(chat: tuple[HistoryStore, int, ChatSession]) -> None:
    store, conversation, _ = chat
    store.rename(conversation, "Weather chat")
    rows = [(row.id, row.title, row.messages) for row in store.list_conversations()]
    assert rows == [(conversation, "Weather chat", 3)]
    assert store.latest() == conversation
    store.delete(conversation)
    assert store.list_conversations() == [] and store.search("sunny") == []
    with pytest.raises(HistoryError, match="no conversation"):
        store.load(conversation)


@pytest.mark.parametrize("content", [b"this is not a database", b"SQLite format 3\x00" + b"\x00" * 100 + b"junk" * 500])
def test_damaged_database_is_refused_and_left_alone(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_bytes(content)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(HistoryError, match="left untouched"):
        HistoryStore(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    HistoryStore(path)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(HistoryError, match="newer harmony-chat"):
        HistoryStore(path)


WRITER = """
import sys
from openai_harmony import Message, Role
from harmony_chat.history.store import HistoryStore
store = HistoryStore(__import__("pathlib").Path(sys.argv[1]))
conversation = store.create_conversation({"effort": "low"}, sys.argv[2])
for n in range(int(sys.argv[3])):
    store.add_message(conversation, Message.from_role_and_content(Role.USER, f"{sys.argv[2]} message {n}"))
print(conversation)
"""


def test_two_processes_write_at_once(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    HistoryStore(path)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name, "150"], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        for name in ("alpha", "beta")
    ]
    results = [int(writer.communicate(timeout=120)[0]) for writer in writers]
    assert all(writer.returncode == 0 for writer in writers)
    store = HistoryStore(path)
    assert sorted(len(store.load(c).messages) for c in results) == [150, 150]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


GENERATOR = """
import sys, time
from pathlib import Path
from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.harmony.session import ChatSession
from harmony_chat.demo.pocket import pocket_model_path
from harmony_chat.harmony.vocab import load_encoding
from harmony_chat.history.store import HistoryStore
from harmony_chat.tui.generation import GenerationRun
encoding = load_encoding(fallback_gguf=pocket_model_path())
store = HistoryStore(Path(sys.argv[1]))
story = "<|channel|>final<|message|>" + "Once upon a time. " * 400 + "<|return|>"
answer = encoding.encode(story, allowed_special="all")
backend = ReplayBackend(turns=[answer], delay_s=0.005)
backend.load()
chat = ChatConversation(ChatSession(encoding, effort="low"), backend, store=store, model_name="replay")
events = chat.send("Tell me a long story")
next(events)  # the question is stored before the first event
print("generating", flush=True)
GenerationRun(1, lambda message: None).run(events, chat)
"""


def test_killed_mid_answer_keeps_the_question_and_the_partial_answer(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    process = subprocess.Popen(
        [sys.executable, "-c", GENERATOR, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "generating"
    time.sleep(2.5)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = HistoryStore(path)
    (conversation,) = store.list_conversations()
    assert store.load(conversation.id).messages[0].content[0].text == "Tell me a long story"
    assert store.load(conversation.id).turns[0].status == "generating"
    assert store.recover_interrupted() == 1
    stored = store.load(conversation.id)
    assert stored.turns[0].status == "interrupted"
    partial = stored.messages[-1]
    assert partial.author.role == Role.ASSISTANT and partial.channel == "final"
    assert partial.content[0].text.startswith("Once upon a time.")
    assert store.recover_interrupted() == 0


def test_the_title_follows_an_edit_of_the_first_message(tmp_path: Path, encoding: HarmonyEncoding) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    session = ChatSession(encoding)
    link = ConversationLink(store)
    session.add_user("What is 2 + 3?")
    link.record_user(session, "What is 2 + 3?", "tiny")
    record_turn(store, link.conversation_id or 0, session, encoding)
    link.drop_last_exchange(keep_user=False)  # /edit of the first (and only) message
    link.record_user(session, "What is 2 + 2?", "tiny")
    (row,) = store.list_conversations()
    assert row.title == "What is 2 + 2?"
    assert [hit.conversation_id for hit in store.search("2 + 3")] == []
    store.rename(row.id, "Sums")
    link.drop_last_exchange(keep_user=False)
    link.record_user(session, "What is 2 + 5?", "tiny")
    assert store.load(row.id).title == "Sums"  # a title the user chose stays


def test_only_the_store_speaks_sql() -> None:
    allowed = {ROOT / "harmony_chat" / "history" / name for name in ("store.py", "db.py")}
    allowed.add(ROOT / "harmony_chat" / "server" / "response_store.py")  # serve's own store: responses, conversations
    for path in (ROOT / "harmony_chat").rglob("*.py"):
        if path in allowed:
            continue
        text = path.read_text(encoding="utf-8")
        assert ".execute(" not in text and ".executescript(" not in text, path
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module == "harmony_chat.history.db":
                assert not {alias.name for alias in node.names} & {"reading", "transaction"}, path


def test_turns_that_did_not_end_on_their_own_are_marked_in_show_and_markdown(
    chat: tuple[HistoryStore, int, ChatSession], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """As the app's "■ stopped" footer: a stopped answer, and a turn stopped before it wrote anything."""
    store, conversation, session = chat
    session.add_user("Tell me a long story")
    store.add_message(conversation, session.history[-1])
    stopped = store.begin_turn(conversation, "tiny", "high")
    partial = Message.from_role_and_content(Role.ASSISTANT, "Once upon a").with_channel("final")
    store.add_message(conversation, partial, turn=stopped)
    store.finish_turn(stopped, "stopped", "cancelled", {})
    session.add_user("Never mind")
    store.add_message(conversation, session.history[-1])
    silent = store.begin_turn(conversation, "tiny", "high")
    store.finish_turn(silent, "stopped", "cancelled", {})
    markdown = to_markdown(store.load(conversation))
    assert "## Assistant\n\nOnce upon a\n\n*■ stopped*\n\n## You\n\nNever mind\n\n*■ stopped*\n" in markdown
    assert (
        markdown.count("■ stopped") == 2 and "Tōkyō is sunny, 天気 晴れ.\n\n## You" in markdown
    )  # the first ended well
    assert main(["history", "show", str(conversation), "--history-db", str(tmp_path / "history.sqlite3")]) == 0
    assert capsys.readouterr().out.count("*■ stopped*") == 2


def test_one_conversation_shows_one_time_everywhere(
    chat: tuple[HistoryStore, int, ChatSession], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``history list``, the app's history panel and the Markdown export: the last change, in the user's zone."""
    from harmony_chat.history.text import local_time
    from harmony_chat.tui.screens.history import list_rows

    store, conversation, _ = chat
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # a half-hour zone: a UTC clock would show other minutes
    time.tzset()
    try:
        with sqlite3.connect(store.path) as db:
            db.execute("UPDATE conversations SET created_at = 1767225600.0, updated_at = 1767225779.9")
        shown = "2026-01-01 05:32"  # 00:02:59.9 UTC: 05:32 in Kolkata, cut to the minute
        assert local_time(1767225779.9) == shown
        assert main(["history", "list", "--history-db", str(store.path)]) == 0
        assert f"\t{shown}\t" in capsys.readouterr().out
        assert f"  {shown}  " in str(list_rows(store, "")[0][1])
        assert f"*{shown} · " in to_markdown(store.load(conversation))
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
