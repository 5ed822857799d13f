"""Reasoning summaries through both APIs, with the official openai client over replayed turns.

A replay plays one recorded completion per ``generate`` call, so a summarised turn is three
recordings: the turn up to the end of its analysis (where it pauses), the summary's own
completion (after the prefilled ``<|channel|>final<|message|>``), then the rest of the turn.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from openai import BadRequestError
from openai.types.responses import (
    ResponseOutputItemDoneEvent,
    ResponseReasoningItem,
    ResponseReasoningSummaryPartAddedEvent,
    ResponseReasoningSummaryPartDoneEvent,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningSummaryTextDoneEvent,
)
from openai_harmony import HarmonyEncoding

from harmony_chat.chat.summary import SUMMARY_MAX_TOKENS, SUMMARY_REQUEST, summary_prompt
from harmony_chat.server.summaries import CONCISE_REQUEST, DETAILED_REQUEST
from tests.helpers import ids
from tests.server.conftest import replay_server

ANALYSIS = "<|channel|>analysis<|message|>Simple sum.<|end|>"
SUMMARY = "I added the two numbers.<|return|>"
REST = "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
WHOLE = ANALYSIS + REST
USER: Any = [{"role": "user", "content": "What is 2 + 2?"}]
SUMMARY_TEXT = "I added the two numbers."


def _summary_of(encoding: HarmonyEncoding, backend: Any) -> tuple[str, int]:
    """The summary generation's prompt (decoded) and its token limit."""
    return str(encoding.decode(backend.prompts[1])), backend.samplings[1].max_tokens


# -- Responses ---------------------------------------------------------------------------------


def test_responses_fill_the_reasoning_items_summary_and_keep_its_content(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANALYSIS, SUMMARY, REST)
    with server as running:
        response = running.client().responses.create(
            model="replay-model", input="What is 2 + 2?", reasoning={"summary": "auto"}
        )
    reasoning, message = response.output
    assert isinstance(reasoning, ResponseReasoningItem)
    assert [(part.type, part.text) for part in reasoning.summary] == [("summary_text", SUMMARY_TEXT)]
    assert [(part.type, part.text) for part in reasoning.content or []] == [("reasoning_text", "Simple sum.")]
    assert response.output_text == "2 + 2 = 4." and response.reasoning is not None
    assert response.reasoning.summary == "auto"
    # the summary is the model's own generation from the turn's prefix, with the app's request
    turn_prompt = backend.prompts[0]
    assert backend.prompts[1] == summary_prompt(encoding, turn_prompt + ids(encoding, ANALYSIS))
    assert _summary_of(encoding, backend) == (encoding.decode(backend.prompts[1]), SUMMARY_MAX_TOKENS)
    assert backend.prompts[2] == turn_prompt + ids(encoding, ANALYSIS)  # the turn resumed where it paused
    # its tokens are counted as output, and shown apart
    assert response.usage is not None
    details = response.usage.output_tokens_details.model_extra or {}
    assert details["summary_tokens"] == len(ids(encoding, SUMMARY))
    assert response.usage.output_tokens == len(ids(encoding, WHOLE)) + len(ids(encoding, SUMMARY))


def test_responses_stream_the_summary_in_openais_order_and_shapes(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANALYSIS, SUMMARY, REST)
    with server as running:
        events = list(
            running.client().responses.create(
                model="replay-model", input="What is 2 + 2?", reasoning={"summary": "detailed"}, stream=True
            )
        )
    assert [event.sequence_number for event in events] == list(range(len(events)))
    kinds = [event.type for event in events]
    reasoning_deltas = kinds.count("response.reasoning_text.delta")
    answer_deltas = kinds.count("response.output_text.delta")
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.reasoning_text.delta"] * reasoning_deltas,
        "response.reasoning_text.done",
        "response.content_part.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * answer_deltas,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    start = kinds.index("response.reasoning_summary_part.added")
    added, delta, done, part_done, item_done = events[start : start + 5]
    assert isinstance(added, ResponseReasoningSummaryPartAddedEvent)
    assert isinstance(delta, ResponseReasoningSummaryTextDeltaEvent)
    assert isinstance(done, ResponseReasoningSummaryTextDoneEvent)
    assert isinstance(part_done, ResponseReasoningSummaryPartDoneEvent)
    assert isinstance(item_done, ResponseOutputItemDoneEvent)
    reasoning_id = events[2].item.id  # type: ignore[union-attr]
    for event in (added, delta, done, part_done):
        assert (event.item_id, event.output_index, event.summary_index) == (reasoning_id, 0, 0)
    assert (added.part.type, added.part.text) == ("summary_text", "")
    assert delta.delta == SUMMARY_TEXT and done.text == SUMMARY_TEXT and part_done.part.text == SUMMARY_TEXT
    item = item_done.item
    assert isinstance(item, ResponseReasoningItem) and item.status == "completed"
    assert [part.text for part in item.summary] == [SUMMARY_TEXT]
    completed = events[-1]
    assert completed.type == "response.completed" and completed.response.output_text == "2 + 2 = 4."
    assert completed.response.output[0].summary[0].text == SUMMARY_TEXT  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("level", "request_text", "limit"),
    [
        ("auto", SUMMARY_REQUEST, SUMMARY_MAX_TOKENS),
        ("concise", CONCISE_REQUEST, 100),
        ("detailed", DETAILED_REQUEST, 400),
    ],
)
def test_each_summary_level_asks_the_model_its_own_way(
    encoding: HarmonyEncoding, level: str, request_text: str, limit: int
) -> None:
    backend, server = replay_server(encoding, ANALYSIS, SUMMARY, REST)
    reasoning: Any = {"summary": level}
    with server as running:
        running.client().responses.create(model="replay-model", input="What is 2 + 2?", reasoning=reasoning)
    prompt, max_tokens = _summary_of(encoding, backend)
    request_end = f"<|start|>user<|message|>{request_text}<|end|><|start|>assistant<|channel|>final<|message|>"
    assert prompt.endswith(request_end)
    assert max_tokens == limit


def test_the_old_generate_summary_name_is_accepted(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANALYSIS, SUMMARY, REST)
    with server as running:
        response = running.client().responses.create(
            model="replay-model", input="What is 2 + 2?", reasoning={"generate_summary": "concise"}
        )
    assert response.output[0].summary[0].text == SUMMARY_TEXT  # type: ignore[union-attr]


def test_without_a_summary_request_there_is_one_generation_and_no_summary(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, WHOLE)
    with server as running:
        response = running.client().responses.create(model="replay-model", input="What is 2 + 2?")
    assert response.output[0].summary == [] and len(backend.prompts) == 1  # type: ignore[union-attr]
    assert response.reasoning is not None and response.reasoning.summary is None


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_failed_summary_shows_nothing_and_the_answer_comes(
    encoding: HarmonyEncoding, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    markup = "Thinking <|channel|>analysis<|message|>raw thoughts<|return|>"
    backend, server = replay_server(encoding, ANALYSIS, markup, REST)
    response: Any
    caplog.set_level(logging.INFO, logger="harmony_chat.server")
    with server as running:
        client = running.client()
        if stream:
            events = list(
                client.responses.create(
                    model="replay-model", input="What is 2 + 2?", reasoning={"summary": "auto"}, stream=True
                )
            )
            kinds = [event.type for event in events]
            assert not [kind for kind in kinds if "summary" in kind]
            assert kinds.count("response.output_item.done") == 2  # the reasoning item still ends
            response = events[-1].response  # type: ignore[union-attr]
        else:
            response = client.responses.create(
                model="replay-model", input="What is 2 + 2?", reasoning={"summary": "auto"}
            )
    assert response.output[0].summary == [] and response.output_text == "2 + 2 = 4."
    assert "raw thoughts" not in response.model_dump_json()
    assert len(backend.prompts) == 3  # the summary was tried
    assert "a reasoning summary is left out: the summarizer wrote" in caplog.text  # the operator learns why


def test_a_summary_never_enters_the_next_prompt(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANALYSIS, SUMMARY, REST, WHOLE, WHOLE)
    with server as running:
        client = running.client()
        first = client.responses.create(model="replay-model", input="What is 2 + 2?", reasoning={"summary": "auto"})
        client.responses.create(model="replay-model", input="And 3 + 3?", previous_response_id=first.id)
        # a client that sends the reasoning item back itself, summary and all
        sent_back: Any = [*USER, *[item.model_dump(exclude_none=True) for item in first.output]]
        client.responses.create(model="replay-model", input=[*sent_back, {"role": "user", "content": "And 3 + 3?"}])
    for prompt in (encoding.decode(backend.prompts[3]), encoding.decode(backend.prompts[4])):
        assert "2 + 2 = 4." in prompt and "And 3 + 3?" in prompt
        assert SUMMARY_TEXT not in prompt and SUMMARY_REQUEST not in prompt


@pytest.mark.parametrize("value", ["brief", "none", ""])
def test_an_unknown_summary_level_is_a_400_naming_the_field(encoding: HarmonyEncoding, value: str) -> None:
    backend, server = replay_server(encoding, WHOLE)
    reasoning: Any = {"summary": value}
    with server as running:
        client = running.client()
        with pytest.raises(BadRequestError) as responses_error:
            client.responses.create(model="replay-model", input="Hi", reasoning=reasoning)
        with pytest.raises(BadRequestError) as chat_error:
            client.chat.completions.create(
                model="replay-model", messages=USER, extra_body={"reasoning": {"summary": value}}
            )
    for error in (responses_error.value, chat_error.value):
        assert error.status_code == 400 and "reasoning.summary must be auto, concise or detailed" in error.message
        assert error.body is not None and error.body["param"] == "reasoning.summary"  # type: ignore[index]
    assert backend.prompts == []


# -- Chat Completions --------------------------------------------------------------------------


def _details(extra: dict[str, Any] | None) -> list[dict[str, Any]]:
    return list((extra or {}).get("reasoning_details") or [])


def test_chat_returns_summaries_as_openrouters_reasoning_details(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANALYSIS, SUMMARY, REST)
    with server as running:
        completion = running.client().chat.completions.create(
            model="replay-model", messages=USER, extra_body={"reasoning": {"summary": "auto"}}
        )
    message = completion.choices[0].message
    assert message.content == "2 + 2 = 4."
    assert message.model_extra == {
        "reasoning": "Simple sum.",
        "reasoning_details": [{"type": "reasoning.summary", "summary": SUMMARY_TEXT, "format": "unknown", "index": 0}],
    }
    usage = completion.usage
    assert usage is not None and usage.completion_tokens_details is not None
    assert (usage.completion_tokens_details.model_extra or {})["summary_tokens"] == len(ids(encoding, SUMMARY))
    assert usage.completion_tokens == len(ids(encoding, WHOLE)) + len(ids(encoding, SUMMARY))
    assert SUMMARY_REQUEST in encoding.decode(backend.prompts[1])


def test_chat_excluding_reasoning_still_returns_the_summary(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANALYSIS, SUMMARY, REST)
    with server as running:
        completion = running.client().chat.completions.create(
            model="replay-model", messages=USER, extra_body={"reasoning": {"summary": "concise", "exclude": True}}
        )
    extra = completion.choices[0].message.model_extra or {}
    assert "reasoning" not in extra and [d["summary"] for d in _details(extra)] == [SUMMARY_TEXT]


def test_chat_streams_the_summary_after_the_reasoning_and_before_the_answer(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANALYSIS, SUMMARY, REST)
    with server as running:
        chunks = list(
            running.client().chat.completions.create(
                model="replay-model",
                messages=USER,
                stream=True,
                stream_options={"include_usage": True},
                extra_body={"reasoning": {"summary": "auto"}},
            )
        )
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    order = []
    for delta in deltas:
        extra = delta.model_extra or {}
        if extra.get("reasoning"):
            order.append("reasoning")
        if _details(extra):
            order.append("summary")
        if delta.content:
            order.append("content")
    assert order.index("summary") > max(i for i, kind in enumerate(order) if kind == "reasoning")
    assert order.index("summary") < order.index("content") and order.count("summary") == 1
    (summary_delta,) = [d for d in deltas if _details(d.model_extra)]
    assert _details(summary_delta.model_extra) == [
        {"type": "reasoning.summary", "summary": SUMMARY_TEXT, "format": "unknown", "index": 0}
    ]
    assert "".join(d.content or "" for d in deltas) == "2 + 2 = 4."
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens_details is not None
    assert (usage.completion_tokens_details.model_extra or {})["summary_tokens"] == len(ids(encoding, SUMMARY))


def test_chat_summaries_sent_back_never_reach_the_prompt(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANALYSIS, SUMMARY, REST, WHOLE)
    with server as running:
        client = running.client()
        first = client.chat.completions.create(
            model="replay-model", messages=USER, extra_body={"reasoning": {"summary": "auto"}}
        )
        messages: Any = [*USER, first.choices[0].message.model_dump(exclude_none=True)]
        messages.append({"role": "user", "content": "And 3 + 3?"})
        client.chat.completions.create(model="replay-model", messages=messages)
    prompt = encoding.decode(backend.prompts[3])
    assert "2 + 2 = 4." in prompt and SUMMARY_TEXT not in prompt and SUMMARY_REQUEST not in prompt
