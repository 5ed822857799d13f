"""Pages ``open`` cannot show, calls the model gets wrong: each is one clear result, never an exception."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import pytest

from harmony_chat.tools.browser import BrowserTool
from tests.tools.browser.conftest import call
from tests.tools.browser.web_server import WebServer

ToolFactory = Callable[..., BrowserTool]


def open_url(tool: BrowserTool, url: str) -> tuple[str, str]:
    result = call(tool, "browser.open", json.dumps({"id": url}))
    return result.status, result.text


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/big", "the page is too large: 195 KiB, the limit is 64 KiB"),
        ("/big-stream", "the page is too large: over 64 KiB"),
        ("/loop/a", "redirect loop: {url}/loop/a → {url}/loop/b → {url}/loop/a"),
        ("/chain/9", "too many redirects (more than 5)"),
        ("/file.bin", "is application/octet-stream, not an HTML or text page"),
        ("/image.png", "is image/png, not an HTML or text page"),
        ("/missing", "HTTP 404 Not Found for {url}/missing"),
        ("/broken", "HTTP 500 Internal Server Error for {url}/broken"),
    ],
)
def test_pages_that_cannot_be_shown(make_tool: ToolFactory, web: WebServer, path: str, expected: str) -> None:
    tool = make_tool()
    status, text = open_url(tool, web.url + path)
    assert status == "failed"
    assert text.startswith(f"Error fetching URL `{web.url}{path}`: ")
    assert expected.format(url=web.url) in text
    assert "\n" not in text and "Traceback" not in text
    visit = tool.visited()[-1]
    assert (visit.kind, visit.target, visit.ok) == ("open", web.url + path, False)
    assert expected.format(url=web.url) in visit.note
    assert tool.sources() == {}  # nothing was shown, so nothing can be cited


def test_a_slow_server_times_out_within_the_limit(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool(read_timeout_s=0.5)
    started = time.monotonic()
    status, text = open_url(tool, f"{web.url}/slow")  # the server waits 30 s
    assert status == "timeout" and "timed out fetching" in text and "too slow" in text
    assert time.monotonic() - started < 15  # bounded by the limits, not by the server
    assert call(tool, "browser.open", json.dumps({"id": f"{web.url}/kelp"})).status == "done"  # and it goes on


def test_the_call_time_limit_ends_a_slow_fetch(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool(read_timeout_s=20.0, fetch_timeout_s=20.0)
    result = tool.run("browser.open", json.dumps({"id": f"{web.url}/slow"}), timeout_s=0.5, should_stop=lambda: False)
    assert result.status == "timeout" and "timed out" in result.text
    assert result.elapsed_s < 10
    assert tool.visited()[-1].ok is False


def test_stopping_cancels_a_fetch(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool(read_timeout_s=20.0, fetch_timeout_s=20.0)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    result = tool.run("browser.open", json.dumps({"id": f"{web.url}/slow"}), timeout_s=60, should_stop=stop.is_set)
    assert result.status == "cancelled" and "was stopped" in result.text
    assert result.elapsed_s < 10


def test_the_visits_can_be_read_while_a_call_waits_on_the_network(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool(read_timeout_s=5.0, fetch_timeout_s=5.0)
    assert call(tool, "browser.open", json.dumps({"id": f"{web.url}/kelp"})).status == "done"
    runner = threading.Thread(target=call, args=(tool, "browser.open", json.dumps({"id": f"{web.url}/slow"})))
    runner.start()
    while web.web.hits["/slow"] == 0:
        time.sleep(0.01)
    assert [visit.url for visit in tool.visited()] == [f"{web.url}/kelp"]  # the TUI reads them mid-call
    assert list(tool.sources()) == [0]
    assert runner.is_alive()  # it did not wait for the call to end
    tool.close()
    runner.join(10)


def test_a_search_provider_that_is_down_is_one_line(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool(url=f"{web.url}/nowhere-else")  # answers 404 to /nowhere-else/search
    result = call(tool, "browser.search", '{"query": "otters"}')
    assert result.status == "failed"
    assert result.text.startswith("Error during search for 'otters': SearXNG answered HTTP 404")
    assert "\n" not in result.text
    assert tool.visited()[-1].ok is False


def test_searxng_without_a_url_says_how_to_configure_it(make_tool: ToolFactory) -> None:
    tool = make_tool(url=None)
    result = call(tool, "browser.search", '{"query": "otters"}')
    assert result.status == "failed" and "needs `url` in [tools.browser]" in result.text


@pytest.mark.parametrize(
    ("recipient", "arguments", "expected"),
    [
        ("browser.search", "{not json", "Invalid function arguments for browser.search: not JSON"),
        ("browser.search", "[1, 2]", "expected a JSON object"),
        ("browser.search", "{}", "`query` is required"),
        ("browser.search", '{"query": "x", "topn": "many"}', "`topn` must be a whole number"),
        ("browser.click", "{}", "Unknown function: `browser.click`"),
        ("browser.open", '{"cursor": 0}', "No pages to access!"),
        ("browser.find", '{"pattern": "x"}', "No pages to access!"),
        ("browser.find", "{}", "`pattern` is required"),
        ("browser.open", '{"id": true}', "`id` must be a link number or a URL string"),
        ("browser.open", '{"id": "not a url"}', "only http and https URLs can be opened"),
    ],
)
def test_calls_the_model_gets_wrong(make_tool: ToolFactory, recipient: str, arguments: str, expected: str) -> None:
    result = call(make_tool(), recipient, arguments)
    assert result.status == "failed"
    assert expected in result.text, result.text


def test_bad_cursors_and_link_ids_after_a_search(make_tool: ToolFactory) -> None:
    tool = make_tool()
    assert call(tool, "browser.search", '{"query": "otters"}').status == "done"
    assert "Invalid link id `7` on page [0]" in call(tool, "browser.open", '{"id": 7}').text
    assert (
        "Cursor `5` is out of range. Available cursor indices: [0 - 0]"
        in call(tool, "browser.open", '{"cursor": 5, "id": 0}').text
    )
    assert "Cannot run `find` on search results page" in call(tool, "browser.find", '{"pattern": "kelp"}').text
    assert call(tool, "browser.open", '{"id": "1"}').text.startswith("[1] Kelp forests")  # "1" is a link id
    empty = call(tool, "browser.find", '{"pattern": "no such words anywhere"}')
    assert empty.status == "done" and "No `find` results for pattern: `no such words anywhere`" in empty.text


def test_a_closed_browser_answers_without_running(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool()
    tool.close()
    tool.close()
    result = call(tool, "browser.open", json.dumps({"id": f"{web.url}/kelp"}))
    assert result.status == "failed" and "closed" in result.text
