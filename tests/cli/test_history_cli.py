"""``harmony-chat history`` and the history options, end to end."""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding, Message, Role

from harmony_chat.cli import main
from harmony_chat.cli.history import NOT_DELETED_EXIT_CODE
from harmony_chat.harmony.session import ChatSession
from harmony_chat.history.recording import session_settings
from harmony_chat.history.store import HistoryStore


@pytest.fixture
def db(tmp_path: Path, encoding: HarmonyEncoding) -> tuple[Path, int]:
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    session = ChatSession(encoding, start_date="2026-03-04")
    session.add_user("Où est la gare? 駅はどこ")
    conversation = store.create_conversation(session_settings(session), "pocket")
    store.add_message(conversation, session.history[-1])
    return path, conversation


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_show_search(capsys: pytest.CaptureFixture[str], db: tuple[Path, int]) -> None:
    path, conversation = db
    code, out, _ = run(capsys, "history", "list", "--history-db", str(path))
    assert code == 0 and out.startswith(f"{conversation}\t") and "Où est la gare?" in out and "pocket" in out
    code, out, _ = run(capsys, "history", "show", str(conversation), "--history-db", str(path))
    assert code == 0 and "## You\n\nOù est la gare? 駅はどこ" in out
    code, out, _ = run(capsys, "history", "search", "gare", "--history-db", str(path))
    assert code == 0 and out.startswith(f"{conversation}\t")
    code, out, err = run(capsys, "history", "search", "nothing-like-this", "--history-db", str(path))
    assert code == 0 and out == "" and "no conversation mentions" in err


@pytest.mark.parametrize(
    ("fmt", "needle"),
    [("md", "## You"), ("json", '"harmony_chat"'), ("harmony", "<|start|>user<|message|>Où est la gare?")],
)
def test_export_formats(
    capsys: pytest.CaptureFixture[str], db: tuple[Path, int], tmp_path: Path, fmt: str, needle: str
) -> None:
    path, conversation = db
    out_file = tmp_path / f"out.{fmt}"
    code, _, _ = run(
        capsys,
        "history",
        "export",
        str(conversation),
        "--format",
        fmt,
        "--out",
        str(out_file),
        "--history-db",
        str(path),
    )
    assert code == 0 and needle in out_file.read_text()


def test_import_then_delete(
    capsys: pytest.CaptureFixture[str], db: tuple[Path, int], tmp_path: Path, encoding: HarmonyEncoding
) -> None:
    path, _ = db
    session = ChatSession(encoding)
    session.add_user("imported question")
    file = tmp_path / "conv.json"
    session.save(file)
    code, out, _ = run(capsys, "history", "import", str(file), "--history-db", str(path))
    new_id = int(out)
    assert code == 0 and HistoryStore(path).load(new_id).title == "imported question"
    code, _, _ = run(capsys, "history", "delete", str(new_id), "--yes", "--history-db", str(path))
    assert code == 0 and [row.id for row in HistoryStore(path).list_conversations()] != [new_id]


@pytest.mark.parametrize("command", ["export", "import"])
def test_history_commands_offline_take_the_vocabulary_from_the_shipped_pocket_gguf(
    capsys: pytest.CaptureFixture[str],
    db: tuple[Path, int],
    tmp_path: Path,
    encoding: HarmonyEncoding,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    """A fresh process with no cached vocabulary and no network: the command passes the pocket GGUF as fallback."""
    from harmony_chat.harmony import vocab

    path, conversation = db
    file = tmp_path / "conv.json"
    session = ChatSession(encoding)
    session.add_user("imported question")
    session.save(file)

    def offline(folder: Path) -> Path:
        raise RuntimeError("failed to download or load vocab file\n(offline)")

    monkeypatch.setattr(vocab, "_encoding", None)  # as in a fresh process
    monkeypatch.setattr(vocab, "_download", offline)
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(tmp_path / "empty"))
    monkeypatch.setenv("HARMONY_CHAT_CACHE_DIR", str(tmp_path / "cache"))
    args = ["export", str(conversation), "--format", "json"] if command == "export" else ["import", str(file)]
    code, out, err = run(capsys, "history", *args, "--history-db", str(path))
    assert code == 0, err
    assert '"harmony_chat"' in out if command == "export" else int(out) > conversation
    assert (tmp_path / "cache" / "vocab" / vocab.VOCAB_FILE).is_file()


def test_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], db: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("harmony_chat.cli.root._require_terminal", lambda: None)  # the app's history errors
    path, _ = db
    code, _, err = run(capsys, "history", "show", "999", "--history-db", str(path))
    assert code == 1 and err == "error: no conversation 999 in the history\n"
    code, _, err = run(capsys, "history", "export", "1", "--format", "pdf", "--history-db", str(path))
    assert code == 2 and "unknown format 'pdf'" in err and err.count("\n") == 1
    broken = tmp_path / "broken.sqlite3"
    broken.write_text("garbage")
    code, _, err = run(capsys, "--history-db", str(broken))
    assert code == 1 and "is not an SQLite database" in err and err.count("\n") == 1
    empty = tmp_path / "empty.sqlite3"
    code, _, err = run(capsys, "--continue", "--history-db", str(empty))
    assert code == 2 and "no conversation to continue" in err
    code, _, err = run(capsys, "--resume", "abc", "--history-db", str(path))
    assert code == 2 and "--resume takes a conversation id" in err


@pytest.mark.parametrize(
    "command",
    [["list"], ["show", "{id}"], ["search", "gare"], ["export", "{id}", "--format", "md"], ["delete"], ["import"]],
)
@pytest.mark.parametrize("root", ["--config", "--history-db"])
def test_root_options_choose_the_database_of_every_history_command(
    capsys: pytest.CaptureFixture[str],
    db: tuple[Path, int],
    tmp_path: Path,
    encoding: HarmonyEncoding,
    command: list[str],
    root: str,
) -> None:
    path, conversation = db
    config = tmp_path / "config.toml"
    config.write_text(f'[history]\npath = "{path.as_posix()}"\n', encoding="utf-8")
    chosen = str(config if root == "--config" else path)
    if command == ["delete"]:
        command = ["delete", str(conversation), "-y"]
    elif command == ["import"]:
        session = ChatSession(encoding)
        session.add_user("imported question")
        session.save(tmp_path / "conv.json")
        command = ["import", str(tmp_path / "conv.json")]
    code, out, err = run(capsys, root, chosen, "history", *[part.format(id=conversation) for part in command])
    assert code == 0, err
    titles = [row.title for row in HistoryStore(path).list_conversations()]
    if command[0] == "delete":
        assert titles == []
    elif command[0] == "import":
        assert titles == ["imported question", "Où est la gare? 駅はどこ"]
    else:
        assert "Où est la gare?" in out


def test_another_applications_database_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE foo (x)")
    connection.close()
    before = other.read_bytes()
    code, out, err = run(capsys, "history", "list", "--history-db", str(other))
    assert (code, out) == (1, "") and err.count("\n") == 1 and "is not a harmony-chat history" in err
    assert other.read_bytes() == before


def test_a_bad_data_location_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = run(capsys, "history", "list", "--history-db", str(tmp_path))
    assert code == 1 and err == f"error: cannot keep the history in {tmp_path}: it is a directory\n"
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(blocker / "data"))
    code, _, err = run(capsys, "history", "list")
    assert code == 1 and err.startswith("error: cannot keep the history in ") and err.count("\n") == 1


def test_the_app_chats_with_history_off_where_none_can_be_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[object, ...]] = []
    monkeypatch.setattr("harmony_chat.tui.app.run_tui", lambda *args: started.append(args))
    monkeypatch.setattr("harmony_chat.cli.root._require_terminal", lambda: None)  # capsys is not a terminal
    code, _, err = run(capsys, "--replay-demo", "--history-db", str(tmp_path))
    assert (code, err) == (0, "")
    ((_, history, _, history_off),) = started
    assert history is None and history_off == f"cannot keep the history in {tmp_path}: it is a directory"
    code, _, err = run(capsys, "--continue", "--history-db", str(tmp_path))  # resuming needs the history
    assert code == 1 and "is a directory" in err and err.count("\n") == 1 and len(started) == 1


ESCAPES = "\x1b]0;owned\x07\x1b[2K\x9b2J"
"""Retitle the terminal, erase the line, and (C1 CSI) erase the screen."""
SHOWN = "␛]0;owned␇␛[2K�2J"


@pytest.fixture
def escaping(tmp_path: Path, encoding: HarmonyEncoding) -> tuple[Path, int]:
    """A conversation whose question, answer and model name hold escape sequences."""
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    session = ChatSession(encoding, start_date="2026-03-04")
    session.add_user(f"gare {ESCAPES} question")
    conversation = store.create_conversation(session_settings(session), f"model{ESCAPES}")
    store.add_message(conversation, session.history[-1])
    answer = Message.from_role_and_content(Role.ASSISTANT, f"gare {ESCAPES} answer").with_channel("final")
    store.add_message(conversation, answer)
    return path, conversation


@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["show", "{id}"],
        ["search", "gare"],
        ["export", "{id}"],
        ["export", "{id}", "--format", "md"],
        ["export", "{id}", "--format", "harmony"],
        ["export", "{id}", "--format", "json"],
    ],
)
def test_history_text_on_stdout_holds_no_control_character(
    capsys: pytest.CaptureFixture[str], escaping: tuple[Path, int], command: list[str]
) -> None:
    path, conversation = escaping
    code, out, err = run(
        capsys, "history", *[part.format(id=conversation) for part in command], "--history-db", str(path)
    )
    assert code == 0, err
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out + err)
    if "json" in command:  # JSON keeps the exact text, escaped
        data = json.loads(out)
        assert data["harmony_chat"]["title"] == f"gare {ESCAPES} question"
        assert [m["content"][0]["text"] for m in data["messages"] if m["role"] != "system"][-1] == (
            f"gare {ESCAPES} answer"
        )
    else:
        assert f"gare {SHOWN} question" in out
        assert command[0] == "list" or f"gare {SHOWN} answer" in out
        assert command[0] != "list" or f"model{SHOWN}" in out


@pytest.mark.parametrize("fmt", ["md", "harmony"])
def test_export_to_a_file_keeps_the_exact_text(
    capsys: pytest.CaptureFixture[str], escaping: tuple[Path, int], tmp_path: Path, fmt: str
) -> None:
    path, conversation = escaping
    target = tmp_path / f"out.{fmt}"
    args = ["history", "export", str(conversation), "--format", fmt, "--out", str(target), "--history-db", str(path)]
    code, out, err = run(capsys, *args)
    assert (code, out, err) == (0, "", "")
    assert f"gare {ESCAPES} answer" in target.read_text(encoding="utf-8")


def test_delete_asks_with_the_title_as_symbols(
    capsys: pytest.CaptureFixture[str], escaping: tuple[Path, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, conversation = escaping
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code, _, err = run(capsys, "history", "delete", str(conversation), "--history-db", str(path))
    assert code == NOT_DELETED_EXIT_CODE
    assert f"Delete conversation {conversation} (gare {SHOWN} question)? [y/N]" in err
    assert "\x1b" not in err and "\x07" not in err and "\x9b" not in err


def test_export_into_a_missing_folder_or_onto_a_folder_is_one_line(
    capsys: pytest.CaptureFixture[str], db: tuple[Path, int], tmp_path: Path
) -> None:
    path, conversation = db
    missing = tmp_path / "no-such-folder" / "chat.md"
    code, _, err = run(capsys, "history", "export", str(conversation), "--out", str(missing), "--history-db", str(path))
    assert (code, err) == (1, f"error: cannot write {missing}: there is no folder {missing.parent}\n")
    code, _, err = run(
        capsys, "history", "export", str(conversation), "--out", str(tmp_path), "--history-db", str(path)
    )
    assert (code, err) == (1, f"error: cannot write {tmp_path}: it is a folder\n")


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_an_export_is_private(capsys: pytest.CaptureFixture[str], db: tuple[Path, int], tmp_path: Path) -> None:
    path, conversation = db
    old = os.umask(0o022)
    try:
        fresh, existing = tmp_path / "fresh.md", tmp_path / "existing.md"
        existing.write_text("an older export")
        existing.chmod(0o644)
        for out in (fresh, existing):
            code, _, err = run(
                capsys, "history", "export", str(conversation), "-o", str(out), "--history-db", str(path)
            )
            assert (code, err) == (0, "")
            assert stat.S_IMODE(out.stat().st_mode) == 0o600 and "Où est la gare?" in out.read_text()
    finally:
        os.umask(old)


@pytest.mark.parametrize(("answer", "deleted"), [("", False), ("n\n", False), ("maybe\n", False), ("y\n", True)])
def test_delete_asks_and_only_yes_deletes(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    db: tuple[Path, int],
    answer: str,
    deleted: bool,
) -> None:
    """Standard input at its end used to print ``interrupted`` (exit 130); ``n`` exited 1 without a word."""
    path, conversation = db
    monkeypatch.setattr("sys.stdin", io.StringIO(answer))
    code, out, err = run(capsys, "history", "delete", str(conversation), "--history-db", str(path))
    left = [row.id for row in HistoryStore(path).list_conversations()]
    question = f"Delete conversation {conversation} (Où est la gare? 駅はどこ)? [y/N] "
    if deleted:
        done = f"deleted conversation {conversation} (Où est la gare? 駅はどこ)\n"
        assert (code, out, err, left) == (0, "", question + done, [])
    else:
        kept = f"not deleted: conversation {conversation} is kept (--yes deletes without asking)\n"
        assert (code, out, err, left) == (
            NOT_DELETED_EXIT_CODE,
            "",
            question + "\n" * (not answer) + kept,
            [conversation],
        )
        assert NOT_DELETED_EXIT_CODE not in (0, 1, 2, 130)


def test_ids_beyond_sqlite_are_refused_in_one_line(capsys: pytest.CaptureFixture[str], db: tuple[Path, int]) -> None:
    path, _ = db
    huge = str(2**70)
    for command in (["history", "show", huge], ["history", "delete", huge, "--yes"], ["--resume", huge]):
        code, _, err = run(capsys, *command, "--history-db", str(path))
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, command


def test_deeply_nested_json_is_one_line(
    capsys: pytest.CaptureFixture[str], db: tuple[Path, int], tmp_path: Path
) -> None:
    """100,000 nested arrays raised RecursionError out of every JSON reader."""
    path, _ = db
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    code, _, err = run(capsys, "history", "import", str(deep), "--history-db", str(path))
    assert (code, err) == (1, f"error: {deep} is not a harmony conversation: its JSON nests too deeply\n")
    answer = tmp_path / "answer.txt"
    answer.write_text("<|channel|>final<|message|>Hi.<|return|>\n")
    code, _, err = run(capsys, "ask", "--replay", str(answer), "--conversation", str(deep), "hi")
    assert (code, err) == (1, f"error: {deep} is not a harmony conversation: its JSON nests too deeply\n")
    code, _, err = run(capsys, "ask", "--replay", str(answer), "--mcp-config", str(deep), "hi")
    assert (code, err) == (1, f"error: {deep}: not valid MCP JSON (it nests too deeply)\n")
    code, _, err = run(capsys, "ask", "--replay", str(deep), "hi")
    assert (code, err) == (1, f"error: {deep} must hold a list of token ids per turn; it nests too deeply\n")
