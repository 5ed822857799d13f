"""The live transport on a real HTTP server (loopback), and the command's one-line errors."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from harmony_chat.cli import main
from harmony_chat.conform import transport
from harmony_chat.conform.transport import HttpTransport, Probe
from tests.conform.conftest import FIXTURES

KEY = "right-key"


async def models(request: Request) -> Response:
    if request.headers.get("authorization") != f"Bearer {KEY}":
        return JSONResponse({"error": {"message": "invalid api key", "type": "invalid_request_error"}}, 401)
    return JSONResponse({"object": "list", "data": [{"id": "served-model"}]})


async def events(request: Request) -> Response:
    body = await request.json()

    async def stream() -> AsyncIterator[bytes]:
        yield b": keep-alive\n\n"
        yield b'event: message\ndata: {"echo": ' + json.dumps(body["model"]).encode() + b"}\n\n"
        yield b'data: {"split":\ndata: 1}\n\n'
        yield b"data: [DONE]\n\n"
        yield b'data: {"after": "done"}\n\n'

    return StreamingResponse(stream(), media_type="text/event-stream")


async def slow(request: Request) -> Response:
    await asyncio.sleep(3)
    return JSONResponse({})


async def endless(request: Request) -> Response:
    async def stream() -> AsyncIterator[bytes]:
        while True:
            yield b'data: {"more": "' + b"x" * 1000 + b'"}\n\n'
            await asyncio.sleep(0)

    return StreamingResponse(stream(), media_type="text/event-stream")


async def not_json(request: Request) -> Response:
    return PlainTextResponse("Bad Request\x1b[2J", status_code=400)


APP = Starlette(
    routes=[
        Route("/v1/models", models),
        Route("/v1/events", events, methods=["POST"]),
        Route("/v1/slow", slow, methods=["POST"]),
        Route("/v1/endless", endless, methods=["POST"]),
        Route("/v1/text", not_json, methods=["POST"]),
    ]
)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The app on 127.0.0.1 at a free port."""
    config = uvicorn.Config(APP, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started:
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.01)
    port = running.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    running.should_exit = True
    thread.join(timeout=10)


def test_events_are_parsed_as_servers_send_them(server: str) -> None:
    http = HttpTransport(server, KEY, timeout_s=10)
    reply = http.send(Probe("p", "/events", {"model": "m"}, stream=True))
    http.close()
    assert reply.ok and reply.events == [
        {"echo": "m"},
        {"split": 1},
    ]  # comments skipped, data lines joined, [DONE] ends


def test_a_slow_server_becomes_a_failure_not_a_hang(server: str) -> None:
    http = HttpTransport(server, KEY, timeout_s=1)
    started = time.monotonic()
    reply = http.send(Probe("slow", "/slow", {}))
    http.close()
    assert reply.status == 0 and reply.failure == "no answer within 1 s" and time.monotonic() - started < 3


def test_an_endless_stream_is_cut_off(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport, "MAX_REPLY_BYTES", 50_000)
    http = HttpTransport(server, KEY, timeout_s=10)
    reply = http.send(Probe("endless", "/endless", {}, stream=True))
    http.close()
    assert reply.status == 0 and reply.failure is not None and "cut off" in reply.failure


def test_a_body_that_is_not_json_is_kept_as_text(server: str) -> None:
    http = HttpTransport(server, KEY, timeout_s=10)
    reply = http.send(Probe("text", "/text", raw="{broken"))
    http.close()
    assert reply.status == 400 and reply.data is None and reply.text == "Bad Request\x1b[2J"


def test_a_refused_key_is_one_line_naming_the_option(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conform", server, "--api-key", "wrong"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: {server}/v1 refused the request (HTTP 401: invalid api key)") and "--api-key" in err


def test_an_unreachable_server_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once the socket closes
    code = main(["conform", f"http://127.0.0.1:{port}", "--timeout", "5"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error: cannot reach http://127.0.0.1:{port}/v1: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "error: give the server's URL"),
        (["ftp://host"], "error: 'ftp://host' is not an http(s) URL"),
        (["--replay", "/nonexistent/recording.json"], "error: cannot read the recording /nonexistent/recording.json"),
    ],
)
def test_bad_arguments_are_one_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conform", *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(message) and err.count("\n") == 1


def test_a_prompts_file_with_an_unknown_field_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "prompts.json"
    prompts.write_text('{"question": "What is 3 + 3?", "colour": "blue"}', encoding="utf-8")
    code = main(["conform", "--replay", str(FIXTURES / "vllm.json"), "--prompts", str(prompts)])
    err = capsys.readouterr().err
    assert code == 2 and "unknown prompt field 'colour'" in err and err.count("\n") == 1


def test_the_table_escapes_what_a_server_sent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recording = json.loads((FIXTURES / "vllm.json").read_text(encoding="utf-8"))
    message = recording["probes"]["chat.plain"]["json"]["choices"][0]["message"]
    message["thinking"] = "\x1b[2J\x1b]0;owned\x07" + message.pop("reasoning")
    recording["probes"]["chat.error.bad_role"] = {"status": 400, "text": "nope\x1b[31m"}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(recording), encoding="utf-8")
    code = main(["conform", "--replay", str(path), "--api", "chat", "--samples", "2"])
    out = capsys.readouterr().out
    assert code == 1 and "\x1b" not in out and "\x07" not in out
    assert "\\u001b[2J" in out and "message.thinking" in out and "\\u001b[31m" in out


def test_json_output_and_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--replay", str(FIXTURES / "vllm.json"), "--samples", "2", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["summary"] == {"pass": 26, "fail": 2, "not offered": 0, "inconclusive": 0}
    first = report["checks"][0]
    assert first["id"] == "chat.reasoning" and first["clause"]["source"] == "raw-CoT guide"
    assert first["clause"]["section"] == "Chat Completions API, point 2" and first["status"] == "pass"


def _dropping_server(drops: int, answer: bool = True) -> tuple[str, threading.Thread]:
    """A raw HTTP server that closes its first ``drops`` connections without a word, then (``answer``) sends ``{}``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(10)

    def serve() -> None:
        with listener:
            for index in range(drops + 1 if answer else drops):
                try:
                    connection, _ = listener.accept()
                except OSError:
                    return
                with connection:
                    connection.recv(65536)
                    if index >= drops:
                        connection.sendall(
                            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                        )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", thread


def test_a_connection_dropped_before_any_reply_is_tried_once_more() -> None:
    url, thread = _dropping_server(drops=1)
    http = HttpTransport(url, timeout_s=10)
    reply = http.send(Probe("p", "/chat/completions", {"model": "m"}))
    http.close()
    thread.join(timeout=10)
    assert reply.ok and reply.data == {}


def test_a_server_that_never_answers_is_a_failure_after_one_retry() -> None:
    url, thread = _dropping_server(drops=2, answer=False)
    http = HttpTransport(url, timeout_s=10)
    reply = http.send(Probe("p", "/chat/completions", {"model": "m"}))
    http.close()
    thread.join(timeout=10)
    assert reply.status == 0 and reply.failure is not None and reply.failure.startswith("connection failed: ")


def test_a_recording_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    """``conform --record`` holds everything a server said: 0600 whatever the umask, like every recording."""
    from harmony_chat.conform.transport import RecordingTransport, ReplayTransport

    source = ReplayTransport.load(FIXTURES / "vllm.json")
    recorder = RecordingTransport(source)
    recorder.send(Probe("chat.plain", "/chat/completions", {"model": "m", "messages": []}))
    path = tmp_path / "run.json"
    old = os.umask(0o022)
    try:
        recorder.save(path, server="http://127.0.0.1:1", model="m")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text(encoding="utf-8"))["probes"]["chat.plain"]["status"] == 200
