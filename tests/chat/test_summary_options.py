"""Reasoning modes from the config to the conversation; a summarizer at a URL (a fake engine)."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.events import ReasoningSummary
from harmony_chat.chat.factory import LoadedModel, create_conversation
from harmony_chat.chat.options import ChatOptions
from harmony_chat.chat.summary import summary_prompt
from harmony_chat.config import ConfigError, default_settings, load_settings
from tests.helpers import ids
from tests.support.fake_engine import FakeEngine, load_fixture

ANALYSIS = "<|channel|>analysis<|message|>The user says hi.<|end|>"
REST = "<|start|>assistant<|channel|>final<|message|>Hello!<|return|>"
SUMMARY = "I read the greeting.<|return|>"


@pytest.fixture
def fake() -> Iterator[FakeEngine]:
    engine = FakeEngine(load_fixture("vllm"))
    yield engine
    engine.close()


def loaded(encoding: HarmonyEncoding, turns: list[str]) -> LoadedModel:
    backend = ReplayBackend(turns=[ids(encoding, turn) for turn in turns])
    info = backend.load()
    return LoadedModel(backend, info, encoding, None)


def test_the_config_chooses_the_mode_and_the_summarizer(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[ui]\nreasoning = "summary"\n[reasoning]\nsummarizer = "http://127.0.0.1:9"\nlive = true\nlive_every = 64\n'
    )
    settings = ChatOptions(load_settings(path)).settings
    reasoning = settings.reasoning
    assert (settings.ui.reasoning, reasoning.summarizer, reasoning.live, reasoning.live_every) == (
        "summary",
        "http://127.0.0.1:9",
        True,
        64,
    )
    assert ChatOptions(load_settings(tmp_path / "none.toml")).settings.ui.reasoning == "hidden"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[ui]\nreasoning = "shown"\n', "line 2"),
        ('[reasoning]\nsummarizer = "other"\n', 'line 2: reasoning.summarizer: must be "same" or the http'),
        ("[reasoning]\nlive_every = 5\n", "line 2"),
    ],
)
def test_bad_reasoning_settings_are_one_clear_error(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(words)):
        load_settings(path)


def test_summary_mode_builds_a_summarizer_and_the_others_do_not(encoding: HarmonyEncoding) -> None:
    for mode, summarized in (("hidden", False), ("raw", False), ("summary", True)):
        options = ChatOptions(default_settings({"ui.reasoning": mode}))
        chat = create_conversation(options, loaded(encoding, [ANALYSIS, SUMMARY, REST]))
        events = list(chat.send("hi"))
        assert any(isinstance(event, ReasoningSummary) for event in events) is summarized, mode


def test_a_summarizer_at_a_url_gets_the_summary_prompt(encoding: HarmonyEncoding, fake: FakeEngine) -> None:
    model = loaded(encoding, [ANALYSIS, REST])  # paused at the analysis' end, then resumed
    settings = default_settings({"ui.reasoning": "summary", "reasoning.summarizer": fake.url})
    chat = create_conversation(ChatOptions(settings), model)
    events = list(chat.send("hi"))
    (summary,) = [event for event in events if isinstance(event, ReasoningSummary)]
    (request,) = fake.generate_requests()
    turn_prompt = chat.session.render_messages(chat.session.history[:1])
    assert request.body["prompt"] == summary_prompt(encoding, turn_prompt + ids(encoding, ANALYSIS))
    # the fixture's engine answers with a whole turn, headers and all: that is no summary to show
    assert summary.text is None and summary.failure is not None and "harmony" in summary.failure
    assert summary.stats.engine == "vllm" and summary.stats.generated_tokens > 0
    chat.close()


def test_an_unreachable_summarizer_shows_nothing_and_is_not_tried_again(encoding: HarmonyEncoding) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"  # nothing listens there once it is closed
    model = loaded(encoding, [ANALYSIS, REST])
    settings = default_settings({"ui.reasoning": "summary", "reasoning.summarizer": url})
    chat = create_conversation(ChatOptions(settings), model)
    first = [e for e in chat.send("hi") if isinstance(e, ReasoningSummary)]
    started = time.perf_counter()
    second = [e for e in chat.send("hi again") if isinstance(e, ReasoningSummary)]
    assert first[0].text is None and first[0].failure is not None
    assert first[0].failure.startswith("the summarizer failed: ")
    assert second[0].failure == first[0].failure and time.perf_counter() - started < 5
    assert chat.last_answer() == "Hello!"
