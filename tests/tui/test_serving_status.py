"""The status bar shows the ``harmony-chat serve`` processes running on this machine."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot

from harmony_chat.server.registry import register, servers_dir, unregister
from harmony_chat.tui.screens.tooling import SERVERS_REFRESH_S, server_label
from harmony_chat.tui.screenshots import replay_factory
from tests.tui.harness import make_app, settle

ROOT = Path(__file__).resolve().parents[2]


async def until(
    pilot: Pilot[Any], check: Callable[[], bool], what: str, timeout: float = 4 * SERVERS_REFRESH_S
) -> None:
    """Wait (letting the app run) until ``check()`` holds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.1)


def test_loopback_servers_are_named_by_port_others_by_address() -> None:
    assert server_label("127.0.0.1", 8000) == ":8000"
    assert server_label("::1", 8001) == ":8001"
    assert server_label("0.0.0.0", 8080) == "0.0.0.0:8080"


async def test_a_registered_server_shows_and_goes() -> None:
    path = register("0.0.0.0", 8123, "gpt-oss-20b", api_key=True)  # this process stands for the server
    app = make_app(factory=replay_factory())
    try:
        async with app.run_test(size=(140, 30)) as pilot:
            await settle(pilot)
            status = app.chat.status
            assert status.serving == "0.0.0.0:8123"
            assert "serving 0.0.0.0:8123" in str(status.render())
            unregister(path)
            await until(pilot, lambda: status.serving == "", "the server to leave the status bar")
            assert "serving" not in str(status.render())
    finally:
        unregister(path)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.llama
async def test_a_real_serve_process_shows_while_it_runs(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARMONY_CHAT_CONFIG_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "harmony_chat", "serve", "--demo", "--port", str(port)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    app = make_app(factory=replay_factory())
    try:
        deadline = time.monotonic() + 60
        while not list(servers_dir().glob("*.json")):
            assert server.poll() is None, server.communicate()[1]
            assert time.monotonic() < deadline, "serve --demo did not register"
            time.sleep(0.2)
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200
        async with app.run_test(size=(140, 30)) as pilot:
            await settle(pilot)
            status = app.chat.status
            await until(pilot, lambda: status.serving == f":{port}", "the running server in the status bar")
            server.send_signal(signal.SIGINT)
            server.communicate(timeout=30)
            await until(pilot, lambda: status.serving == "", "the stopped server to leave the status bar")
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
