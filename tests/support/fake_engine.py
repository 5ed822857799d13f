"""A small real HTTP server on 127.0.0.1 that replays an engine's recorded answers (vLLM, SGLang).

The answers come from the JSON fixtures in ``tests/data/engines``, written from each engine's
source at a cited version. Streams are sent with chunked transfer encoding, as uvicorn does, so a
``drop`` ends the connection mid-body the way a crashed server does. Every request is recorded.

A client that leaves mid-answer (a cancel, a timeout) is what many tests do: the server notes it in
``client_disconnects`` instead of printing a traceback. Any other error in the server is kept and
fails the test when the server closes, so a real fault is never hidden in a passing run's log.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ENGINE_FIXTURES = Path(__file__).resolve().parents[1] / "data" / "engines"


def load_fixture(engine: str) -> dict[str, Any]:
    """The fixture of one engine (``vllm`` or ``sglang``)."""
    data = json.loads((ENGINE_FIXTURES / f"{engine}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@dataclass
class Recorded:
    """One request the fake engine received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


CLIENT_LEFT = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)
"""What reading from or writing to a connection raises once the client has closed it."""


class _QuietServer(ThreadingHTTPServer):
    """A threading HTTP server that sorts request errors instead of printing them to stderr."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], engine: FakeEngine) -> None:
        self.engine = engine
        super().__init__(("127.0.0.1", 0), handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, CLIENT_LEFT):
            self.engine.client_disconnects.append(type(error).__name__)
        else:
            self.engine.server_errors.append(traceback.format_exc())


@dataclass
class FakeEngine:
    """Serve ``fixture`` on a free loopback port; ``stream`` picks the recorded stream to replay.

    Args:
        fixture: the engine's fixture (see :func:`load_fixture`).
        stream: the stream in ``fixture["streams"]`` that generate requests get (a list: one per
            request in order, the last one repeating).
        api_key: when set, guarded paths answer the fixture's ``unauthorized`` error without it.
        tokenize_offset: added to every id ``/tokenize`` returns (a wrong vocabulary when not 0).
    """

    fixture: dict[str, Any]
    stream: str | list[str] = "answer"
    api_key: str | None = None
    tokenize_offset: int = 0
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``"METHOD /path"`` -> ``{"status", "body"}`` replacing the fixture's endpoint."""
    requests: list[Recorded] = field(default_factory=list)
    disconnected: threading.Event = field(default_factory=threading.Event)
    """Set when a client leaves while a stream is being held back (the engine would abort)."""
    client_disconnects: list[str] = field(default_factory=list)
    """The errors that met requests whose client had gone (expected: cancels and timeouts)."""
    server_errors: list[str] = field(default_factory=list)
    """Tracebacks of any other error while serving a request: :meth:`close` fails the test with them."""

    def __post_init__(self) -> None:
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                engine._handle(self, "GET")

            def do_POST(self) -> None:
                engine._handle(self, "POST")

        self.server = _QuietServer(Handler, self)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving; raise AssertionError with the tracebacks if serving a request failed."""
        self.server.shutdown()
        self.server.server_close()
        if self.server_errors:
            raise AssertionError("the fake engine failed while serving:\n" + "\n".join(self.server_errors))

    def generate_requests(self) -> list[Recorded]:
        """The recorded generate requests (the fixture's ``generate_path``)."""
        return [r for r in self.requests if r.path == self.fixture["generate_path"]]

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        path = handler.path.split("?")[0]
        self.requests.append(Recorded(method, path, {k.lower(): v for k, v in handler.headers.items()}, body))
        if self.api_key and self._guarded(path):
            if handler.headers.get("Authorization") != f"Bearer {self.api_key}":
                self._reply(handler, self.fixture["errors"]["unauthorized"])
                return
        key = f"{method} {path}"
        if key in self.overrides:
            self._reply(handler, self.overrides[key])
        elif method == "POST" and path == self.fixture["generate_path"]:
            names = [self.stream] if isinstance(self.stream, str) else self.stream
            name = names[min(len(self.generate_requests()) - 1, len(names) - 1)]
            self._stream(handler, self.fixture["streams"][name], body)
        elif method == "POST" and path == "/tokenize":
            ids = self._tokenize(body)
            self._reply(handler, {"status": 200, "body": {"tokens": ids, "count": len(ids), "max_model_len": 131072}})
        elif key in self.fixture["endpoints"]:
            self._reply(handler, self.fixture["endpoints"][key])
        else:
            self._reply(handler, {"status": 404, "body": {"detail": "Not Found"}})

    def _guarded(self, path: str) -> bool:
        prefixes = self.fixture["auth"]["guarded_prefixes"]
        open_paths = self.fixture["auth"]["open_prefixes"]
        return any(path.startswith(p) for p in prefixes) and not any(path.startswith(p) for p in open_paths)

    def _tokenize(self, body: Any) -> list[int]:
        from harmony_chat.harmony.vocab import load_encoding

        ids = load_encoding().encode(str(body["prompt"]), allowed_special="all")
        return [t + self.tokenize_offset for t in ids]

    def _reply(self, handler: BaseHTTPRequestHandler, answer: dict[str, Any]) -> None:
        body = answer.get("body")
        data = b"" if body in (None, "") else json.dumps(body).encode()
        handler.send_response(int(answer["status"]))
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _stream(self, handler: BaseHTTPRequestHandler, stream: dict[str, Any], request: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        if stream.get("hold_s"):  # the engine is still processing the prompt
            if self._client_left(handler, float(stream["hold_s"])):
                self.disconnected.set()
                return
        prompt = request.get(self.fixture["prompt_field"]) if isinstance(request, dict) else None
        for chunk in stream["chunks"]:
            text = json.dumps(chunk).replace('"$prompt"', json.dumps(prompt))
            self._send(handler, f"data: {text}\n\n")
        if stream.get("drop"):
            handler.wfile.flush()
            handler.close_connection = True
            handler.connection.shutdown(2)  # no terminating chunk: the body is cut off
            return
        if stream.get("done", True):
            self._send(handler, "data: [DONE]\n\n")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, text: str) -> None:
        data = text.encode()
        handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        handler.wfile.flush()

    def _client_left(self, handler: BaseHTTPRequestHandler, hold_s: float) -> bool:
        """Wait up to ``hold_s``; return True as soon as the client closes its end (a reset is noted)."""
        deadline = time.monotonic() + hold_s
        while time.monotonic() < deadline:
            readable, _, _ = select.select([handler.connection], [], [], 0.05)
            try:
                if readable and not handler.connection.recv(1, socket.MSG_PEEK):  # EOF: the client is gone
                    return True
            except ConnectionResetError as error:  # closed with data unread, or killed: gone too
                self.client_disconnects.append(type(error).__name__)
                return True
        return False
