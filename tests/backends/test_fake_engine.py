"""The fake vLLM/SGLang server keeps a passing run's log clean and never hides a real fault."""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Callable

import pytest

from tests.support.fake_engine import FakeEngine, load_fixture


def _send(fake: FakeEngine, body: bytes) -> socket.socket:
    """Open a connection and send a generate request with ``body``; the caller closes it."""
    host, port = fake.url.removeprefix("http://").split(":")
    connection = socket.create_connection((host, int(port)), timeout=10)
    path = fake.fixture["generate_path"]
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n\r\n"
    connection.sendall(head.encode() + body)
    return connection


def _wait_for(condition: Callable[[], bool], limit_s: float = 10.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_client_that_resets_the_connection_leaves_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    fake = FakeEngine(load_fixture("vllm"), "held")  # the server holds the answer back, watching the client
    connection = _send(fake, json.dumps({"prompt": [1, 2, 3]}).encode())
    assert connection.recv(1024).startswith(b"HTTP/1.1 200")
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()  # with linger 0: a reset, as a client killed mid-request sends
    _wait_for(lambda: bool(fake.client_disconnects))
    fake.close()
    assert fake.client_disconnects == ["ConnectionResetError"]
    assert capfd.readouterr().err == ""


def test_an_error_in_the_server_fails_when_it_closes(capfd: pytest.CaptureFixture[str]) -> None:
    fake = FakeEngine(load_fixture("vllm"))
    with _send(fake, b"{not json") as connection:
        _wait_for(lambda: bool(fake.server_errors))
        connection.close()
    with pytest.raises(AssertionError, match="the fake engine failed while serving:(.|\n)*JSONDecodeError"):
        fake.close()
    assert capfd.readouterr().err == ""
