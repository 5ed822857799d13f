"""Two harmony-chat processes on one history: start-up recovery leaves the other's live turn alone."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from openai_harmony import Message, Role

from harmony_chat.history.store import HistoryStore

ROOT = Path(__file__).resolve().parents[2]

STREAMER = """
import sys
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
story = "<|channel|>final<|message|>" + "Once upon a time. " * int(sys.argv[2]) + "The end.<|return|>"
backend = ReplayBackend(turns=[encoding.encode(story, allowed_special="all")], delay_s=0.005)
backend.load()
chat = ChatConversation(ChatSession(encoding, effort="low"), backend, store=store, model_name="replay")
GenerationRun(1, lambda message: None).run(chat.send("Tell me a story"), chat)
print("done", flush=True)
"""

RECOVER = """
import sys
from pathlib import Path
from harmony_chat.history.store import HistoryStore
print(HistoryStore(Path(sys.argv[1])).recover_interrupted())
"""


def partial_saved(path: Path) -> bool:
    if not path.exists():
        return False
    try:
        with sqlite3.connect(path) as db:
            row = db.execute("SELECT partial_text FROM turns WHERE status = 'generating'").fetchone()
    except sqlite3.Error:
        return False
    finally:
        db.close()
    return bool(row and row[0])


def wait_for_partial(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not partial_saved(path):
        assert process.poll() is None, "the streaming process ended before saving a partial answer"
        assert time.monotonic() < deadline, "no partial answer saved within 60 s"
        time.sleep(0.1)


def finals(store: HistoryStore) -> list[str]:
    (row,) = store.list_conversations()
    stored = store.load(row.id)
    return [m.content[0].text for m in stored.messages if m.author.role == Role.ASSISTANT and m.channel == "final"]


def test_a_second_instance_leaves_the_first_ones_live_turn_alone(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    first = subprocess.Popen(
        [sys.executable, "-c", STREAMER, str(path), "300"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        wait_for_partial(path, first)
        second = subprocess.run(
            [sys.executable, "-c", RECOVER, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == "0"  # the first instance's turn is live: not "interrupted"
        assert first.communicate(timeout=120)[0].strip() == "done"
    finally:
        first.kill()
    store = HistoryStore(path)
    (answer,) = finals(store)  # one final answer, not the partial text as well
    assert answer.endswith("The end.")
    assert [turn.status for turn in store.load(store.list_conversations()[0].id).turns] == ["complete"]


def test_a_killed_instances_turn_is_recovered_by_the_next_one(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    first = subprocess.Popen(
        [sys.executable, "-c", STREAMER, str(path), "2000"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        wait_for_partial(path, first)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    second = subprocess.run(
        [sys.executable, "-c", RECOVER, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert second.stdout.strip() == "1", second.stderr
    store = HistoryStore(path)
    (answer,) = finals(store)
    assert answer.startswith("Once upon a time.")
    assert store.recover_interrupted() == 0
    assert list((tmp_path / "history.sqlite3.instances").iterdir()) == []  # the dead instance's lock is gone


def test_an_answer_stored_before_the_process_died_is_not_added_twice(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    dying = HistoryStore(path)
    conversation = dying.create_conversation({"effort": "low"})
    dying.add_message(conversation, Message.from_role_and_content(Role.USER, "Hi"))
    turn = dying.begin_turn(conversation, "tiny", "low")
    dying.save_partial(turn, "Hello th")
    assert HistoryStore(path).recover_interrupted() == 0  # its owner is still here
    final = Message.from_role_and_content(Role.ASSISTANT, "Hello there.").with_channel("final")
    dying.add_message(conversation, final, turn)
    dying.close()  # the process ends before it records how the turn ended
    store = HistoryStore(path)
    assert store.recover_interrupted() == 1
    assert finals(store) == ["Hello there."]
    assert store.load(conversation).turns[0].status == "interrupted"
