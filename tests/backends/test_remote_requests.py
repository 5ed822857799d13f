"""What each engine is asked for under a schema, a forced call's name, or a benchmark's long stream."""

from __future__ import annotations

import json

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote.engine import RemoteBackend
from harmony_chat.backends.remote.llama_server import LlamaServerBackend, _vocabulary, held_tokens
from harmony_chat.backends.remote.sglang import SglangBackend
from harmony_chat.backends.remote.transport import EngineClient
from harmony_chat.backends.remote.vllm import VllmBackend
from harmony_chat.harmony import tokens as tk
from tests.helpers import ids

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CALL_HEADER = "<|start|>assistant<|channel|>commentary to=functions.weather <|constrain|>json<|message|>"


def _backend(engine: str) -> RemoteBackend:
    client = EngineClient("http://127.0.0.1:9", engine)
    backend: RemoteBackend = {"vllm": VllmBackend, "sglang": SglangBackend, "llama-server": LlamaServerBackend}[engine](
        client
    )
    backend.model_name = "gpt-oss"
    return backend


def _refused(engine: str, body: dict[str, object]) -> set[int]:
    if engine == "llama-server":
        return {token for token, _ in body["logit_bias"]}  # type: ignore[attr-defined]
    params = body if engine == "vllm" else body["sampling_params"]
    return {int(token) for token in params["logit_bias"]}  # type: ignore[index]


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llama-server"])
def test_arguments_under_a_schema_refuse_every_special_token_but_the_call(
    engine: str, encoding: HarmonyEncoding
) -> None:
    _, body = _backend(engine)._request(ids(encoding, CALL_HEADER), SamplingParams(), tk.GENERATION_STOPS, SCHEMA)
    refused = _refused(engine, body)
    assert refused == set(range(tk.FIRST_SPECIAL, tk.VOCAB_SIZE)) - {tk.CALL}
    if engine == "vllm":
        assert body["structured_outputs"] == {"json": SCHEMA}
    elif engine == "sglang":
        assert json.loads(body["sampling_params"]["json_schema"]) == SCHEMA
    else:
        assert "root ::=" in str(body["grammar"]) and "json_schema" not in body


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llama-server"])
def test_a_forced_calls_name_is_one_of_the_functions(engine: str) -> None:
    sampling = SamplingParams(choices=("weather", "time"))
    _, body = _backend(engine)._request([tk.START], sampling, tk.GENERATION_STOPS, None)
    if engine == "vllm":
        assert body["structured_outputs"] == {"choice": ["weather", "time"]}
    elif engine == "sglang":
        assert body["sampling_params"]["regex"] == "(weather|time)"
    else:
        assert body["grammar"] == 'root ::= "weather" | "time"'


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llama-server"])
def test_a_long_benchmark_stream_ignores_the_end_of_generation(engine: str) -> None:
    _, body = _backend(engine)._request([tk.START], SamplingParams(ignore_eos=True), tk.GENERATION_STOPS, None)
    params = body["sampling_params"] if engine == "sglang" else body
    assert params["ignore_eos"] is True
    assert _refused(engine, body) == set(tk.GENERATION_STOPS)
    if engine != "llama-server":
        assert params["stop_token_ids"] == []


def test_an_unenforceable_schema_is_not_sent(encoding: HarmonyEncoding) -> None:
    schema = {"type": "integer", "minimum": 3}
    _, body = _backend("vllm")._request(ids(encoding, CALL_HEADER), SamplingParams(), tk.GENERATION_STOPS, schema)
    assert "structured_outputs" not in body and "logit_bias" not in body


def test_the_tokens_llama_server_holds_back_inside_a_character_are_recovered(encoding: HarmonyEncoding) -> None:
    """A chunk of /completion carries its last token's id only, but the whole character's text."""
    vocabulary, _ = _vocabulary()
    lead, middle, last = (vocabulary[bytes([byte])] for byte in "東".encode())  # one byte token each
    assert held_tokens("東", [last], 2) == [lead, middle]
    assert held_tokens("a東", [last], 3) == [vocabulary[b"a"], lead, middle]
    assert held_tokens("", [last], 2) == [ids(encoding, "\ufffd")[0]] * 2  # nothing to read them from
