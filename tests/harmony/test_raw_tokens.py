"""The raw view (``--raw``, ``--json`` token events, the TUI's debug mode) spells out every id, the first time too."""

from __future__ import annotations

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.harmony import decoder
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.decoder import StreamDecoder, token_text
from harmony_chat.harmony.events import RawToken
from tests.helpers import ids


@pytest.fixture
def first_sight(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty memo of token texts, as a fresh process has (other tests fill the shared one)."""
    monkeypatch.setattr(decoder, "_TEXT_CACHE", {})


@pytest.mark.usefixtures("first_sight")
def test_every_id_is_spelled_out_the_first_time_and_the_same_after(encoding: HarmonyEncoding) -> None:
    text_ids = ids(encoding, " Zürich")
    invalid = [tk.VOCAB_SIZE + 5, -1]
    stream = [tk.CHANNEL, *text_ids, 200020, *invalid]
    first = [token_text(encoding, token) for token in stream]
    assert first == [
        "<|channel|>",
        *[encoding.decode([token]) for token in text_ids],
        "<|reserved_200020|>",
        f"<|invalid_{tk.VOCAB_SIZE + 5}|>",
        "<|invalid_-1|>",
    ]
    assert "".join(first[1 : 1 + len(text_ids)]) == " Zürich"
    assert [token_text(encoding, token) for token in stream] == first


@pytest.mark.usefixtures("first_sight")
def test_raw_token_events_carry_each_token_s_text_and_where_it_went(encoding: HarmonyEncoding) -> None:
    decoding = StreamDecoder(encoding)
    turn = "<|channel|>commentary to=functions.f<|message|>{}<|call|>"
    raw = [event for token in ids(encoding, turn) for event in decoding.feed(token) if isinstance(event, RawToken)]
    assert [event.token_id for event in raw] == ids(encoding, turn)
    assert "".join(event.text for event in raw) == turn
    assert [event.special for event in raw] == [event.text.startswith("<|") for event in raw]
    (arguments,) = [event for event in raw if event.text == "{}"]
    assert (arguments.channel, arguments.recipient) == ("commentary", "functions.f")
    assert (raw[0].channel, raw[0].recipient) == (None, None)  # header tokens belong to no message yet
