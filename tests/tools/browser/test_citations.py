"""Citations as pure functions: parsing, numbering, unknown cursors, renderers, streaming, saved transcripts."""

from __future__ import annotations

from harmony_chat.tools.browser import (
    PageRecord,
    find_citations,
    link_entries,
    sources_from_transcript,
    strip_partial,
    to_inline_markdown,
    to_markdown,
)
from harmony_chat.tools.browser.citations import escape_markdown, record_of
from harmony_chat.tools.browser.pages import find_in_page, make_page, render_view, search_page

PAGE = PageRecord("https://a.example/otters", "Otters", "page", {n: f"line {n}" for n in range(20)})
OTHER = PageRecord("https://b.example/kelp", "Kelp [brown] *algae*", "page", {0: "kelp"})


def test_both_forms_and_numbering_by_url() -> None:
    text = "A【1†L3-L5】 B【2†L0】 C【4†L7】 D【1†L9 - L8】"
    citations = find_citations(text, {1: PAGE, 2: OTHER, 4: PAGE})
    assert [(item.cursor, item.number, item.lines) for item in citations] == [
        (1, 1, (3, 5)),
        (2, 2, (0, 0)),
        (4, 1, (7, 7)),  # another cursor on the same URL keeps its number
        (1, 1, (8, 9)),  # reversed ranges are put in order
    ]
    assert all(text[item.start : item.end].startswith("【") for item in citations)


def test_unknown_cursors_never_show_as_brackets() -> None:
    text = "Fact one【7†L1-L2】. Fact two 【8†L3】, and a word【9†L1】after."
    citations = find_citations(text, {})
    assert [item.number for item in citations] == [None, None, None]
    assert to_markdown(text, citations) == "Fact one. Fact two, and a wordafter."
    assert to_inline_markdown(text, citations) == "Fact one. Fact two, and a wordafter."
    assert link_entries(citations) == []


def test_a_citation_without_lines_cites_the_page() -> None:
    citations = find_citations("see【1†Otters page】", {1: PAGE})
    assert (citations[0].number, citations[0].url, citations[0].lines) == (1, PAGE.url, None)
    assert to_markdown("see【1†Otters page】", citations).endswith("[^1]: [Otters](<https://a.example/otters>)\n")


def test_footnotes_escape_titles_and_urls() -> None:
    weird = PageRecord("https://c.example/a b<c>(d)", "Title ](x) [^2]: *bold*", "page", {0: "x"})
    markdown = to_markdown("claim【0†L0】", find_citations("claim【0†L0】", {0: weird}))
    assert markdown == (
        "claim[^1]\n\n[^1]: [Title \\]\\(x\\) \\[^2\\]: \\*bold\\*](<https://c.example/a%20b%3Cc%3E(d)>) (lines L0)\n"
    )
    assert escape_markdown("a\nb  c") == "a b c"


def test_partial_citation_at_the_end_is_hidden_while_streaming() -> None:
    assert strip_partial("Sea otters weigh 14–45 kg【3†L10-") == "Sea otters weigh 14–45 kg"
    assert strip_partial("text【") == "text"
    assert strip_partial("done【3†L1】") == "done【3†L1】"
    assert strip_partial("no citation") == "no citation"


def test_search_and_find_pages_point_at_real_pages() -> None:
    results = search_page(
        "otters",
        "SearXNG",
        [("Otters", "https://a.example/otters", "About otters " * 20), ("Kelp", "https://b.example/kelp", "")],
        80,
    )
    page = make_page("https://a.example/otters", "Otters", "\n".join(f"row {n}" for n in range(30)), [], 80)
    found = find_in_page(page, "row 2")  # rows 2 and 20-29
    sources = {0: record_of(results), 1: record_of(page), 2: record_of(found)}
    view = render_view(results, 0, 0, -1, view_chars=4000, max_lines=200)
    kelp_line = next(int(row[1:].split(":")[0]) for row in view.splitlines() if "【1†Kelp" in row)
    snippet_line = kelp_line - 2  # the last line of the first result's wrapped snippet
    text = f"a【0†L{snippet_line}】 b【0†L{kelp_line}】 c【0†L0】 d【2†L1-L2】 e【2†L0】"
    citations = find_citations(text, sources)
    assert [(item.number, item.url) for item in citations[:2]] == [
        (1, "https://a.example/otters"),
        (2, "https://b.example/kelp"),
    ]
    assert citations[2].number is None  # the heading above every result names none
    assert (citations[3].url, citations[3].lines, citations[3].title) == ("https://a.example/otters", (2, 3), "Otters")
    assert (citations[4].number, citations[4].lines) == (1, None)  # a find heading line: the page, no lines


def test_transcript_rebuilds_the_same_sources() -> None:
    results = search_page("otters", "Exa", [("Otters", "https://a.example/otters", "about otters")], 80)
    page = make_page(
        "https://a.example/otters", "Otters (the animal)", "one\ntwo otters\nthree\nfour\nfive\nsix otters", [], 80
    )
    found = find_in_page(page, "otters")
    views = [
        render_view(results, 0, 0, -1, view_chars=4000, max_lines=200),
        render_view(page, 1, 0, -1, view_chars=4000, max_lines=200),
        render_view(found, 2, 0, -1, view_chars=4000, max_lines=200),
        "Error fetching URL `https://x.example`: HTTP 404 Not Found for https://x.example",
    ]
    live = {0: record_of(results), 1: record_of(page), 2: record_of(found)}
    rebuilt = sources_from_transcript(views)
    text = "x【0†L4】 y【1†L1】 z【2†L1】 w【2†L7】"
    assert find_citations(text, rebuilt) == find_citations(text, live)
    assert rebuilt[1].title == "Otters (the animal)" and rebuilt[1].url == "https://a.example/otters"
    assert rebuilt[2].origin_lines == {1: 1, 2: 2, 3: 3, 4: 4, 7: 5}
    assert find_citations(text, rebuilt)[3].lines == (5, 5)
