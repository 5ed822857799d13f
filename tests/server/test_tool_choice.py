"""tool_choice is enforced at the token level, and a schema the grammar cannot enforce is a 400 (official client).

The pocket model behind the server answers questions it was not trained to call a tool for; a named
function or ``required`` still yields a call with arguments of the tool's schema, as instructor's
TOOLS mode needs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.demo.pocket import POCKET_DATE, POCKET_NAME
from harmony_chat.server.harmony_request import ServedModel
from tests.server.conftest import RunningServer, running

pytestmark = pytest.mark.llama
EXTRACT: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "record_person",
        "description": "Record a person mentioned in the text.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string", "maxLength": 40}, "age": {"type": "integer"}},
            "required": ["name", "age"],
            "additionalProperties": False,
        },
    },
}
NOTE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "take_note",
        "description": "Write a note down.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 60}},
            "required": ["text"],
        },
    },
}
QUESTIONS = ["Jane Doe is 31 years old.", "What is the capital of France?", "Hello!"]


@pytest.fixture(scope="module")
def sampling_server(pocket_backend: LlamaCppBackend, encoding: HarmonyEncoding) -> Iterator[RunningServer]:
    """The pocket model sampling at temperature 1, so each request is a fresh draw."""
    served = ServedModel(
        pocket_backend, encoding, POCKET_NAME, sampling=SamplingParams(temperature=1.0, max_tokens=400),
        start_date=POCKET_DATE,
    )  # fmt: skip
    with running(served) as server:
        yield server


def _valid_person(arguments: str) -> bool:
    parsed = json.loads(arguments)
    return set(parsed) == {"name", "age"} and isinstance(parsed["name"], str) and isinstance(parsed["age"], int)


def test_a_named_function_always_yields_its_call_with_schema_valid_arguments(sampling_server: RunningServer) -> None:
    client: Any = sampling_server.client()
    choice = {"type": "function", "function": {"name": "record_person"}}
    for seed, question in enumerate(QUESTIONS * 2):
        completion = client.chat.completions.create(
            model=POCKET_NAME,
            messages=[{"role": "user", "content": question}],
            tools=[EXTRACT, NOTE],
            tool_choice=choice,
            seed=seed,
        )
        answer = completion.choices[0]
        assert answer.finish_reason == "tool_calls", (question, answer.message)
        (call,) = answer.message.tool_calls or []
        assert call.function.name == "record_person" and _valid_person(call.function.arguments)


def test_required_always_yields_some_function_call(sampling_server: RunningServer) -> None:
    client: Any = sampling_server.client()
    for seed, question in enumerate(QUESTIONS):
        completion = client.chat.completions.create(
            model=POCKET_NAME,
            messages=[{"role": "user", "content": question}],
            tools=[EXTRACT, NOTE],
            tool_choice="required",
            seed=seed,
        )
        answer = completion.choices[0]
        assert answer.finish_reason == "tool_calls", (question, answer.message)
        (call,) = answer.message.tool_calls or []
        assert call.function.name in ("record_person", "take_note")
        json.loads(call.function.arguments)


def test_the_responses_api_forces_the_named_function_too(sampling_server: RunningServer) -> None:
    tool = {"type": "function", **EXTRACT["function"]}
    client: Any = sampling_server.client()
    response = client.responses.create(
        model=POCKET_NAME,
        input="Hello!",
        tools=[tool],
        tool_choice={"type": "function", "name": "record_person"},
    )
    calls = [item for item in response.output if item.type == "function_call"]
    assert [call.name for call in calls] == ["record_person"] and _valid_person(calls[0].arguments)


UNENFORCEABLE = [
    ({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[^a]+$"}}}, "#/properties/code/pattern"),
    ({"type": "object", "properties": {"n": {"not": {"type": "integer"}}}}, "#/properties/n/not"),
    ({"type": "object", "properties": {"a": False}}, "#/properties/a"),
    ({"type": "array", "items": False}, "#/items"),
    ({"type": "object", "properties": {"p": {"$ref": "#/$defs/Gone"}}}, "#/properties/p/$ref"),
]


@pytest.mark.parametrize(("schema", "path"), UNENFORCEABLE)
def test_a_response_format_the_grammar_cannot_enforce_is_a_400_naming_the_part(
    sampling_server: RunningServer, schema: dict[str, Any], path: str
) -> None:
    fmt = {"name": "thing", "schema": schema}
    with pytest.raises(openai.BadRequestError) as refused:
        client: Any = sampling_server.client()
        client.chat.completions.create(
            model=POCKET_NAME,
            messages=[{"role": "user", "content": "Hi"}],
            response_format={"type": "json_schema", "json_schema": fmt},
        )
    assert path in str(refused.value) and refused.value.status_code == 400


def test_the_responses_text_format_and_tool_parameters_are_checked_the_same_way(sampling_server: RunningServer) -> None:
    client: Any = sampling_server.client()
    with pytest.raises(openai.BadRequestError, match="#/minimum"):
        client.responses.create(
            model=POCKET_NAME,
            input="Hi",
            text={"format": {"type": "json_schema", "name": "n", "schema": {"type": "integer", "minimum": 1}}},
        )
    tool = json.loads(json.dumps(EXTRACT))
    tool["function"]["parameters"]["properties"]["age"]["minimum"] = 0
    with pytest.raises(openai.BadRequestError, match="record_person"):
        client.chat.completions.create(model=POCKET_NAME, messages=[{"role": "user", "content": "Hi"}], tools=[tool])
