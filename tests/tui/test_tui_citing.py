"""The TUI's citation rendering and the layout of a stored conversation (summaries, cited pages): pure functions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from openai_harmony import Author, Message, Role, TextContent

from harmony_chat.history.store import StoredConversation, StoredSummary
from harmony_chat.tools.browser import PageRecord
from harmony_chat.tui.citing import answer_markdown, copy_markdown, sources_markdown
from harmony_chat.tui.stored import stored_exchanges

SOURCES = {
    0: PageRecord("https://example.org/kelp", "Kelp [forests] *and* `otters`"),
    1: PageRecord("https://example.org/otters?a=1&b=(2)", "Sea otter facts"),
}
ANSWER = "Otters weigh 14 to 45 kg【1†L7-L8】 and keep kelp growing【0†L3】 (made up【9†L1】)."


def test_citations_become_numbered_links_and_unknown_ones_disappear() -> None:
    shown = answer_markdown(ANSWER, SOURCES, final=True)
    assert shown == (
        "Otters weigh 14 to 45 kg[[1]](<https://example.org/otters?a=1&b=(2)>) and keep kelp growing"
        "[[2]](<https://example.org/kelp>) (made up)."
    )
    links = [
        token.attrGet("href")
        for block in MarkdownIt("gfm-like").parse(shown)
        for token in block.children or []
        if token.type == "link_open"
    ]
    assert links == ["https://example.org/otters?a=1&b=(2)", "https://example.org/kelp"]


def test_the_sources_list_names_each_page_once_with_its_title_as_text() -> None:
    listed = sources_markdown(ANSWER, SOURCES)
    inline = [token for token in MarkdownIt("gfm-like").parse(listed) if token.type == "inline"]
    assert [token.content for token in inline][0] == "**Sources**"
    assert len(inline) == 3  # the heading and one item per page, in the order of their numbers
    otters, kelp = (token.children or [] for token in inline[1:])
    assert [child.attrGet("href") for child in otters if child.type == "link_open"] == [
        "https://example.org/otters?a=1&b=(2)"
    ]
    assert "".join(child.content for child in kelp if child.type == "text") == "Kelp [forests] *and* `otters` "
    assert [child.content for child in kelp if child.type == "code_inline"] == ["https://example.org/kelp"]
    assert sources_markdown("No citation here.", SOURCES) == ""
    assert sources_markdown("Only an unknown one【7†L1】.", SOURCES) == ""


def test_the_copy_has_footnotes_and_no_raw_brackets() -> None:
    copied = copy_markdown(ANSWER, SOURCES)
    assert "【" not in copied and "[^1]: [Sea otter facts](<https://example.org/otters?a=1&b=(2)>)" in copied
    assert copy_markdown("Plain.", SOURCES) == "Plain."


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=list("【】†L-0129 a\r\n.\t"), max_size=40))
def test_what_is_shown_while_streaming_only_ever_grows(text: str) -> None:
    shown = ""
    for end in range(len(text) + 1):
        now = answer_markdown(text[:end], SOURCES, final=end == len(text))
        assert now.startswith(shown), (text, end)
        shown = now


def message(role: Role, text: str, name: str | None = None, channel: str | None = None) -> Message:
    author = Author(role=role, name=name)
    return Message(author=author, content=[TextContent(text=text)], channel=channel)


def test_stored_summaries_go_before_the_answer_after_them_and_covered_live_ones_are_dropped() -> None:
    view = "[0] Sea otter facts (https://example.org/otters)\n**viewing lines [0 - 1] of 1**\n\nL0: a\nL1: b"
    messages = [
        message(Role.USER, "q1"),  # id 1
        message(Role.ASSISTANT, "{}", channel="analysis"),  # id 4: a browser call (after summaries 2 and 3)
        message(Role.TOOL, view, name="browser.open", channel="analysis"),  # id 5
        message(Role.ASSISTANT, "Answer【0†L1】", channel="final"),  # id 7, after summary 6
        message(Role.USER, "q2"),  # id 8
        message(Role.ASSISTANT, "Second", channel="final"),  # id 9; summary 10 comes after it
    ]
    messages[1] = Message(
        author=Author(role=Role.ASSISTANT),
        content=[TextContent(text="{}")],
        channel="analysis",
        recipient="browser.open",
    )
    stored = StoredConversation(1, "t", "m", 0.0, {})
    stored.messages = messages
    stored.message_turns = [None, 1, 1, 1, None, 2]
    stored.message_ids = [1, 4, 5, 7, 8, 9]
    stored.summaries = [
        StoredSummary(2, 1, "so far", {"live": True}),
        StoredSummary(3, 1, "first analysis", {"live": False}),
        StoredSummary(6, 1, "second analysis", {"live": False}),
        StoredSummary(10, 2, "late", {"live": False}),
    ]
    first, second = stored_exchanges(stored)
    assert first.summaries == [(0, "first analysis"), (2, "second analysis")]
    assert first.turn == 1 and [m.channel for m in first.answers] == ["analysis", "analysis", "final"]
    assert first.sources[0].url == "https://example.org/otters"
    assert second.summaries == [(1, "late")] and second.turn == 2
