"""Chat Completions through the official openai client, over replayed turns (prompts checked exactly)."""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletionMessageFunctionToolCall
from openai_harmony import HarmonyEncoding

from tests.server.conftest import replay_server

ANSWER = (
    "<|channel|>analysis<|message|>Simple sum.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
)
CALL = (
    "<|channel|>analysis<|message|>Need the weather tool.<|end|>"
    "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location": "Oslo"}<|call|>'
)
AFTER_TOOL = (
    "<|channel|>analysis<|message|>Tool says snow.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>It is snowing in Oslo.<|return|>"
)
WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Gets the current weather in a city.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    },
}
USER: Any = [{"role": "user", "content": "What is 2 + 2?"}]


def test_completion_carries_reasoning_content_and_usage(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running:
        completion = running.client().chat.completions.create(model="replay-model", messages=USER)
    choice = completion.choices[0]
    assert choice.message.content == "2 + 2 = 4."
    assert choice.message.model_extra == {"reasoning": "Simple sum."}
    assert choice.finish_reason == "stop"
    usage = completion.usage
    assert usage is not None and usage.completion_tokens == len(encoding.encode(ANSWER, allowed_special="all"))
    assert usage.prompt_tokens == len(backend.prompts[0])
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == len(encoding.encode("Simple sum.")) + 1  # and <|end|>


def test_reasoning_excluded_on_request(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANSWER)
    with server as running:
        client = running.client()
        excluded = client.chat.completions.create(
            model="replay-model",
            messages=USER,
            extra_body={"reasoning": {"exclude": True}},
        )
        chunks = list(
            client.chat.completions.create(
                model="replay-model",
                messages=USER,
                stream=True,
                extra_body={"reasoning": {"exclude": True}},
            )
        )
    assert excluded.choices[0].message.content == "2 + 2 = 4."
    assert getattr(excluded.choices[0].message, "reasoning", None) is None
    assert not any(getattr(chunk.choices[0].delta, "reasoning", None) for chunk in chunks if chunk.choices)
    assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices) == "2 + 2 = 4."


def test_streaming_deltas_carry_reasoning_then_content_and_usage(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANSWER)
    with server as running:
        stream = running.client().chat.completions.create(
            model="replay-model",
            messages=USER,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    kinds = [
        "reasoning" if getattr(d, "reasoning", None) else "content"
        for d in deltas
        if d.content or getattr(d, "reasoning", None)
    ]
    assert kinds == sorted(kinds, key=lambda kind: kind != "reasoning") and set(kinds) == {"reasoning", "content"}
    assert "".join(getattr(d, "reasoning", None) or "" for d in deltas) == "Simple sum."
    assert "".join(d.content or "" for d in deltas) == "2 + 2 = 4."
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens_details is not None
    assert (chunks[-1].usage.completion_tokens_details.reasoning_tokens or 0) > 0


def _format(name: str, schema: Any) -> Any:
    return {"type": "json_schema", "json_schema": {"name": name, "description": "the items", "schema": schema}}


def _prompt(backend: Any, encoding: HarmonyEncoding, index: int = -1) -> str:
    return str(encoding.decode(backend.prompts[index]))


def test_reasoning_sent_back_after_a_final_is_dropped(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER)
    messages: Any = [
        *USER,
        {"role": "assistant", "content": "2 + 2 = 4.", "reasoning": "SECRET-COT-A"},
        {"role": "user", "content": "And 3 + 3?"},
    ]
    with server as running:
        client = running.client()
        client.chat.completions.create(model="replay-model", messages=messages)
        messages[1] = {"role": "assistant", "content": "2 + 2 = 4.", "reasoning_content": "SECRET-COT-B"}
        client.chat.completions.create(model="replay-model", messages=messages)
    first, second = _prompt(backend, encoding, 0), _prompt(backend, encoding, 1)
    assert "SECRET-COT" not in first and "SECRET-COT" not in second
    assert "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|end|><|start|>user<|message|>And 3 + 3?" in first


def test_tool_call_round_trip_keeps_the_reasoning_of_the_loop(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, CALL, AFTER_TOOL)
    messages: Any = [{"role": "user", "content": "Weather in Oslo?"}]
    with server as running:
        client = running.client()
        first = client.chat.completions.create(model="replay-model", messages=messages, tools=[WEATHER])
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.content == "Let me check."  # the preamble is content the user may see
        (call,) = choice.message.tool_calls or []
        assert isinstance(call, ChatCompletionMessageFunctionToolCall)
        assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"location": "Oslo"}
        messages.append(choice.message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"condition": "snow"}'})
        second = client.chat.completions.create(model="replay-model", messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == "It is snowing in Oslo."
    prompt = _prompt(backend, encoding, 1)
    expected = (
        "<|start|>user<|message|>Weather in Oslo?<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>Need the weather tool.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
        '<|message|>{"location": "Oslo"}<|call|>'
        '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"condition": "snow"}<|end|>'
        "<|start|>assistant"
    )
    assert prompt.endswith(expected)
    assert "type get_weather = (_: {\nlocation: string,\n}) => any;" in prompt


def test_effort_from_reasoning_effort_or_reasoning_object(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running:
        client = running.client()
        client.chat.completions.create(model="replay-model", messages=USER, reasoning_effort="high")
        client.chat.completions.create(model="replay-model", messages=USER, extra_body={"reasoning": {"effort": "low"}})
        client.chat.completions.create(model="replay-model", messages=USER)
    efforts = [_prompt(backend, encoding, i).split("Reasoning: ", 1)[1].split("\n", 1)[0] for i in range(3)]
    assert efforts == ["high", "low", "medium"]


def test_response_format_is_announced_as_the_guides_section(encoding: HarmonyEncoding) -> None:
    schema: Any = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}}
    backend, server = replay_server(encoding, ANSWER)
    with server as running:
        running.client().chat.completions.create(
            model="replay-model",
            messages=[{"role": "system", "content": "Make lists."}, *USER],
            response_format=_format("shopping_list", schema),
        )
    prompt = _prompt(backend, encoding)
    section = "# Instructions\n\nMake lists.\n\n# Response Formats\n\n## shopping_list\n\n// the items\n"
    assert "<|start|>developer<|message|>" + section + json.dumps(schema, separators=(",", ":")) + "<|end|>" in prompt


def test_malformed_calls_are_not_reported_and_repaired_ones_are_whole(encoding: HarmonyEncoding) -> None:
    header = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    _, server = replay_server(encoding, header + "{location: Oslo}<|call|>", header + '{"location": "Oslo"<|call|>')
    with server as running:
        client = running.client()
        malformed = client.chat.completions.create(model="replay-model", messages=USER, tools=[WEATHER])
        repaired = client.chat.completions.create(model="replay-model", messages=USER, tools=[WEATHER])
    assert malformed.choices[0].message.tool_calls is None and malformed.choices[0].finish_reason == "stop"
    (call,) = repaired.choices[0].message.tool_calls or []
    assert isinstance(call, ChatCompletionMessageFunctionToolCall)
    assert json.loads(call.function.arguments) == {"location": "Oslo"}
    assert repaired.choices[0].finish_reason == "tool_calls"


def test_calls_to_tools_the_request_did_not_declare_are_not_reported(encoding: HarmonyEncoding) -> None:
    """A client runs only the functions it declared: a call to another is left out, streamed or not."""
    builtin = "<|channel|>commentary to=python code<|message|>print(1)<|call|>"
    _, server = replay_server(encoding, CALL, CALL, CALL, builtin)
    other: Any = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
    with server as running:
        client = running.client()
        undeclared = [
            client.chat.completions.create(model="replay-model", messages=USER),
            client.chat.completions.create(model="replay-model", messages=USER, tools=[other]),
            client.chat.completions.create(model="replay-model", messages=USER, tools=[WEATHER], tool_choice="none"),
            client.chat.completions.create(model="replay-model", messages=USER, tools=[WEATHER]),  # python
        ]
    for completion in undeclared:
        choice = completion.choices[0]
        assert choice.message.tool_calls is None and choice.finish_reason == "stop"
    assert [completion.choices[0].message.content for completion in undeclared[:3]] == ["Let me check."] * 3
    _, server = replay_server(encoding, CALL)
    with server as running:
        chunks = list(running.client().chat.completions.create(model="replay-model", messages=USER, stream=True))
    choices = [chunk.choices[0] for chunk in chunks if chunk.choices]
    assert not any(choice.delta.tool_calls for choice in choices)
    assert [choice.finish_reason for choice in choices if choice.finish_reason] == ["stop"]


def test_with_a_response_format_content_is_the_answer_alone(encoding: HarmonyEncoding) -> None:
    """A preamble joined to the JSON answer would make ``content`` unparseable: it stays out of it."""
    turn = (
        "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant<|channel|>commentary<|message|>Here it is.<|end|>"
        '<|start|>assistant<|channel|>final<|message|>{"location": "Oslo"}<|return|>'
    )
    schema = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}
    _, server = replay_server(encoding, turn, turn, turn, CALL)
    with server as running:
        client = running.client()
        formatted = client.chat.completions.create(
            model="replay-model", messages=USER, response_format=_format("place", schema)
        )
        chunks = list(
            client.chat.completions.create(
                model="replay-model", messages=USER, response_format={"type": "json_object"}, stream=True
            )
        )
        plain = client.chat.completions.create(model="replay-model", messages=USER)
        called = client.chat.completions.create(  # the preamble of a call is no answer either
            model="replay-model", messages=USER, response_format={"type": "json_object"}, tools=[WEATHER]
        )
    assert json.loads(formatted.choices[0].message.content or "") == {"location": "Oslo"}
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert json.loads(streamed) == {"location": "Oslo"}
    assert plain.choices[0].message.content == 'Here it is.\n\n{"location": "Oslo"}'  # without one, both
    assert called.choices[0].message.content is None and called.choices[0].finish_reason == "tool_calls"
