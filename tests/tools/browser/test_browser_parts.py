"""The browser's parts on their own: reading calls, wrapping, sniffing, previews for approval, the config."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from harmony_chat.tools.browser import BrowserConfig, BrowserTool
from harmony_chat.tools.browser.calls import OpenCall, SearchCall, as_url, parse_call
from harmony_chat.tools.browser.extract import extract_html, wrap_lines
from harmony_chat.tools.browser.fetch import media_type_of, sniff_kind
from tests.tools.browser.conftest import call
from tests.tools.browser.web_server import WebServer

ToolFactory = Callable[..., BrowserTool]


def test_numbers_may_come_as_floats_or_strings() -> None:
    assert parse_call("browser.open", '{"id": 3.0, "cursor": "2", "loc": 10, "num_lines": 5.0}') == OpenCall(
        3, 2, 10, 5
    )
    assert parse_call("browser.open", '{"id": "https://x.example/"}') == OpenCall("https://x.example/")
    assert parse_call("browser.open", "") == OpenCall()
    assert parse_call("browser.search<|constrain|>json", '{"query": "q", "top_n": 3}') == SearchCall("q", 3)
    assert as_url("example.com/page") == "https://example.com/page"
    assert as_url("file:///etc/passwd") == "file:///etc/passwd"


def test_wrapping_keeps_markers_whole_and_cuts_giant_words() -> None:
    marker = "【12†a link with a fairly long title that would be split†other.example】"
    lines = wrap_lines("word " * 12 + marker + " tail " * 10, 40)
    assert sum(marker in line for line in lines) == 1
    assert all(len(line) <= 40 or marker in line for line in lines)
    giant = wrap_lines("x" * 1000, 40)
    assert max(len(line) for line in giant) == 160 and "".join(giant) == "x" * 1000
    assert wrap_lines("a\n\n  indented " + "y " * 30, 20)[:3] == ["a", "", "  indented y y y y y"]


@pytest.mark.parametrize(
    ("media", "head", "kind"),
    [
        ("text/html", b"<p>x</p>", "html"),
        ("text/plain", b"plain", "text"),
        ("application/json", b"{}", "text"),
        ("application/ld+json", b"{}", "text"),
        ("text/plain", b"ab\x00cd", None),  # says text, is binary
        ("", b"<!DOCTYPE html><html>", "html"),
        ("", b"just words", "text"),
        ("application/octet-stream", b"\x89PNG\r\n\x1a\n\x00\x00", None),
        ("application/octet-stream", "déjà vu".encode(), "text"),
        ("", b"\xff\xfe\xfa\xfb" * 20, None),
        ("application/pdf", b"%PDF-1.7", None),
    ],
)
def test_sniffing(media: str, head: bytes, kind: str | None) -> None:
    assert sniff_kind(media, head) == kind


def test_content_type_header() -> None:
    assert media_type_of('Text/HTML; Charset="ISO-8859-1"') == ("text/html", "ISO-8859-1")
    assert media_type_of(None) == ("", None)


def test_html_links_become_numbered_markers() -> None:
    html = (
        b"<html><head><title>T &amp; co</title></head><body><article><p>See <a href='/a'>one</a>,"
        b" <a href='https://other.example/b'>two \xe2\x80\xa0 dagger</a>, <a href='/a'>one again</a>,"
        b" <a href='mailto:x@y.example'>mail</a> and <a href='/wiki/X_(y)'>paren</a>.</p></article></body></html>"
    )
    page = extract_html(html, "http://site.example/dir/page")
    assert page.title == "T & co"
    assert page.links == ["http://site.example/a", "https://other.example/b", "http://site.example/wiki/X_(y)"]
    assert "See 【0†one】, 【1†two ‡ dagger†other.example】, 【0†one again】, mail and 【2†paren】." in page.text


def test_preview_for_approval(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool()
    search = tool.preview("browser.search", '{"query": "otters"}')
    assert (search.text, search.network) == ("search the web (SearXNG) for 'otters'", True)
    assert tool.preview("browser.open", "{oops").network is False
    assert call(tool, "browser.search", '{"query": "otters"}').status == "done"
    link = tool.preview("browser.open", '{"id": 1}')
    assert (link.text, link.network, link.url) == (f"open {web.url}/kelp", True, f"{web.url}/kelp")
    assert call(tool, "browser.open", '{"id": 1}').status == "done"
    again = tool.preview("browser.open", '{"cursor": 0, "id": 1}')
    assert again.network is False and again.text.endswith("(already fetched)")
    assert tool.preview("browser.open", '{"loc": 3}') == type(again)("scroll page [1] to line 3", False)
    assert tool.preview("browser.find", '{"pattern": "kelp"}').network is False
    assert "Invalid link id" in tool.preview("browser.open", '{"id": 99}').text


def test_config_from_the_config_file_values() -> None:
    config = BrowserConfig.from_options("you", None, True)
    assert (config.provider, config.url, config.allow_private) == ("you", None, True)
    assert BrowserConfig().allow_private is False
    with pytest.raises(ValueError, match="unknown search provider 'bing'"):
        BrowserConfig.from_options("bing", None, False)


def test_output_is_capped(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool(output_limit_bytes=300)
    result = call(tool, "browser.open", json.dumps({"id": f"{web.url}/otters", "num_lines": 100}))
    assert result.status == "done" and result.truncated and "[output cut:" in result.text


def test_reset_starts_a_new_conversation(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool(allow_private=False)
    assert "public internet addresses only" in tool.safety_note()
    assert "allow_private = true" in make_tool(allow_private=True).safety_note()
    assert call(tool, "browser.search", '{"query": "otters"}').status == "done"
    tool.reset()
    assert tool.visited() == [] and tool.sources() == {}
    assert "No pages to access!" in call(tool, "browser.open", '{"id": 0}').text
    assert call(tool, "browser.search", '{"query": "kelp"}').text.startswith("[0] ")
