"""The server over the real pocket gpt-oss (llama.cpp), driven by the official openai client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessageFunctionToolCall

from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.demo.pocket import POCKET_NAME
from tests.server.conftest import RunningServer
from training.pocket.data import FACT_SUMMARIES, SHOPPING, SHOPPING_INSTRUCTIONS, WEATHER

pytestmark = pytest.mark.llama
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Gets the current weather in a city.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    },
}
PRODUCTS: Any = {
    "type": "object",
    "properties": {"products": {"type": "array", "items": {"type": "string"}}},
    "required": ["products"],
    "additionalProperties": False,
}


def test_chat_answers_with_reasoning_streamed_or_not(pocket_server: RunningServer) -> None:
    client = pocket_server.client()
    messages: Any = [{"role": "user", "content": "What is 2 + 2?"}]
    completion = client.chat.completions.create(model=POCKET_NAME, messages=messages)
    message = completion.choices[0].message
    reasoning = (message.model_extra or {}).get("reasoning")
    assert message.content == "2 + 2 = 4." and reasoning
    chunks = list(client.chat.completions.create(model=POCKET_NAME, messages=messages, stream=True))
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    assert "".join(d.content or "" for d in deltas) == "2 + 2 = 4."
    assert "".join((d.model_extra or {}).get("reasoning") or "" for d in deltas) == reasoning


def test_tool_call_round_trip(pocket_server: RunningServer) -> None:
    city, result, answer = next(entry for entry in WEATHER if entry[0] == "Oslo")
    client = pocket_server.client()
    messages: Any = [{"role": "user", "content": f"What's the weather in {city}?"}]
    first = client.chat.completions.create(model=POCKET_NAME, messages=messages, tools=[WEATHER_TOOL])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == f"Let me check the weather in {city}."
    (call,) = choice.message.tool_calls or []
    assert isinstance(call, ChatCompletionMessageFunctionToolCall)
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"location": city}
    messages += [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": result},
    ]
    second = client.chat.completions.create(model=POCKET_NAME, messages=messages, tools=[WEATHER_TOOL])
    assert second.choices[0].message.content == answer and second.choices[0].finish_reason == "stop"


def _shopping(client: Any, schema: Any) -> str:
    messages: Any = [
        {"role": "system", "content": SHOPPING_INSTRUCTIONS},
        {"role": "user", "content": "I need to buy coffee, soda and eggs."},
    ]
    fmt = {"name": "shopping_list", "description": "the items the user needs to buy", "schema": schema}
    completion = client.chat.completions.create(
        model=POCKET_NAME, messages=messages, response_format={"type": "json_schema", "json_schema": fmt}
    )
    return str(completion.choices[0].message.content)


def test_response_format_is_enforced_by_a_grammar(
    pocket_server: RunningServer, pocket_backend: LlamaCppBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = pocket_server.client()
    assert json.loads(_shopping(client, SHOPPING.schema)) == {"items": ["coffee", "soda", "eggs"]}  # as learnt
    constrained = json.loads(_shopping(client, PRODUCTS))  # a schema it never saw: the grammar holds it to it
    assert list(constrained) == ["products"] and all(isinstance(item, str) for item in constrained["products"])
    monkeypatch.setattr(pocket_backend, "supports_json_schema", False)  # the same request without the grammar
    unconstrained = _shopping(client, PRODUCTS)
    assert '"products"' not in unconstrained  # the pocket model only learnt "items"


def test_responses_stream_reasoning_then_answer(pocket_server: RunningServer) -> None:
    events = list(pocket_server.client().responses.create(model=POCKET_NAME, input="What is 2 + 2?", stream=True))
    kinds = [event.type for event in events]
    assert kinds.index("response.reasoning_text.done") < kinds.index("response.output_text.delta")
    completed = events[-1]
    assert completed.type == "response.completed" and completed.response.output_text == "2 + 2 = 4."
    reasoning = completed.response.output[0]
    assert reasoning.type == "reasoning" and reasoning.content and reasoning.content[0].text


def test_summaries_are_written_by_the_model_between_its_reasoning_and_answer(pocket_server: RunningServer) -> None:
    """The summary the pocket model learned for this question, through both APIs."""
    client = pocket_server.client()
    plain = client.responses.create(model=POCKET_NAME, input="What is 2 + 2?")
    events = list(
        client.responses.create(model=POCKET_NAME, input="What is 2 + 2?", reasoning={"summary": "auto"}, stream=True)
    )
    completed = events[-1]
    assert completed.type == "response.completed"
    response = completed.response
    # pausing the turn for the summary and resuming it changes nothing the model writes (greedy)
    assert response.output_text == plain.output_text == "2 + 2 = 4."
    reasoning, plain_reasoning = response.output[0], plain.output[0]
    assert reasoning.type == plain_reasoning.type == "reasoning"
    assert reasoning.content == plain_reasoning.content
    assert response.usage is not None and (response.usage.output_tokens_details.model_extra or {})["summary_tokens"] > 0
    texts = [event.text for event in events if event.type == "response.reasoning_summary_text.done"]
    assert [part.text for part in reasoning.summary] == texts == [FACT_SUMMARIES[0]]
    chat = client.chat.completions.create(
        model=POCKET_NAME,
        messages=[{"role": "user", "content": "What is 2 + 2?"}],
        extra_body={"reasoning": {"summary": "auto"}},
    )
    details = (chat.choices[0].message.model_extra or {})["reasoning_details"]
    assert [detail["summary"] for detail in details] == texts  # the same greedy summary through either API
