"""Reasoning summaries on the real llama.cpp path, with the pocket gpt-oss.

The pocket model learned one summary per trained conversation (``pocket/data.py``): the summary
is the one it learned, the summary generation shares the turn's KV prefix, the turn resumes for
one token and gives the answer it gives without a summary, nothing of the summary reaches the next
prompt, and a failed summary shows nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.events import ChatEvent, ReasoningSummary
from harmony_chat.chat.summary import SUMMARY_REQUEST, Summarizer, summary_prompt
from harmony_chat.cli import main
from harmony_chat.demo.pocket import POCKET_DATE, pocket_model_path
from harmony_chat.generation.turn import PromptReady, TurnOptions, TurnStats, run_turn
from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.events import ContentDelta
from harmony_chat.harmony.session import ChatSession
from training.pocket.data import CHECKED, FACT_SUMMARIES, FACTS

pytestmark = pytest.mark.llama
GREEDY = SamplingParams(temperature=0.0, max_tokens=300)


@pytest.fixture(scope="module")
def pocket() -> Iterator[LlamaCppBackend]:
    backend = LlamaCppBackend(pocket_model_path(), context_size=2048)
    backend.load()
    yield backend
    backend.close()


def chat(encoding: HarmonyEncoding, backend: LlamaCppBackend, summarizer: Summarizer | None) -> ChatConversation:
    session = ChatSession(encoding, start_date=POCKET_DATE)
    return ChatConversation(session, backend, sampling=GREEDY, summarizer=summarizer, raw_tokens=False)


def answer(events: Sequence[ChatEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")


def test_the_summary_shares_the_kv_prefix_and_the_turn_resumes_unchanged(
    encoding: HarmonyEncoding, pocket: LlamaCppBackend
) -> None:
    question, final, *_ = FACTS[0]
    plain = list(chat(encoding, pocket, None).send(question))
    session = ChatSession(encoding, start_date=POCKET_DATE)
    session.add_user(question)
    watch = Summarizer(encoding).watch(pocket, GREEDY, lambda: False)
    events = list(watch.interleave(run_turn(session, watch.model, TurnOptions(sampling=GREEDY, raw_tokens=False))))
    (summary,) = [event for event in events if isinstance(event, ReasoningSummary)]
    turn_prompt = next(event for event in events if isinstance(event, PromptReady)).prompt.tokens
    request = len(summary_prompt(encoding, [])) - 1
    # llama.cpp had not evaluated the analysis' last token (<|end|>): that one and the request are new
    assert summary.stats.prompt_tokens_evaluated == request + 1
    assert summary.stats.prompt_tokens_reused == summary.stats.prompt_tokens - request - 1 > len(turn_prompt)
    assert summary.text == FACT_SUMMARIES[0] and summary.failure is None
    assert summary.stats.generated_tokens > 0 and summary.seconds > 0
    (resumed,) = watch.model.resumes
    assert resumed.prompt_tokens_evaluated == 1  # the turn's prefix was still in the cache
    # the summary changed nothing in the turn: the same answer, the same tokens, as without one
    assert answer(events) == answer(plain) == final
    stats = next(event for event in events if isinstance(event, TurnStats)).stats
    assert stats.generated_tokens == next(e for e in plain if isinstance(e, TurnStats)).stats.generated_tokens


def test_nothing_of_the_summary_reaches_the_next_prompt(encoding: HarmonyEncoding, pocket: LlamaCppBackend) -> None:
    second_prompts = []
    for summarizer in (Summarizer(encoding), None):
        conversation = chat(encoding, pocket, summarizer)
        first = list(conversation.send(FACTS[0][0]))
        summaries = [event for event in first if isinstance(event, ReasoningSummary)]
        assert len(summaries) == (1 if summarizer else 0)
        conversation.summarizer = None
        second = list(conversation.send(FACTS[1][0]))
        second_prompts.append(next(e for e in second if isinstance(e, PromptReady)).prompt.tokens)
    # the next prompt is the very same, token for token, as when no summary was ever written
    assert second_prompts[0] == second_prompts[1]
    assert SUMMARY_REQUEST not in encoding.decode(second_prompts[0])


def test_a_failed_summary_shows_nothing_and_the_answer_still_comes(
    encoding: HarmonyEncoding, pocket: LlamaCppBackend
) -> None:
    question, final, *_ = FACTS[2]
    events = list(chat(encoding, pocket, Summarizer(encoding, max_tokens=1)).send(question))
    (summary,) = [event for event in events if isinstance(event, ReasoningSummary)]
    assert summary.text is None and summary.failure is not None
    assert summary.stats.generated_tokens == 1
    assert answer(events) == final


def test_ask_demo_in_each_mode(capsys: pytest.CaptureFixture[str]) -> None:
    question, final, _, medium, _ = FACTS[0]
    outputs = {}
    for mode in ("hidden", "summary", "raw"):
        code = main(["ask", "--demo", "--temperature", "0", "--reasoning", mode, question])
        outputs[mode] = capsys.readouterr()
        assert code == 0 and outputs[mode].out == final + "\n"
    assert "[summary]" not in outputs["hidden"].err + outputs["raw"].err
    assert medium not in outputs["hidden"].err + outputs["summary"].err
    assert f"[reasoning] {medium}" in outputs["raw"].err
    main(["ask", "--demo", "--temperature", "0", "--reasoning", "summary", "--json", question])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (summary,) = [line for line in lines if line["type"] == "summary"]
    assert summary["text"] == FACT_SUMMARIES[0] and f"[summary] {FACT_SUMMARIES[0]}" in outputs["summary"].err
    assert lines[-1]["summary_tokens"] == summary["generated_tokens"] > 0


@pytest.mark.parametrize("effort", ["low", "high"])
def test_each_effort_gets_its_own_learned_summary(
    encoding: HarmonyEncoding, pocket: LlamaCppBackend, effort: Effort
) -> None:
    """Every known fact: the summary learned for this effort (high adds the check), the answer unchanged.

    Learned, not looked up: greedy, the shipped build writes another summary for two of the 33 facts
    and efforts (*What is the square root of 81?* at high effort, *What is the boiling point of water
    in Celsius?* at medium), so one wrong summary per effort is allowed.
    """
    wrong = []
    for index, (question, final, *_) in enumerate(FACTS):
        session = ChatSession(encoding, start_date=POCKET_DATE, effort=effort)
        summarizer = Summarizer(encoding)
        conversation = ChatConversation(session, pocket, sampling=GREEDY, summarizer=summarizer, raw_tokens=False)
        events = list(conversation.send(question))
        (summary,) = [event for event in events if isinstance(event, ReasoningSummary)]
        if summary.text != FACT_SUMMARIES[index] + (CHECKED if effort == "high" else ""):
            wrong.append((question, summary.text))
        assert answer(events) == final
    assert len(wrong) <= 1, wrong
