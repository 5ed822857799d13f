"""``ask``'s citations: ``【cursor†Lx-Ly】`` streams as ``[n]``, held back until it closes, sources after the answer."""

from __future__ import annotations

import io
from collections.abc import Mapping

from hypothesis import example, given
from hypothesis import strategies as st
from openai_harmony import HarmonyEncoding, Message, Role

from harmony_chat.harmony.events import ContentDelta, MessageFinished, MessageStarted
from harmony_chat.harmony.session import ChatSession
from harmony_chat.printing.ask_output import AskPrinter, OutputMode
from harmony_chat.printing.citations import CUT_OFF, CitedAnswer, numbered, one_line
from harmony_chat.tools.browser import PageRecord, find_citations

SOURCES: dict[int, PageRecord] = {
    1: PageRecord("https://a.example/otters", "Sea otter facts", "page", {}),
    2: PageRecord("https://b.example/kelp", "Kelp \x1b[31mforests\n", "page", {}),
}


def stream(answer: CitedAnswer, pieces: list[str]) -> list[str]:
    """Everything ``answer`` hands out for ``pieces``, then the rest at the end."""
    written = [answer.feed(piece) for piece in pieces]
    rest, _ = answer.finish()
    return [*written, rest]


def test_an_unfinished_citation_and_trailing_spaces_wait() -> None:
    answer = CitedAnswer(lambda: SOURCES)
    assert answer.feed("They weigh 14–45 kg【1") == "They weigh 14–45 kg"
    assert answer.feed("†L7-") == ""
    assert answer.feed("L8】, the ") == "[1], the"
    assert answer.feed("most【2†L4】 of ") == " most[2] of"
    assert answer.feed("any (not 【42") == " any (not"
    assert answer.feed("†L1】).") == ")."  # an unknown cursor is dropped with the space before it
    rest, sources = answer.finish()
    assert rest == ""
    assert sources == [
        "[1] Sea otter facts <https://a.example/otters>",
        "[2] Kelp [31mforests <https://b.example/kelp>",
    ]


def test_an_unfinished_citation_at_the_very_end_is_dropped_and_plain_answers_stay_as_they_are() -> None:
    answer = CitedAnswer(lambda: SOURCES)
    assert answer.feed("Cut off here 【1†L") == "Cut off here"
    assert answer.finish() == (" ", [])
    unclosed = CitedAnswer(lambda: SOURCES)
    assert stream(unclosed, ["Brackets 【", "†are text"]) == ["Brackets", "", " 【†are text"]  # no cursor: no citation

    def no_sources() -> Mapping[int, PageRecord]:
        raise AssertionError("an answer without citations never asks for the sources")

    plain = CitedAnswer(no_sources)
    assert stream(plain, ["A [1] plain ", "answer\n"]) == ["A [1] plain", " answer\n", ""]


def test_titles_and_urls_from_pages_print_on_one_line_without_control_characters() -> None:
    assert one_line("Kelp \x1b[31mforests\n\u202eevil\t") == "Kelp [31mforests evil"


segments = st.sampled_from(
    [
        "Otters",
        " ",
        "weigh",
        ", ",
        "\n",
        "kg",
        ".",
        "【1†L7-L8】",
        "【2†L4】",
        "【42†L1】",
        "【0†x】",
        "【2†L",
        "【",
        "†",
        "】",
    ]
)


@given(st.lists(segments, max_size=30), st.lists(st.integers(min_value=0, max_value=400), max_size=8))
@example(["【", "\n"], [])  # "$" also matched before a final newline: the 【 was dropped while streaming
@example(["【2†L", "\n"], [])
def test_any_split_streams_exactly_the_final_rendering(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    points = sorted({min(cut, len(text)) for cut in cuts})
    pieces = [text[start:end] for start, end in zip([0, *points], [*points, len(text)], strict=True)]
    answer = CitedAnswer(lambda: SOURCES)
    written = stream(answer, pieces)
    whole = CitedAnswer(lambda: SOURCES)
    expected = "".join(stream(whole, [text]))
    assert "".join(written) == expected
    kept = CUT_OFF.sub("", text)  # a citation cut off at the very end is dropped, nothing else
    assert kept == text or text[len(kept)] == "【"
    assert expected == numbered(kept, find_citations(kept, SOURCES))
    if "【】" not in text and not any(p in ("【", "†", "】", "【2†L") for p in parts):  # only well-formed citations
        assert "【" not in expected and "】" not in expected


def _finished(text: str, content_type: str | None = None) -> MessageFinished:
    message = Message.from_role_and_content(Role.ASSISTANT, text).with_channel("final")
    if content_type is not None:
        message = message.with_content_type(content_type)
    return MessageFinished(message, 200002)


def test_the_printer_numbers_citations_but_leaves_a_constrained_json_answer_alone(encoding: HarmonyEncoding) -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = AskPrinter(OutputMode(), out, err, ChatSession(encoding), lambda: SOURCES)
    printer.handle(MessageStarted("final", None, None))
    for piece in ["Dense fur【1", "†L3】."]:
        printer.handle(ContentDelta("final", piece))
    printer.handle(_finished("Dense fur【1†L3】."))
    assert out.getvalue() == "Dense fur[1].\n\n[1] Sea otter facts <https://a.example/otters>\n"

    out.seek(0), out.truncate()
    raw = '{"quote": "【1†L3】"}'
    printer.handle(MessageStarted("final", None, "<|constrain|>json"))
    printer.handle(ContentDelta("final", raw))
    printer.handle(_finished(raw, "<|constrain|>json"))
    assert out.getvalue() == raw


def test_json_gets_a_citations_event_after_the_answer(encoding: HarmonyEncoding) -> None:
    out = io.StringIO()
    printer = AskPrinter(OutputMode(json=True), out, io.StringIO(), ChatSession(encoding), lambda: SOURCES)
    printer.handle(_finished("Fur【1†L3】 and kelp【2†L4】."))
    finished, cited = (line for line in out.getvalue().splitlines())
    assert '"text": "Fur【1†L3】 and kelp【2†L4】."' in finished
    assert cited.startswith('{"type": "citations", "text": "Fur[1] and kelp[2]."')
    assert '"title": "Kelp \\u001b[31mforests\\n"' in cited  # JSON escapes what a terminal would obey
