"""Without a terminal the chat app says so in one line and points to ``ask`` (it used to spin unseen)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _chat_app(stdin: int, stdout: int, stderr: int) -> subprocess.CompletedProcess[bytes]:
    # A hung TUI is killed by the timeout and fails the test; the fixed app exits at once.
    return subprocess.run(
        [sys.executable, "-m", "harmony_chat", "--demo", "--no-history"],
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=ROOT,
        timeout=60,
    )


def test_stdout_redirected_to_a_file(tmp_path: Path) -> None:
    """``harmony-chat > out.log`` from a terminal."""
    leader, follower = pty.openpty()
    log = tmp_path / "out.log"
    try:
        with log.open("wb") as out:
            result = _chat_app(stdin=follower, stdout=out.fileno(), stderr=subprocess.PIPE)
    finally:
        os.close(leader)
        os.close(follower)
    error = result.stderr.decode()
    assert result.returncode == 2
    assert error.count("\n") == 1 and error.startswith("error: the chat app needs a terminal, but stdout is not one")
    assert "harmony-chat ask" in error and "Traceback" not in error
    assert log.read_bytes() == b""


def test_no_terminal_at_all() -> None:
    result = _chat_app(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode().startswith("error: the chat app needs a terminal, but stdin and stdout are not")


def test_a_run_that_cannot_start_creates_nothing(tmp_path: Path) -> None:
    """No history file, no folder: the refusal comes before the history is opened."""
    data = tmp_path / "data"
    env = dict(os.environ, HARMONY_CHAT_DATA_DIR=str(data), HOME=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-m", "harmony_chat", "--replay-demo"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2 and b"needs a terminal" in result.stderr
    assert not data.exists()
