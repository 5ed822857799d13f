"""Exa and You.com request/response mapping, against loopback fakes written from their public API docs.

The real services cannot be reached from the tests (no network, no keys): these fakes answer with
the response shapes the providers document (Exa ``POST /search``; You.com ``GET /v1/search``) and
record the requests, so what is checked is our side of the contract, not the services themselves.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from harmony_chat.tools.browser import BrowserTool
from tests.tools.browser.conftest import call

ToolFactory = Callable[..., BrowserTool]

EXA_ANSWER = {
    "requestId": "b5947044c4b78efa9552a7c89b306d95",
    "resolvedSearchType": "neural",
    "results": [
        {
            "title": "Sea otter - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Sea_otter",
            "id": "https://en.wikipedia.org/wiki/Sea_otter",
            "publishedDate": "2024-01-01T00:00:00.000Z",
            "author": None,
            "highlights": ["Adult sea otters typically weigh between 14 and 45 kg."],
            "highlightScores": [0.4],
        },
        {"title": None, "url": "https://otters.example/facts", "id": "x", "summary": "Facts about otters."},
    ],
}
YOU_ANSWER = {
    "results": {
        "web": [
            {
                "url": "https://en.wikipedia.org/wiki/Sea_otter",
                "title": "Sea otter - Wikipedia",
                "description": "The sea otter is a marine mammal.",
                "snippets": ["Sea otters weigh 14 to 45 kg.", "They eat urchins."],
                "page_age": "2025-06-25T11:41:00",
                "authors": [],
                "favicon_url": "https://ydc-index.io/favicon?domain=wikipedia.org&size=128",
            }
        ],
        "news": [
            {
                "title": "Otters return to the bay",
                "description": "A colony of sea otters was seen again.",
                "page_age": "2025-06-25T11:41:00",
                "url": "https://news.example/otters",
            }
        ],
    },
    "metadata": {"request_uuid": "942ccbdd-7705-4d9c-9d37-4ef386658e90", "query": "sea otter", "latency": 0.1},
}


class FakeApi(ThreadingHTTPServer):
    """Answers every request with ``answer`` (status, JSON) and records what it was sent."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), FakeHandler)
        self.requests: list[dict[str, Any]] = []
        self.answer: tuple[int, object] = (200, {})

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class FakeHandler(BaseHTTPRequestHandler):
    server: FakeApi

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        """Quiet."""

    def _answer(self, body: bytes) -> None:
        parts = urlsplit(self.path)
        self.server.requests.append(
            {
                "method": self.command,
                "path": parts.path,
                "query": parse_qs(parts.query),
                "headers": {key.lower(): value for key, value in self.headers.items()},
                "body": json.loads(body) if body else None,
            }
        )
        status, payload = self.server.answer
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer(b"")

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self._answer(self.rfile.read(int(self.headers.get("Content-Length", "0"))))


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeApi]:
    server = FakeApi()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def fake(fake_server: FakeApi) -> FakeApi:
    fake_server.requests.clear()
    fake_server.answer = (200, {})
    return fake_server


def test_exa_request_and_results(make_tool: ToolFactory, fake: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXA_API_KEY", "exa-test-key")
    fake.answer = (200, EXA_ANSWER)
    tool = make_tool(provider="exa", url=fake.url)
    result = call(tool, "browser.search", '{"query": "sea otter weight", "topn": 3}')
    assert result.status == "done", result.text
    sent = fake.requests[-1]
    assert (sent["method"], sent["path"]) == ("POST", "/search")
    assert sent["headers"]["x-api-key"] == "exa-test-key"
    assert sent["headers"]["content-type"] == "application/json"
    assert sent["body"]["query"] == "sea otter weight" and sent["body"]["numResults"] == 3
    assert "highlights" in sent["body"]["contents"]
    assert "(from Exa)" in result.text
    assert "【0†Sea otter - Wikipedia†en.wikipedia.org】" in result.text
    assert "Adult sea otters typically weigh between 14 and 45 kg." in result.text
    assert "【1†https://otters.example/facts†otters.example】" in result.text  # null title: the URL stands in
    assert "Facts about otters." in result.text


def test_you_request_and_results(make_tool: ToolFactory, fake: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("YDC_API_KEY", "you-test-key")
    fake.answer = (200, YOU_ANSWER)
    tool = make_tool(provider="you", url=fake.url)
    result = call(tool, "browser.search", '{"query": "sea otter"}')
    assert result.status == "done", result.text
    sent = fake.requests[-1]
    assert (sent["method"], sent["path"]) == ("GET", "/v1/search")
    assert sent["query"] == {"query": ["sea otter"], "count": ["10"]}
    assert sent["headers"]["x-api-key"] == "you-test-key"
    assert "(from You.com)" in result.text
    assert "【0†Sea otter - Wikipedia†en.wikipedia.org】" in result.text
    assert "Sea otters weigh 14 to 45 kg. … They eat urchins." in result.text
    assert "【1†Otters return to the bay†news.example】" in result.text  # news after web
    assert "A colony of sea otters was seen again." in result.text


@pytest.mark.parametrize(("provider", "variable"), [("exa", "EXA_API_KEY"), ("you", "YDC_API_KEY")])
def test_a_missing_key_is_named(
    make_tool: ToolFactory, fake: FakeApi, monkeypatch: pytest.MonkeyPatch, provider: str, variable: str
) -> None:
    monkeypatch.delenv(variable, raising=False)
    result = call(make_tool(provider=provider, url=fake.url), "browser.search", '{"query": "x"}')
    assert result.status == "failed" and f"set the environment variable {variable}" in result.text
    assert fake.requests == []  # nothing was sent without a key


def test_an_api_error_is_one_line_without_the_key(
    make_tool: ToolFactory, fake: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YDC_API_KEY", "secret-you-key")
    fake.answer = (401, {"detail": "Invalid or expired API key: secret-you-key"})
    result = call(make_tool(provider="you", url=fake.url), "browser.search", '{"query": "x"}')
    assert result.status == "failed" and "You.com answered HTTP 401" in result.text
    assert "Invalid or expired API key" in result.text
    assert "secret-you-key" not in result.text and "\n" not in result.text


def test_searxng_with_json_disabled_says_how_to_enable_it(make_tool: ToolFactory, fake: FakeApi) -> None:
    fake.answer = (403, {"error": "forbidden"})
    result = call(make_tool(provider="searxng", url=fake.url), "browser.search", '{"query": "x"}')
    assert result.status == "failed" and "enable `json` under search.formats" in result.text
    sent = fake.requests[-1]
    assert (sent["path"], sent["query"]["q"], sent["query"]["format"]) == ("/search", ["x"], ["json"])


def test_results_are_capped_and_topn_respected(make_tool: ToolFactory, fake: FakeApi) -> None:
    many = [{"url": f"https://site{n}.example/", "title": f"Result {n}", "content": ""} for n in range(30)]
    fake.answer = (200, {"results": many})
    tool = make_tool(provider="searxng", url=fake.url)
    assert "【9†Result 9" in call(tool, "browser.search", '{"query": "x"}').text
    assert "【10†" not in call(tool, "browser.search", '{"query": "x"}').text  # at most 10
    text = call(tool, "browser.search", '{"query": "x", "topn": 2}').text
    assert "【1†Result 1" in text and "【2†" not in text
