"""Reasoning summaries in the conversation core, through replay.

A replay plays one recorded completion per ``generate`` call, so a summarised turn is recorded in
three pieces: the turn up to the end of its analysis (where it is paused), the summary's own
completion (after the prefilled ``<|channel|>final<|message|>``), then the rest of the turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Generator, Sequence
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.events import ChatEvent, ReasoningSummary, SummaryStarted
from harmony_chat.chat.pausable import PausableBackend
from harmony_chat.chat.summary import SUMMARY_REQUEST, Summarizer, check_summary, summary_prompt
from harmony_chat.generation.turn import PromptReady, TurnStats
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import ContentDelta
from harmony_chat.harmony.session import ChatSession
from harmony_chat.history.export import to_json, to_markdown
from harmony_chat.history.store import HistoryStore
from tests.helpers import StubBackend, ids

ANALYSIS = "<|channel|>analysis<|message|>The user wants the weather; Tokyo is sunny today.<|end|>"
REST = "<|start|>assistant<|channel|>final<|message|>Sunny in Tokyo.<|return|>"
SUMMARY = "I looked up what the weather in Tokyo is like today.<|return|>"
WHOLE = ANALYSIS + REST


class Recording(ReplayBackend):
    """A replay that keeps every prompt it was given."""

    def __init__(self, turns: list[list[int]]) -> None:
        super().__init__(turns=turns)
        self.prompts: list[list[int]] = []

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        self.prompts.append(list(prompt))
        yield from super().generate(prompt, sampling, stop_ids, should_stop)


class Failing(StubBackend):
    """A summary model that fails as soon as it is asked."""

    model_name = "failing"

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        raise RuntimeError("connection refused")
        yield 0


def chat_with(
    encoding: HarmonyEncoding, turns: list[str], summarizer: Summarizer | None, store: HistoryStore | None = None
) -> tuple[ChatConversation, Recording]:
    backend = Recording([ids(encoding, turn) for turn in turns])
    backend.load()
    session = ChatSession(encoding, start_date="2026-01-01", instructions="Keep the word PLUM private.")
    return ChatConversation(session, backend, store=store, summarizer=summarizer, model_name="t"), backend


def summaries(events: Sequence[ChatEvent]) -> list[ReasoningSummary]:
    return [event for event in events if isinstance(event, ReasoningSummary)]


def final_text(events: list[ChatEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")


def test_summary_mode_writes_a_summary_between_the_analysis_and_the_answer(encoding: HarmonyEncoding) -> None:
    chat, backend = chat_with(encoding, [ANALYSIS, SUMMARY, REST], Summarizer(encoding))
    events = list(chat.send("Weather in Tokyo?"))
    (summary,) = summaries(events)
    assert summary.text == "I looked up what the weather in Tokyo is like today." and summary.failure is None
    assert summary.part == 1 and not summary.live and summary.analysis_tokens > 5
    kinds = [type(event).__name__ for event in events if not isinstance(event, ContentDelta)]
    assert kinds.index("SummaryStarted") < kinds.index("ReasoningSummary")
    first_final = next(i for i, e in enumerate(events) if isinstance(e, ContentDelta) and e.channel == "final")
    assert events.index(summary) < first_final  # shown before the answer starts
    assert final_text(events) == "Sunny in Tokyo."
    # the summary generation's prompt is the turn's exact tokens, closed, then the request
    turn_prompt = next(e for e in events if isinstance(e, PromptReady)).prompt.tokens
    assert backend.prompts[0] == turn_prompt
    assert backend.prompts[1] == summary_prompt(encoding, turn_prompt + ids(encoding, ANALYSIS))
    assert SUMMARY_REQUEST in encoding.decode(backend.prompts[1])
    # the turn resumed from exactly where it was paused
    assert backend.prompts[2] == turn_prompt + ids(encoding, ANALYSIS)
    # the turn's own figures are those of one call
    stats = next(e for e in events if isinstance(e, TurnStats)).stats
    assert stats.generated_tokens == len(ids(encoding, WHOLE)) and stats.prompt_tokens == len(turn_prompt)


def test_the_summary_reuses_the_turns_kv_prefix_and_the_turn_resumes_for_one_token(encoding: HarmonyEncoding) -> None:
    summarizer = Summarizer(encoding)
    chat, backend = chat_with(encoding, [ANALYSIS, SUMMARY, REST], None)
    chat.session.add_user("Weather in Tokyo?")
    turn_prompt = chat.session.render().tokens
    watch = summarizer.watch(backend, SamplingParams(), lambda: False)
    from harmony_chat.generation.turn import run_turn

    events = list(watch.interleave(run_turn(chat.session, watch.model, None)))
    (summary,) = summaries(events)
    shared = len(turn_prompt) + len(ids(encoding, ANALYSIS))
    request = len(backend.prompts[1]) - shared
    assert summary.stats.prompt_tokens == len(backend.prompts[1])
    assert summary.stats.prompt_tokens_reused == shared  # the whole conversation and analysis
    assert summary.stats.prompt_tokens_evaluated == request  # only the summary request
    assert summary.stats.generated_tokens == len(ids(encoding, SUMMARY))
    (resumed,) = watch.model.resumes
    assert resumed.prompt_tokens == shared and resumed.prompt_tokens_evaluated == 1


def test_the_summary_never_enters_the_history_or_the_next_prompt(encoding: HarmonyEncoding) -> None:
    chat, backend = chat_with(encoding, [ANALYSIS, SUMMARY, REST, WHOLE], Summarizer(encoding))
    list(chat.send("Weather in Tokyo?"))
    texts = [part.text for message in chat.session.history for part in message.content]
    assert texts == ["Weather in Tokyo?", "The user wants the weather; Tokyo is sunny today.", "Sunny in Tokyo."]
    chat.summarizer = None
    events = list(chat.send("And tomorrow?"))
    prompt = encoding.decode(next(e for e in events if isinstance(e, PromptReady)).prompt.tokens)
    assert "Sunny in Tokyo." in prompt and "And tomorrow?" in prompt
    assert SUMMARY_REQUEST not in prompt and "I looked up" not in prompt
    assert prompt.count("<|start|>user") == 2


def test_hidden_mode_writes_no_summary_and_runs_one_generation(encoding: HarmonyEncoding) -> None:
    chat, backend = chat_with(encoding, [WHOLE], None)
    events = list(chat.send("Weather in Tokyo?"))
    assert not summaries(events) and not any(isinstance(e, SummaryStarted) for e in events)
    assert len(backend.prompts) == 1 and final_text(events) == "Sunny in Tokyo."


@pytest.mark.parametrize(
    ("completion", "why"),
    [
        ("<|return|>", "wrote nothing"),
        ("   \n<|return|>", "wrote nothing"),
        ("Thinking <|channel|>analysis<|message|>raw thoughts<|return|>", "harmony"),
        ("I use the tag &lt;|start|&gt; here: <|im_start|> stuff<|return|>", "markup"),
        ("I looked at " + "the weather " * 300, "cut off"),
    ],
    ids=["empty", "blank", "special-tokens", "markup-text", "cut-off"],
)
def test_a_failed_summary_shows_nothing_and_the_turn_goes_on(
    encoding: HarmonyEncoding, completion: str, why: str
) -> None:
    chat, _ = chat_with(encoding, [ANALYSIS, completion, REST], Summarizer(encoding))
    events = list(chat.send("Weather in Tokyo?"))
    (summary,) = summaries(events)
    assert summary.text is None and summary.failure is not None and why in summary.failure
    assert summary.stats.generated_tokens > 0  # the cost is reported also for a failure
    assert final_text(events) == "Sunny in Tokyo."


def test_a_summarizer_error_shows_nothing_and_the_turn_goes_on(encoding: HarmonyEncoding) -> None:
    chat, backend = chat_with(encoding, [ANALYSIS, REST], Summarizer(encoding, Failing()))
    events = list(chat.send("Weather in Tokyo?"))
    (summary,) = summaries(events)
    assert summary.text is None and summary.failure == "the summarizer failed: connection refused"
    assert final_text(events) == "Sunny in Tokyo." and len(backend.prompts) == 2


def test_a_separate_summary_model_gets_the_same_prompt(encoding: HarmonyEncoding) -> None:
    other = Recording([ids(encoding, SUMMARY)])
    other.load()
    chat, backend = chat_with(encoding, [ANALYSIS, REST], Summarizer(encoding, other))
    events = list(chat.send("Weather in Tokyo?"))
    (summary,) = summaries(events)
    assert summary.text is not None and summary.text.startswith("I looked up")
    assert other.prompts == [summary_prompt(encoding, backend.prompts[0] + ids(encoding, ANALYSIS))]


def test_live_summaries_come_while_the_analysis_goes_on(encoding: HarmonyEncoding) -> None:
    long_analysis = "<|channel|>analysis<|message|>" + "step by step, " * 40
    live = "So far I am working it out step by step.<|return|>"
    rest_of_analysis = "done.<|end|>" + REST
    summarizer = Summarizer(encoding, live_every=50)
    chat, backend = chat_with(encoding, [long_analysis, live, rest_of_analysis, SUMMARY, REST], summarizer)
    events = list(chat.send("Weather in Tokyo?"))
    got = summaries(events)
    assert [(s.part, s.live, s.text is not None) for s in got] == [(1, True, True), (2, False, True)]
    assert got[0].analysis_tokens < got[1].analysis_tokens
    live_prompt = encoding.decode(backend.prompts[1])
    assert "so far" in live_prompt and live_prompt.count("<|channel|>analysis") == 1
    assert final_text(events) == "Sunny in Tokyo."


def test_summaries_are_stored_searchable_and_never_resumed_as_messages(
    encoding: HarmonyEncoding, tmp_path: Path
) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    chat, _ = chat_with(encoding, [ANALYSIS, SUMMARY, REST], Summarizer(encoding), store=store)
    list(chat.send("Weather in Tokyo?"))
    conversation = chat.conversation_id
    assert conversation is not None
    stored = store.load(conversation)
    (kept,) = stored.summaries
    assert kept.text.startswith("I looked up") and kept.figures["generated_tokens"] > 0
    assert all("I looked up" not in str(message.content) for message in stored.messages)
    assert len(stored.messages) == 2  # the user's message and the answer: analysis is not stored
    assert [hit.conversation_id for hit in store.search("looked up")] == [conversation]
    assert store.list_conversations()[0].messages == 2
    markdown = to_markdown(stored)
    assert markdown.index("## You") < markdown.index("Reasoning summary (written by the model)")
    assert markdown.index("> I looked up what the weather") < markdown.index("## Assistant")
    assert "The user wants the weather" not in markdown
    exported = json.loads(to_json(stored, encoding))
    assert [s["text"] for s in exported["harmony_chat"]["summaries"]] == [kept.text]
    assert "I looked up" not in json.dumps(exported["messages"])
    resumed, _ = chat_with(encoding, [WHOLE], None, store=store)
    resumed.resume(conversation)
    assert "I looked up" not in encoding.decode(resumed.session.render().tokens)
    resumed.drop_last_exchange(keep_user=False)
    assert store.load(conversation).summaries == [] and store.search("looked up") == []


def test_check_summary_keeps_clean_text_only() -> None:
    assert check_summary("  Plain words.\n") == ("Plain words.", None)
    assert check_summary("[bold]not markup to us[/bold]") == ("[bold]not markup to us[/bold]", None)
    assert check_summary("")[0] is None and check_summary("a <|end|> b")[0] is None


def test_summary_prompt_closes_the_analysis_wherever_it_stops(encoding: HarmonyEncoding) -> None:
    context = ids(encoding, "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>analysis<|message|>so")
    for tail in ([], [tk.END], [tk.END, tk.START], [tk.RETURN]):
        prompt = summary_prompt(encoding, context + tail)
        assert prompt[: len(context) + 1] == [*context, tk.END]
        assert encoding.decode(prompt).endswith("<|start|>assistant<|channel|>final<|message|>")


def test_pausing_outside_a_stream_does_nothing(encoding: HarmonyEncoding) -> None:
    inner = ReplayBackend(turns=[ids(encoding, WHOLE)])
    inner.load()
    model = PausableBackend(inner)
    model.pause()
    tokens = list(model.generate([1, 2, 3], SamplingParams(), tk.GENERATION_STOPS, lambda: False))
    assert tokens == ids(encoding, WHOLE) and not model.resumes and not model.streaming


def test_stopping_during_the_summary_stops_it_and_the_turn_keeping_the_reasoning(encoding: HarmonyEncoding) -> None:
    chat, backend = chat_with(encoding, [ANALYSIS, SUMMARY, REST], Summarizer(encoding))
    stopped: list[bool] = []
    events: list[ChatEvent] = []
    for event in chat.send("Weather in Tokyo?", should_stop=lambda: bool(stopped)):
        events.append(event)
        if isinstance(event, SummaryStarted):
            stopped.append(True)  # the user presses stop while the summary is being written
    (summary,) = summaries(events)
    assert summary.text is None and summary.failure == "the summary was stopped"
    assert final_text(events) == "" and next(e for e in events if isinstance(e, TurnStats)).reason.value == "cancelled"
    texts = [part.text for message in chat.session.history for part in message.content]
    assert texts == ["Weather in Tokyo?", "The user wants the weather; Tokyo is sunny today."]
