"""History search: words inside any script, prefixes, short queries, snippets that keep the match."""

from __future__ import annotations

from pathlib import Path

import pytest
from openai_harmony import Message, Role

from harmony_chat.history.store import HistoryStore
from harmony_chat.history.text import fold, make_snippet


def conversation_with(store: HistoryStore, *texts: str) -> int:
    conversation = store.create_conversation({"effort": "low"}, "tiny")
    for text in texts:
        store.add_message(conversation, Message.from_role_and_content(Role.USER, text))
    return conversation


@pytest.fixture
def store(tmp_path: Path) -> HistoryStore:
    return HistoryStore(tmp_path / "history.sqlite3")


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("東京の天気はどうですか？", "東京"),  # two characters inside a Japanese sentence
        ("東京の天気はどうですか？", "天気は"),
        ("北京今天的天气怎么样", "天气"),
        ("Привет, как дела?", "Прив"),  # a prefix
        ("Привет, как дела?", "ривет"),  # inside a word
        ("Weather in Tōkyō?", "tokyo"),  # accents and case
        ("Weather in Tōkyō?", "TŌKYŌ"),
        ("ＦＵＬＬＷＩＤＴＨ letters", "fullwidth"),
        ("Who wrote Romeo and Juliet?", "jul"),
        ("a b", "b"),  # one character
    ],
)
def test_search_finds_words_inside_any_script(store: HistoryStore, text: str, query: str) -> None:
    wanted = conversation_with(store, text)
    conversation_with(store, "Something else entirely: 大阪 and Пока")
    assert [hit.conversation_id for hit in store.search(query)] == [wanted]


def test_every_word_must_match_and_kana_keep_their_marks(store: HistoryStore) -> None:
    both = conversation_with(store, "東京の天気はどうですか？ sunny")
    conversation_with(store, "東京 only")
    assert [hit.conversation_id for hit in store.search("東京 sunny")] == [both]
    assert [hit.conversation_id for hit in store.search("東 sun")] == [both]
    assert store.search("かき") == [] and fold("が") == "が"  # が is not か
    assert store.search('" OR *') == [] and store.search("   ") == []


def test_snippets_keep_the_matched_word_with_its_offsets(store: HistoryStore) -> None:
    conversation = conversation_with(store, "Who wrote Romeo and Juliet? And [b]when[/b]?")
    (hit,) = store.search("juliet")
    assert hit.conversation_id == conversation
    assert hit.snippet == "Who wrote Romeo and Juliet? And [b]when[/b]?"
    assert [hit.snippet[start:end] for start, end in hit.highlights] == ["Juliet"]


def test_snippets_of_long_messages_are_cut_around_the_match() -> None:
    text = "word " * 40 + "Tōkyō is sunny today " + "more " * 40
    snippet, spans = make_snippet(text, [fold("tokyo"), fold("SUNNY")])
    assert snippet.startswith("…") and snippet.endswith("…") and len(snippet) <= 102
    assert [snippet[start:end] for start, end in spans] == ["Tōkyō", "sunny"]
