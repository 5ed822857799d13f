"""``serve``'s log is written to a terminal: a client's text in it shows its control characters as symbols."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from openai_harmony import HarmonyEncoding

from tests.server.test_serve_cli import _free_port
from tests.support.serve_process import wait_for_health

ROOT = Path(__file__).resolve().parents[2]
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
FAULTY_STORE = """
import sys
from harmony_chat.cli import main
from harmony_chat.server import response_store
from tests.support.serve_process import wait_for_health

def get(self, response_id):  # a fault that quotes what the client sent, as a bug's message may
    raise LookupError(f"cannot look up {response_id}")

response_store.ServerStore.get = get
sys.exit(main(sys.argv[1:]))
"""
"""``serve`` as it is, except that looking up a stored response fails unexpectedly."""


def test_an_unexpected_error_quoting_the_client_is_logged_with_symbols(
    tmp_path: Path, encoding: HarmonyEncoding
) -> None:
    """``encoding`` puts the vocabulary in the (isolated) cache the server process reads it from."""
    replay = tmp_path / "turn.txt"
    replay.write_text("<|channel|>final<|message|>4<|return|>\n", encoding="utf-8")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARMONY_CHAT_CONFIG_DIR": str(tmp_path)}
    command = [sys.executable, "-c", FAULTY_STORE, "serve", "--replay", str(replay), "--port", str(port)]
    command += ["--name", "model\x1b]0;owned\x07"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_health(server, port, lambda: server.communicate()[1])
        failed = httpx.get(f"http://127.0.0.1:{port}/v1/responses/%1B%5D0%3Bowned%07%C2%9B2J", timeout=10)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            out, err = server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            out, err = server.communicate()
    assert failed.status_code == 500
    assert "cannot look up ␛]0;owned␇�2J" in err  # the fault was logged, and shown as symbols
    assert "serving model␛]0;owned␇ at http://127.0.0.1:" in err
    assert not RAW_CONTROL.search(out + err), err
    assert '"GET /health HTTP/1.1" 200' in out and "Logging error" not in err  # uvicorn's access log still works
    assert '/v1/responses/%1B%5D0%3Bowned%07%C2%9B2J HTTP/1.1" 500' in out
