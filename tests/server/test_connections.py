"""Connections before authentication: bounded, with a deadline for headers, and no log flood (real sockets).

Half-open connections (half a header, then nothing) are what the API key cannot stop. The server
holds a bounded number, closes the longest-waiting one for a newcomer, closes those whose
headers are late, and a process out of file descriptors logs a few lines, not a flood.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.server.app import ServerLimits
from harmony_chat.server.harmony_request import ServedModel
from harmony_chat.server.log_limits import RepeatFilter
from tests.server.conftest import DATE, replay, running
from tests.server.test_chat_completions import ANSWER
from tests.support.serve_process import wait_for_health

ROOT = Path(__file__).resolve().parents[2]
HALF_HEADER = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"


@contextmanager
def half_open(port: int, count: int, sent: bytes = HALF_HEADER) -> Iterator[list[socket.socket]]:
    """``count`` connections that each sent ``sent`` (half a request header), closed when the block ends."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(sent)
            sockets.append(sock)
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def _closed_by_server(sock: socket.socket, within_s: float) -> bool:
    """Whether the server closes ``sock`` within ``within_s`` (reading what it sent first)."""
    sock.settimeout(within_s)
    try:
        while sock.recv(4096):
            pass
        return True
    except TimeoutError:
        return False
    except ConnectionError:
        return True


def _record(message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, args, None)


def test_repeated_log_lines_are_held_back_and_counted() -> None:
    now = [0.0]
    repeats = RepeatFilter(window_s=10.0, clock=lambda: now[0])
    accept = "socket.accept() out of system resource"
    passed = [repeats.filter(_record(accept)) for _ in range(1000)]
    assert passed.count(True) == 1  # a thousand like lines in a moment: one is logged
    assert repeats.filter(_record("another kind %s", 1))  # other kinds are not held back
    handles = [f"Exception in callback <TimerHandle when={index}.25 at 0x7f{index:04x}>" for index in range(50)]
    assert [repeats.filter(_record(text)) for text in handles].count(True) == 1  # numbers do not make a kind
    now[0] = 10.5
    later = _record(accept)
    assert repeats.filter(later) and later.getMessage() == f"{accept} [999 like messages held back]"
    now[0] = 30.0
    quiet = _record(accept)
    assert repeats.filter(quiet) and quiet.getMessage() == accept  # nothing held back since


def test_headers_that_come_late_close_the_connection(encoding: HarmonyEncoding) -> None:
    served = ServedModel(replay(encoding, ANSWER), encoding, "replay-model", start_date=DATE)
    with running(served, ServerLimits(header_timeout_s=0.5)) as server:
        port = int(server.url.rsplit(":", 1)[1])
        with half_open(port, 1) as (late,):
            assert _closed_by_server(late, within_s=5), "a connection whose headers never came stayed open"
        with socket.create_connection(("127.0.0.1", port), timeout=5) as kept_alive:
            kept_alive.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = b""
            while not answer.endswith(b"}"):
                answer += kept_alive.recv(4096)
            kept_alive.sendall(HALF_HEADER)  # a second request that never finishes its headers
            assert answer.startswith(b"HTTP/1.1 200")
            assert _closed_by_server(kept_alive, within_s=3), "a kept-alive connection with half a header stayed open"
        assert httpx.get(server.url + "/health", timeout=5).status_code == 200


def test_the_newest_connection_closes_the_longest_waiting(encoding: HarmonyEncoding) -> None:
    served = ServedModel(replay(encoding, ANSWER), encoding, "replay-model", start_date=DATE)
    with running(served, ServerLimits(max_connections=8, header_timeout_s=60)) as server:
        port = int(server.url.rsplit(":", 1)[1])
        with half_open(port, 20) as sockets:
            health = httpx.get(server.url + "/health", timeout=5)
            closed = [_closed_by_server(sock, within_s=0.3) for sock in sockets[:13]]
            still_open = [_closed_by_server(sock, within_s=0.3) for sock in sockets[13:]]
    assert health.status_code == 200
    assert all(closed)  # the thirteen that waited longest made room for the rest and /health
    assert not any(still_open)  # seven half-open and /health's: eight held


SLOW_BODY = (
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100000\r\n\r\n{"
)
"""A whole header, then one byte of a 100,000-byte body: the slow-body attack."""


def test_slow_bodies_never_lock_out_an_honest_client(encoding: HarmonyEncoding) -> None:
    """More slow bodies than slots: each newcomer (the honest one too) pushes the oldest slow sender out."""
    served = ServedModel(replay(encoding, ANSWER, ANSWER), encoding, "replay-model", start_date=DATE)
    with running(served, ServerLimits(max_connections=8, header_timeout_s=60)) as server:
        port = int(server.url.rsplit(":", 1)[1])
        with half_open(port, 12, SLOW_BODY) as sockets:
            started = time.monotonic()
            health = httpx.get(server.url + "/health", timeout=5)
            took = time.monotonic() - started
            body = {"model": "replay-model", "messages": [{"role": "user", "content": "hi"}]}
            chat = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=10)
            closed = [_closed_by_server(sock, within_s=0.3) for sock in sockets[:5]]
    assert health.status_code == 200 and took < 1.0
    assert chat.status_code == 200
    assert all(closed)  # the five that waited longest made room


def test_a_body_that_trickles_is_closed_at_its_deadline(encoding: HarmonyEncoding) -> None:
    """The body must come within the header deadline plus its length at 16 KiB/s: one byte now and then is not."""
    served = ServedModel(replay(encoding, ANSWER), encoding, "replay-model", start_date=DATE)
    with running(served, ServerLimits(header_timeout_s=0.5)) as server:
        port = int(server.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(SLOW_BODY.replace(b"100000", b"1000"))  # 1,000 bytes: 0.5 s + 0.06 s to send them
            sock.sendall(b" ")
            assert _closed_by_server(sock, within_s=5), "a trickling body kept its connection"
        assert httpx.get(server.url + "/health", timeout=5).status_code == 200


def test_half_open_flood_with_few_descriptors_leaves_health_answering(
    tmp_path: Path, encoding: HarmonyEncoding
) -> None:
    """A server allowed 160 files, 300 half-open connections: /health answers and the log stays small."""
    recording = tmp_path / "answer.txt"
    recording.write_text(ANSWER, encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    launch = (
        "import resource, runpy, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160))\n"
        f"sys.argv = ['harmony-chat', 'serve', '--replay', {str(recording)!r}, '--port', '{port}']\n"
        "runpy.run_module('harmony_chat', run_name='__main__')\n"
    )
    log = tmp_path / "serve.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("wb") as sink:
        server = subprocess.Popen([sys.executable, "-c", launch], env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            wait_for_health(server, port, log.read_text)
            with half_open(port, 300):
                time.sleep(2)  # long enough for an accept loop to flood the log
                started = time.monotonic()
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
                answered_s = time.monotonic() - started
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    text = log.read_text(errors="replace")
    assert health.status_code == 200 and answered_s < 5
    assert log.stat().st_size < 20_000, text[-2000:]
    assert "Too many open files" not in text


def test_the_bound_leaves_room_for_a_burst_accepted_and_as_many_closing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Held connections, a burst asyncio accepts in one go, and the ones closed for it fit the limit."""
    import resource

    from harmony_chat.server import connections

    monkeypatch.setattr(resource, "getrlimit", lambda _which: (160, 160))
    monkeypatch.setattr(connections, "_open_descriptors", lambda: 11)
    held, backlog = connections.fit_connections(256)
    assert 11 + held + 2 * backlog + connections.DESCRIPTOR_RESERVE <= 160
    assert held >= 32 and backlog >= 8  # still a useful server
