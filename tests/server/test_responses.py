"""The Responses API through the official openai client, over replayed turns."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai import NotFoundError
from openai_harmony import HarmonyEncoding

from harmony_chat.server.generation import FLUSH_S
from tests.server.conftest import replay_server
from tests.server.test_chat_completions import AFTER_TOOL, ANSWER, CALL

WEATHER: Any = {
    "type": "function",
    "name": "get_weather",
    "description": "Gets the current weather in a city.",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}


def _json_format(name: str, schema: Any) -> Any:
    return {"format": {"type": "json_schema", "name": name, "schema": schema}}


def _prompt(backend: Any, encoding: HarmonyEncoding, index: int = -1) -> str:
    return str(encoding.decode(backend.prompts[index]))


def test_response_has_a_reasoning_item_with_reasoning_text_and_the_answer(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running:
        response = running.client().responses.create(
            model="replay-model", input="What is 2 + 2?", instructions="Be brief.", reasoning={"effort": "high"}
        )
    reasoning, message = response.output
    assert reasoning.type == "reasoning" and reasoning.summary == []
    assert [(part.type, part.text) for part in reasoning.content or []] == [("reasoning_text", "Simple sum.")]
    assert message.type == "message" and message.content[0].type == "output_text"
    assert response.output_text == "2 + 2 = 4." and response.status == "completed"
    assert response.usage is not None and response.usage.output_tokens_details.reasoning_tokens > 0
    prompt = _prompt(backend, encoding)
    assert "Reasoning: high" in prompt and "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>" in prompt


def test_streamed_events_follow_the_guides_sequence(encoding: HarmonyEncoding) -> None:
    # tokens that come apart are sent apart (a stream joins only the text that arrives within FLUSH_S)
    _, server = replay_server(encoding, ANSWER, delay_s=2 * FLUSH_S)
    with server as running:
        events = list(running.client().responses.create(model="replay-model", input="What is 2 + 2?", stream=True))
    assert [event.sequence_number for event in events] == list(range(len(events)))
    kinds = [event.type for event in events]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.reasoning_text.delta"] * kinds.count("response.reasoning_text.delta"),
        "response.reasoning_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * kinds.count("response.output_text.delta"),
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = [e for e in events if e.type == "response.reasoning_text.delta"]
    assert len(deltas) > 1 and "".join(e.delta for e in deltas) == "Simple sum."
    done = next(e for e in events if e.type == "response.reasoning_text.done")
    assert done.text == "Simple sum." and {d.item_id for d in deltas} == {done.item_id}
    assert (done.output_index, done.content_index) == (0, 0)
    completed = events[-1]
    assert completed.type == "response.completed" and completed.response.output_text == "2 + 2 = 4."


def test_function_call_round_trip_keeps_the_reasoning_of_the_loop(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, CALL, AFTER_TOOL)
    with server as running:
        client = running.client()
        first = client.responses.create(model="replay-model", input="Weather in Oslo?", tools=[WEATHER])
        kinds = [item.type for item in first.output]
        assert kinds == ["reasoning", "message", "function_call"]
        preamble, call = first.output[1], first.output[2]
        assert preamble.type == "message" and preamble.phase == "commentary"
        assert call.type == "function_call" and call.name == "get_weather"
        assert json.loads(call.arguments) == {"location": "Oslo"}
        output: Any = {"type": "function_call_output", "call_id": call.call_id, "output": '{"condition": "snow"}'}
        items: Any = [{"role": "user", "content": "Weather in Oslo?"}, *first.output, output]
        second = client.responses.create(model="replay-model", input=items, tools=[WEATHER])
    assert second.output_text == "It is snowing in Oslo."
    prompt = _prompt(backend, encoding, 1)
    assert prompt.endswith(
        "<|start|>assistant<|channel|>analysis<|message|>Need the weather tool.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
        '<|message|>{"location": "Oslo"}<|call|>'
        '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"condition": "snow"}<|end|>'
        "<|start|>assistant"
    )


def test_previous_response_id_continues_and_drops_finished_reasoning(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER, CALL, AFTER_TOOL)
    with server as running:
        client = running.client()
        first = client.responses.create(model="replay-model", input="What is 2 + 2?")
        second = client.responses.create(
            model="replay-model", input="Weather in Oslo?", tools=[WEATHER], previous_response_id=first.id
        )
        call = second.output[-1]
        assert call.type == "function_call"
        output: Any = [{"type": "function_call_output", "call_id": call.call_id, "output": "snow"}]
        third = client.responses.create(
            model="replay-model", input=output, tools=[WEATHER], previous_response_id=second.id
        )
        assert third.output_text == "It is snowing in Oslo."
        assert client.responses.retrieve(third.id).output_text == "It is snowing in Oslo."
    second_prompt, third_prompt = _prompt(backend, encoding, 1), _prompt(backend, encoding, 2)
    finished = (
        "<|start|>user<|message|>What is 2 + 2?<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|end|>"
    )
    assert finished in second_prompt and finished in third_prompt
    assert "Simple sum." not in second_prompt + third_prompt  # the first turn ended in a final
    assert "Need the weather tool." in third_prompt  # the tool loop's reasoning stays


def test_store_false_is_not_kept(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANSWER)
    with server as running:
        client = running.client()
        response = client.responses.create(model="replay-model", input="What is 2 + 2?", store=False)
        with pytest.raises(NotFoundError) as refused:
            client.responses.create(model="replay-model", input="And?", previous_response_id=response.id)
        with pytest.raises(NotFoundError):
            client.responses.retrieve(response.id)
    assert refused.value.code == "previous_response_not_found"


def test_text_format_json_schema_is_announced(encoding: HarmonyEncoding) -> None:
    schema: Any = {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"]}
    backend, server = replay_server(encoding, ANSWER)
    with server as running:
        running.client().responses.create(
            model="replay-model",
            input="What is 2 + 2?",
            text=_json_format("sum", schema),
        )
    assert "# Response Formats\n\n## sum\n\n" + json.dumps(schema, separators=(",", ":")) in _prompt(backend, encoding)


def test_calls_to_tools_the_request_did_not_declare_are_not_reported(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, CALL, CALL)
    with server as running:
        client = running.client()
        response = client.responses.create(model="replay-model", input="What is 2 + 2?")
        events = list(client.responses.create(model="replay-model", input="What is 2 + 2?", stream=True))
    completed = events[-1]
    assert completed.type == "response.completed"
    for output in (response.output, completed.response.output):
        assert [item.type for item in output] == ["reasoning", "message"]  # the preamble, and no function_call
    assert not any(event.type.startswith("response.function_call") for event in events)
