"""The registry of running servers: ``serve`` lists itself while it runs; dead ones are ignored."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.demo.pocket import POCKET_NAME
from harmony_chat.server.registry import (
    RegisteredServer,
    register,
    running_servers,
    servers_dir,
    unregister,
)
from tests.server.test_serve_cli import ROOT, _free_port


def _dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_registered_server_is_listed_until_it_unregisters(tmp_path: Path) -> None:
    path = register("0.0.0.0", 8123, "gpt-oss-20b", api_key=True, directory=tmp_path)
    assert path == tmp_path / f"{os.getpid()}.json"
    (server,) = running_servers(tmp_path)
    assert (server.pid, server.host, server.port, server.model, server.api_key) == (
        os.getpid(),
        "0.0.0.0",
        8123,
        "gpt-oss-20b",
        True,
    )
    assert abs(server.started - time.time()) < 60
    assert server.url == "http://127.0.0.1:8123/v1"  # a bind on every address is reached on loopback
    assert not [name for name in os.listdir(tmp_path) if name != path.name]  # no partial file left behind
    unregister(path)
    unregister(path)  # twice is harmless
    assert running_servers(tmp_path) == [] and not path.exists()


def test_the_registry_is_private(tmp_path: Path) -> None:
    folder = tmp_path / "servers"
    os.umask(old := os.umask(0))
    try:
        path = register("127.0.0.1", 8124, "gpt-oss-20b", directory=folder)
    finally:
        os.umask(old)
    assert path is not None
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    unregister(path)


def test_a_stale_file_of_a_dead_process_is_ignored_and_removed(tmp_path: Path) -> None:
    dead = _dead_pid()
    stale = tmp_path / f"{dead}.json"
    entry = {"pid": dead, "host": "127.0.0.1", "port": 8000, "model": "m", "started": time.time(), "api_key": False}
    stale.write_text(json.dumps(entry))
    live = register("127.0.0.1", 8001, "m", directory=tmp_path)
    assert [server.port for server in running_servers(tmp_path)] == [8001]
    assert not stale.exists() and live is not None and live.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process start times are read from /proc")
def test_a_file_whose_pid_was_reused_by_a_newer_process_is_ignored(tmp_path: Path) -> None:
    long_ago = time.time() - 30 * 24 * 3600  # before this test's process started
    entry = {"pid": os.getpid(), "host": "127.0.0.1", "port": 8000, "model": "m", "started": long_ago}
    (tmp_path / f"{os.getpid()}.json").write_text(json.dumps(entry))
    assert running_servers(tmp_path) == []


def test_unreadable_or_foreign_files_are_skipped_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "garbage.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"pid": "x"}))
    (tmp_path / "notes.txt").write_text("hello")
    register("::", 9000, "m", directory=tmp_path)
    (server,) = running_servers(tmp_path)
    assert server.url == "http://[::1]:9000/v1"
    assert (tmp_path / "garbage.json").exists() and (tmp_path / "other.json").exists()
    assert running_servers(tmp_path / "missing") == []


def test_an_unwritable_registry_does_not_stop_a_server(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert register("127.0.0.1", 8000, "m", directory=blocked / "servers") is None


def test_reading_the_registry_imports_no_web_framework() -> None:
    code = (
        "import sys, harmony_chat.server.registry as r; r.running_servers(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'starlette', 'uvicorn', 'fastapi', 'sse_starlette', 'httpx', 'pydantic', 'llama_cpp', 'openai_harmony'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _wait_for(condition: Callable[[], object], what: str, server: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert server.poll() is None, server.communicate()[1]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _listed(pid: int) -> list[RegisteredServer]:
    return [server for server in running_servers() if server.pid == pid]


@pytest.mark.llama
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_serve_demo_registers_while_it_runs_and_unregisters_when_stopped(
    tmp_path: Path, encoding: HarmonyEncoding, stop: signal.Signals
) -> None:
    """``encoding`` puts the vocabulary in the (isolated) cache the server process reads it from."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARMONY_CHAT_CONFIG_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "harmony_chat", "serve", "--demo", "--port", str(port)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: _listed(server.pid), "the server's registration", server)
        (entry,) = _listed(server.pid)
        assert (entry.host, entry.port, entry.model, entry.api_key) == ("127.0.0.1", port, POCKET_NAME, False)
        assert httpx.get(entry.url.removesuffix("/v1") + "/health", timeout=5).json()["model"] == POCKET_NAME
        server.send_signal(stop)
        _, err = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert not (servers_dir() / f"{server.pid}.json").exists()  # removed, not only filtered out as dead
    assert _listed(server.pid) == [] and "Traceback" not in err
