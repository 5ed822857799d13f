"""search → open → find → an answer whose citations render as footnotes and links, against a real loopback web."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from openai_harmony import ToolNamespaceConfig

from harmony_chat.tools.browser import (
    BrowserTool,
    find_citations,
    link_entries,
    numbered_sources,
    sources_from_transcript,
    to_inline_markdown,
    to_markdown,
)
from tests.tools.browser.conftest import call
from tests.tools.browser.web_server import WebServer

ToolFactory = Callable[..., BrowserTool]


def line_of(view: str, text: str) -> int:
    """The number of the first view line that contains ``text``."""
    for row in view.splitlines():
        match = re.match(r"L(\d+): (.*)", row)
        if match and text in match.group(2):
            return int(match.group(1))
    raise AssertionError(f"{text!r} is not in the view:\n{view}")


def test_search_open_find_and_cite(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool()
    searched = call(tool, "browser.search", '{"query": "sea otter weight", "topn": 5}')
    assert searched.status == "done", searched.text
    assert searched.text.startswith("[0] Search results for: sea otter weight\n**viewing lines [0 - ")
    assert "【0†Sea otter facts†127.0.0.1】" in searched.text and "【1†Kelp forests†127.0.0.1】" in searched.text
    assert "not a web page" not in searched.text  # the ftp:// result is dropped
    assert web.web.search_queries[-1] == "sea otter weight"

    opened = call(tool, "browser.open", '{"id": 0}')
    assert opened.status == "done", opened.text
    assert opened.text.startswith(f"[1] Sea otter facts ({web.url}/otters)\n**viewing lines [0 - ")
    weight = line_of(opened.text, "typically weigh between 14 and 45 kg")
    assert "Copyright the otter society" not in opened.text  # trafilatura kept the main text only
    assert "〖9†forged〗" in opened.text and "【9†forged】" not in opened.text  # page text cannot forge markers
    kelp_link = re.search(r"【(\d+)†the kelp article】", opened.text)
    assert kelp_link is not None and "【" in opened.text and "†elsewhere.example】" in opened.text

    found = call(tool, "browser.find", '{"pattern": "45 KG"}')  # case-insensitive
    assert found.status == "done", found.text
    assert found.text.startswith("[2] Find results for text: `45 KG` in `Sea otter facts`")
    assert f"# 【0†match at L{weight}】" in found.text

    followed = call(tool, "browser.open", json.dumps({"cursor": 1, "id": int(kelp_link.group(1))}))
    assert followed.status == "done" and followed.text.startswith(f"[3] Kelp forests ({web.url}/kelp)")
    kelp_line = line_of(followed.text, "keep urchin numbers down")

    find_line = line_of(found.text, "typically weigh between")
    answer = (
        f"Sea otters weigh 14–45 kg【1†L{weight}-L{weight + 1}】 (again: 【2†L{find_line}】), and they help kelp"
        f" forests【3†L{kelp_line}】; results page【0†L4】; a made-up one【42†L1-L2】."
    )
    citations = find_citations(answer, tool.sources())
    assert [item.number for item in citations] == [1, 1, 2, 1, None]
    assert citations[1].lines == (weight, weight)  # a find-results line maps back to the page's line
    assert citations[3].url == f"{web.url}/otters"  # a search-results line maps to the result it belongs to

    markdown = to_markdown(answer, citations)
    assert "【" not in markdown and "】" not in markdown
    assert markdown.startswith("Sea otters weigh 14–45 kg[^1] (again: [^1]), and they help kelp forests[^2];")
    assert "a made-up one." in markdown  # the unknown citation is gone, with the space before it
    assert f"[^1]: [Sea otter facts](<{web.url}/otters>) (lines L{weight}-L{weight + 1}, L{weight})" in markdown
    assert f"[^2]: [Kelp forests](<{web.url}/kelp>) (lines L{kelp_line})" in markdown

    links = link_entries(citations)
    assert [(link.number, link.title, link.url) for link in links] == [
        (1, "Sea otter facts", f"{web.url}/otters"),
        (1, "Sea otter facts", f"{web.url}/otters"),
        (2, "Kelp forests", f"{web.url}/kelp"),
        (1, "Sea otter facts", f"{web.url}/otters"),
    ]
    assert all(answer[link.span[0] : link.span[1]].startswith("【") for link in links)
    inline = to_inline_markdown(answer, citations)
    assert f"kg[[1]](<{web.url}/otters>)" in inline and "【" not in inline
    assert [source.number for source in numbered_sources(citations)] == [1, 2]

    visits = tool.visited()
    assert [(visit.kind, visit.ok) for visit in visits] == [("search", True), ("open", True), ("open", True)]
    assert visits[0].target == "sea otter weight" and visits[0].note == "2 results"
    assert [visit.url for visit in visits[1:]] == [f"{web.url}/otters", f"{web.url}/kelp"]

    # A saved conversation keeps the tool messages: the same citations come back from them alone.
    rebuilt = sources_from_transcript([searched.text, opened.text, found.text, followed.text])
    assert to_markdown(answer, find_citations(answer, rebuilt)) == markdown


def test_scrolling_with_loc_and_num_lines(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool()
    first = call(tool, "browser.open", json.dumps({"id": f"{web.url}/otters", "num_lines": 3}))
    assert first.status == "done"
    assert "**viewing lines [0 - 2] of " in first.text and "L3:" not in first.text
    scrolled = call(tool, "browser.open", '{"loc": 4, "num_lines": 2}')
    assert scrolled.text.startswith(f"[1] Sea otter facts ({web.url}/otters)\n**viewing lines [4 - 5] of ")
    assert "L4:" in scrolled.text and "L6:" not in scrolled.text
    back = call(tool, "browser.open", '{"cursor": 0, "loc": 1, "num_lines": 1}')
    assert back.text.startswith("[2] ") and "**viewing lines [1 - 1] of " in back.text
    last = int(re.search(r"of (\d+)\*\*", first.text).group(1))  # type: ignore[union-attr]
    past = call(tool, "browser.open", json.dumps({"loc": last + 1}))
    assert past.status == "failed" and f"Cannot exceed page maximum of {last}" in past.text
    missing = call(tool, "browser.open", '{"cursor": 3}')  # the failed scroll made no page under cursor 3
    assert missing.status == "failed" and "Available cursor indices: [0 - 2]" in missing.text
    assert len(tool.visited()) == 1  # scrolling fetches nothing


def test_plain_text_page_and_view_source(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool()
    text = call(tool, "browser.open", json.dumps({"id": f"{web.url}/notes.txt"}))
    assert text.status == "done"
    assert text.text.endswith("L0: line one\nL1: line two has otters")
    source = call(tool, "browser.open", json.dumps({"id": f"{web.url}/kelp", "view_source": True}))
    assert source.status == "done" and "<title>Kelp forests</title>" in source.text


def test_a_redirect_is_followed_and_reported(make_tool: ToolFactory, web: WebServer) -> None:
    tool = make_tool()
    result = call(tool, "browser.open", json.dumps({"id": f"{web.url}/chain/2"}))
    assert result.status == "done" and "end of chain" in result.text
    assert f"({web.url}/chain/0)" in result.text.splitlines()[0]
    assert tool.visited()[-1].note == f"redirected to {web.url}/chain/0"


def test_namespace_and_recipients(make_tool: ToolFactory) -> None:
    tool = make_tool()
    namespace = tool.namespace()
    assert isinstance(namespace, ToolNamespaceConfig) and namespace.name == "browser"
    assert [item.name for item in namespace.tools] == ["search", "open", "find"]
    assert all(BrowserTool.handles(name) for name in ("browser.search", "browser.open", "browser.find"))
    assert BrowserTool.handles("browser.click")  # answered with an error the model can read
    assert not BrowserTool.handles("python") and not BrowserTool.handles("functions.browser")
