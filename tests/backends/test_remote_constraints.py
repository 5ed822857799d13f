"""Through a serving engine a response format and a forced call hold as they do in process (real llama-server).

``serve --url`` in front of llama-server with the pocket GGUF used to answer a grocery list of at
least 400 strings with ``{"items": ["milk", "bread, so I was trained on ...`` and ``finish_reason:
stop``: the engine's grammar took ``<|end|>`` as text inside a JSON string. Now every special token
but the message's stop is refused under a schema, and the grammar sent is harmony-chat's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote import create_remote_backend
from harmony_chat.backends.remote.engine import RemoteBackend
from harmony_chat.demo.pocket import POCKET_DATE, POCKET_NAME, pocket_model_path
from harmony_chat.generation.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import ContentDelta, RawToken, StopReason
from harmony_chat.harmony.session import ChatSession, ResponseFormat
from harmony_chat.server.harmony_request import ServedModel
from tests.server.conftest import running
from tests.support.llama_server import LlamaServer, llama_server_binary, serve

pytestmark = pytest.mark.llama_server
GROCERIES: dict[str, Any] = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "string"}, "minItems": 400}},
    "required": ["items"],
}
SHORT_LIST: dict[str, Any] = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 3}},
    "required": ["items"],
    "additionalProperties": False,
}
PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 30}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def pocket_server(tmp_path_factory: pytest.TempPathFactory, encoding: HarmonyEncoding) -> Iterator[LlamaServer]:
    yield from serve(llama_server_binary(), pocket_model_path(), tmp_path_factory.mktemp("pocket-server"))


@pytest.fixture(scope="module")
def backend(pocket_server: LlamaServer) -> Iterator[RemoteBackend]:
    remote = create_remote_backend(pocket_server.url, "llama-server", None)
    remote.load()
    yield remote
    remote.close()


def _final(backend: RemoteBackend, encoding: HarmonyEncoding, schema: dict[str, Any], seed: int, tokens: int) -> Any:
    session = ChatSession(encoding, start_date=POCKET_DATE, response_formats=[ResponseFormat("list", schema, "")])
    session.add_user("I need to buy milk, bread and eggs.")
    sampling = SamplingParams(temperature=1.0, seed=seed, max_tokens=tokens)
    events = list(run_turn(session, backend, TurnOptions(sampling=sampling, final_schema=schema)))
    answer = "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")
    raw = [e.token_id for e in events if isinstance(e, RawToken)]
    stats = events[-1]
    assert isinstance(stats, TurnStats)
    return stats.reason, answer, raw


def test_a_final_answer_that_cannot_end_in_time_runs_to_the_limit_and_never_ends_mid_json(
    backend: RemoteBackend, encoding: HarmonyEncoding
) -> None:
    for seed in range(3):
        reason, answer, raw = _final(backend, encoding, GROCERIES, seed, 300)
        if not answer:
            continue  # the analysis took every token
        assert reason is StopReason.LENGTH, answer  # 400 items cannot fit in 300 tokens: never "stop"
        final_at = max(index for index, token in enumerate(raw) if token == tk.MESSAGE)
        assert not [token for token in raw[final_at + 1 :] if tk.is_special(token)]  # no <|end|> inside the JSON
        assert answer.startswith('{"items"') and all(ord(char) >= 32 for char in answer)


def test_a_final_answer_under_a_schema_it_can_meet_is_valid_json_of_the_schema(
    backend: RemoteBackend, encoding: HarmonyEncoding
) -> None:
    for seed in range(3):
        reason, answer, _ = _final(backend, encoding, SHORT_LIST, seed, 400)
        assert reason is StopReason.RETURN, answer
        parsed = json.loads(answer)
        assert list(parsed) == ["items"] and len(parsed["items"]) <= 3
        assert all(isinstance(item, str) and len(item) <= 12 for item in parsed["items"])


def test_the_request_carries_harmony_chats_grammar_and_refuses_special_tokens(
    backend: RemoteBackend, encoding: HarmonyEncoding
) -> None:
    prompt = list(encoding.encode("<|start|>assistant<|channel|>final<|message|>", allowed_special="all"))
    _, body = backend._request(prompt, SamplingParams(), tk.GENERATION_STOPS, SHORT_LIST)
    refused = {token for token, allowed in body["logit_bias"]}
    assert tk.END in refused and tk.START in refused and tk.CALL in refused and tk.RETURN not in refused
    assert "json_schema" not in body and body["grammar"].count("::=") > 3
    assert all(allowed is False for _, allowed in body["logit_bias"])


@pytest.fixture(scope="module")
def serve_url(backend: RemoteBackend, encoding: HarmonyEncoding) -> Iterator[Any]:
    """harmony-chat's server in front of the llama-server (``serve --url``), reached with the official client."""
    served = ServedModel(
        backend, encoding, POCKET_NAME, sampling=SamplingParams(max_tokens=300), start_date=POCKET_DATE
    )
    with running(served) as server:
        yield server.client()


def test_serve_url_response_format_is_valid_json_of_the_schema(serve_url: Any) -> None:
    fmt = {"name": "groceries", "schema": SHORT_LIST}
    for seed in range(2):
        completion = serve_url.chat.completions.create(
            model=POCKET_NAME,
            messages=[{"role": "user", "content": "I need milk, bread and eggs."}],
            response_format={"type": "json_schema", "json_schema": fmt},
            seed=seed,
        )
        answer = completion.choices[0]
        if answer.finish_reason == "stop":
            assert len(json.loads(answer.message.content)["items"]) <= 3
        else:
            assert answer.finish_reason == "length" and not answer.message.content  # cut in the analysis


def test_serve_url_forces_a_named_call_and_a_required_one(serve_url: Any) -> None:
    """Both tools' arguments are bounded (the pocket model's unbounded strings can run to the token limit)."""
    person = {"type": "function", "function": {"name": "record_person", "parameters": PERSON}}
    note = {
        "type": "function",
        "function": {
            "name": "take_note",
            "parameters": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 40}}},
        },
    }
    named = {"type": "function", "function": {"name": "record_person"}}
    for choice in (named, "required"):
        completion = serve_url.chat.completions.create(
            model=POCKET_NAME,
            messages=[{"role": "user", "content": "What is the capital of France?"}],
            tools=[person, note],
            tool_choice=choice,
            max_tokens=400,
            seed=0,
        )
        answer = completion.choices[0]
        assert answer.finish_reason == "tool_calls", answer.message
        (call,) = answer.message.tool_calls
        if choice == named:
            arguments = json.loads(call.function.arguments)
            assert call.function.name == "record_person" and set(arguments) == {"name", "age"}
        else:
            assert call.function.name in ("record_person", "take_note")
            json.loads(call.function.arguments)


def test_serve_url_refuses_a_schema_the_grammar_cannot_enforce(serve_url: Any) -> None:
    fmt = {"name": "code", "schema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}}}
    with pytest.raises(openai.BadRequestError, match="#/properties/n/maximum"):
        serve_url.chat.completions.create(
            model=POCKET_NAME,
            messages=[{"role": "user", "content": "Hi"}],
            response_format={"type": "json_schema", "json_schema": fmt},
        )


def test_bench_url_compares_streams_of_the_length_asked_for(backend: RemoteBackend) -> None:
    """The pocket model answers in about 14 tokens; ``bench --url --tokens 256`` measures 256 on both sides."""
    from harmony_chat.bench.remote_bench import compare_remote

    result = compare_remote(backend, tokens=256, runs=1)
    assert result.raw.tokens == result.pipeline.tokens == 256
    assert result.raw.tokens_per_s > 0 and result.pipeline.tokens_per_s > 0
