"""harmony-chat against a real vLLM (CPU) serving the pocket gpt-oss in Hugging Face format.

What ``tests/backends/test_remote_protocol.py``, ``tests/conform/test_recordings.py`` and the serve
tests check on recorded vLLM answers, checked on the server itself: the remote backend gives the
token ids llama.cpp gives in process, a tool call round-trips, ``serve`` in front of it answers
Chat Completions (streamed or not) and Responses, and ``conform`` audits both. Also what only
the real server showed: the context-overflow error, ``reasoning_tokens`` in vLLM's usage, and
``--skip-tokenizer-init``. One file, so pytest-xdist starts one server (``loadfile``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai.types.chat import ChatCompletionMessageFunctionToolCall
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.backends.remote import VllmBackend, create_remote_backend
from harmony_chat.conform.command import ConformSettings, audit_server
from harmony_chat.conform.result import Status
from harmony_chat.demo.pocket import POCKET_DATE, POCKET_NAME, pocket_model_path
from harmony_chat.errors import EngineError
from harmony_chat.generation.turn import TurnOptions, TurnStats, prefill_next_turn, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import StopReason
from harmony_chat.harmony.session import ChatSession
from harmony_chat.server.harmony_request import ServedModel
from tests.conform.conftest import evidence, statuses
from tests.engines.vllm_server import VllmServer, vllm_python
from tests.server.conftest import RunningServer, running
from training.pocket.data import FACTS, WEATHER, WEATHER_TOOL

pytestmark = pytest.mark.vllm

GREEDY = SamplingParams(temperature=0.0, max_tokens=200)
STOPS = tk.GENERATION_STOPS
VERSION = "0.32.0"
CHAT_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Gets the current weather in a city.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    },
}
VLLM_FAILS = {
    "chat.reasoning.exclude": "the reasoning still came as message.reasoning",
    "responses.continue": "HTTP 404 (Response with id",
}
"""What vLLM's own endpoints get wrong (the conform table in docs/serving.md): `reasoning: {exclude: true}`
is ignored, and without VLLM_ENABLE_RESPONSES_API_STORE=1 a `previous_response_id` is answered 404."""


@pytest.fixture(scope="module")
def backend(vllm_server: VllmServer) -> Iterator[VllmBackend]:
    remote = create_remote_backend(vllm_server.url, "vllm")
    assert isinstance(remote, VllmBackend)
    remote.load()
    yield remote
    remote.close()


@pytest.fixture(scope="module")
def local() -> Iterator[LlamaCppBackend]:
    backend = LlamaCppBackend(pocket_model_path(), context_size=4096)
    backend.load()
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def serve(backend: VllmBackend, encoding: HarmonyEncoding) -> Iterator[RunningServer]:
    """harmony-chat's server in front of vLLM (``serve --url``), greedy so the answers are the trained ones."""
    served = ServedModel(
        backend, encoding, POCKET_NAME, sampling=SamplingParams(temperature=0.0, max_tokens=300),
        start_date=POCKET_DATE,
    )  # fmt: skip
    with running(served) as server:
        yield server


def user_prompt(encoding: HarmonyEncoding, question: str) -> list[int]:
    session = ChatSession(encoding, start_date=POCKET_DATE)
    session.add_user(question)
    return session.render().tokens


def test_connect_detects_vllm_and_describes_the_model(vllm_server: VllmServer) -> None:
    remote = create_remote_backend(vllm_server.url)  # no engine named: probed
    assert isinstance(remote, VllmBackend)
    info = remote.load()
    assert (info.name, info.backend, info.context_size) == (POCKET_NAME, "vllm", 4096)
    assert remote.version == VERSION and not remote.ids_via_logprobs and remote.vocabulary_note is None
    remote.close()


def test_remote_tokens_equal_in_process_tokens(
    backend: VllmBackend, local: LlamaCppBackend, encoding: HarmonyEncoding
) -> None:
    for question, *_ in FACTS[:3]:
        prompt = user_prompt(encoding, question)
        theirs = list(backend.generate(prompt, GREEDY, STOPS, lambda: False))
        ours = list(local.generate(prompt, GREEDY, STOPS, lambda: False))
        assert theirs == ours and theirs[-1] == tk.RETURN


def test_a_follow_up_turn_answers_from_the_earlier_one(backend: VllmBackend, encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, start_date=POCKET_DATE)
    options = TurnOptions(sampling=GREEDY)
    session.add_user(FACTS[0][0])
    list(run_turn(session, backend, options))
    assert session.history[-1].channel == "final" and session.history[-1].content[0].text == FACTS[0][1]
    assert any(m.channel == "analysis" for m in session.history)  # reasoning arrives as its own message
    prefill_next_turn(session, backend)
    session.add_user("And what is that times 3?")
    list(run_turn(session, backend, options))
    assert session.history[-1].content[0].text == "4 × 3 = 12."


def test_the_prefix_cache_is_reported(backend: VllmBackend, encoding: HarmonyEncoding) -> None:
    """The same tool exchange twice: the second time its 205-token result turn comes from vLLM's cache.

    vLLM caches whole blocks of prompt, 128 tokens for gpt-oss here (its sliding window), so the
    shorter first request (127 tokens) is never cached.
    """
    city, result, answer = WEATHER[0]
    figures = []
    for _ in range(2):
        session = ChatSession(encoding, functions=[WEATHER_TOOL], start_date=POCKET_DATE)
        session.add_user(f"What's the weather in {city}?")
        first = list(run_turn(session, backend, TurnOptions(sampling=GREEDY)))[-1]
        assert isinstance(first, TurnStats) and first.reason is StopReason.CALL
        session.add_tool_result("functions.get_weather", result)
        second = list(run_turn(session, backend, TurnOptions(sampling=GREEDY)))[-1]
        assert isinstance(second, TurnStats) and session.history[-1].content[0].text == answer
        figures.append(second.stats)
    stats = figures[-1]
    cached = stats.prompt_tokens_cached  # --enable-prompt-tokens-details
    assert stats.prompt_tokens > 128 and cached is not None and cached > 0 and cached % 128 == 0
    assert stats.prompt_tokens_evaluated == stats.prompt_tokens - cached


def test_a_tool_call_round_trips_with_and_without_a_grammar(backend: VllmBackend, encoding: HarmonyEncoding) -> None:
    city, result, answer = WEATHER[0]
    for schema, expected in (
        (None, city),  # the model's own choice
        ({"type": "object", "properties": {"location": {"enum": ["Tokyo"]}}, "required": ["location"]}, "Tokyo"),
    ):
        schemas = {"functions.get_weather": schema} if schema is not None else {}  # vLLM's structured_outputs
        session = ChatSession(encoding, functions=[WEATHER_TOOL], start_date=POCKET_DATE)
        session.add_user(f"What's the weather in {city}?")
        stats = list(run_turn(session, backend, TurnOptions(sampling=GREEDY, tool_schemas=schemas)))[-1]
        call = session.pending_tool_call()
        assert isinstance(stats, TurnStats) and stats.reason is StopReason.CALL and call is not None
        assert call.recipient == "functions.get_weather"
        assert json.loads(call.content[0].text) == {"location": expected}
    session.add_tool_result("functions.get_weather", result)  # the last call was for Tokyo
    list(run_turn(session, backend, TurnOptions(sampling=GREEDY)))
    assert session.history[-1].channel == "final" and session.history[-1].content[0].text


def test_a_prompt_over_the_context_is_refused_in_one_line(
    vllm_server: VllmServer, backend: VllmBackend, encoding: HarmonyEncoding
) -> None:
    long = [tk.START, *encoding.encode("user", allowed_special="all"), tk.MESSAGE, *([1000] * 5000), tk.END]
    with pytest.raises(
        EngineError, match=r"answered HTTP 400 while generating: .*maximum context length is 4096"
    ) as caught:
        list(backend.generate(long, GREEDY, STOPS, lambda: False))
    assert "\n" not in str(caught.value)
    raw = httpx.post(vllm_server.url + "/v1/completions", json={"model": POCKET_NAME, "prompt": long, "max_tokens": 1})
    error = raw.json()["error"]  # what a fixture could not know: the parameter vLLM names
    assert raw.status_code == 400 and error["param"] == "input_tokens" and error["type"] == "BadRequestError"
    assert f"your prompt contains {len(long)} input tokens" in error["message"]


def test_the_stream_sends_one_token_per_chunk_under_one_id(vllm_server: VllmServer, backend: VllmBackend,
                                                            encoding: HarmonyEncoding) -> None:  # fmt: skip
    path, body = backend.build_request(user_prompt(encoding, FACTS[0][0]), GREEDY, STOPS)
    chunks = []
    with httpx.stream("POST", vllm_server.url + path, json=body, timeout=60) as response:
        for line in response.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunks.append(json.loads(line.removeprefix("data: ")))
    with_ids = [chunk for chunk in chunks if chunk["choices"]]
    assert len({chunk["id"] for chunk in chunks}) == 1 and len(with_ids) > 5
    assert all(len(chunk["choices"][0]["token_ids"]) == 1 for chunk in with_ids)
    assert with_ids[0]["choices"][0]["prompt_token_ids"] == body["prompt"]  # in the first chunk only
    assert all(chunk["choices"][0].get("prompt_token_ids") is None for chunk in with_ids[1:])
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == len(with_ids)


def test_serve_chat_streamed_or_not(serve: RunningServer) -> None:
    client = serve.client()
    question, answer = FACTS[1][0], FACTS[1][1]
    messages: Any = [{"role": "user", "content": question}]
    completion = client.chat.completions.create(model=POCKET_NAME, messages=messages)
    message = completion.choices[0].message
    reasoning = (message.model_extra or {}).get("reasoning")
    assert message.content == answer and reasoning
    assert completion.usage is not None and completion.usage.completion_tokens_details is not None
    assert completion.usage.completion_tokens_details.reasoning_tokens
    chunks = list(client.chat.completions.create(model=POCKET_NAME, messages=messages, stream=True))
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    assert "".join(d.content or "" for d in deltas) == answer
    assert "".join((d.model_extra or {}).get("reasoning") or "" for d in deltas) == reasoning


def test_serve_tool_call_round_trip(serve: RunningServer) -> None:
    city, result, answer = next(entry for entry in WEATHER if entry[0] == "Oslo")
    client = serve.client()
    messages: Any = [{"role": "user", "content": f"What's the weather in {city}?"}]
    first = client.chat.completions.create(model=POCKET_NAME, messages=messages, tools=[CHAT_TOOL])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content == f"Let me check the weather in {city}."
    (call,) = choice.message.tool_calls or []
    assert isinstance(call, ChatCompletionMessageFunctionToolCall)
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"location": city}
    messages += [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": result},
    ]
    second = client.chat.completions.create(model=POCKET_NAME, messages=messages, tools=[CHAT_TOOL])
    assert second.choices[0].message.content == answer and second.choices[0].finish_reason == "stop"


def test_serve_responses_streamed_and_continued(serve: RunningServer) -> None:
    client = serve.client()
    events = list(client.responses.create(model=POCKET_NAME, input=FACTS[0][0], stream=True))
    kinds = [event.type for event in events]
    assert kinds.index("response.reasoning_text.done") < kinds.index("response.output_text.delta")
    completed = events[-1]
    assert completed.type == "response.completed" and completed.response.output_text == FACTS[0][1]
    follow_up = client.responses.create(
        model=POCKET_NAME, input="And what is that times 3?", previous_response_id=completed.response.id
    )
    assert follow_up.output_text == "4 × 3 = 12."


def test_conform_passes_every_check_through_serve(serve: RunningServer, tmp_path: Path) -> None:
    audit = audit_server(ConformSettings(url=serve.url, samples=2))
    not_passed = {
        r.check.id: (r.status.value, r.outcome.evidence) for r in audit.results if r.status is not Status.PASS
    }
    assert not_passed == {} and len(audit.results) == 28


def test_conform_on_vllms_own_endpoints(vllm_server: VllmServer) -> None:
    """The chat and Responses parsers of vLLM itself (started with the tool flags): two deviations, with evidence."""
    audit = audit_server(ConformSettings(url=vllm_server.url, samples=2))
    found = statuses(audit)
    assert {check for check, status in found.items() if status is Status.FAIL} == set(VLLM_FAILS)
    assert {check for check, status in found.items() if status is not Status.PASS} == set(VLLM_FAILS)  # the rest pass
    for check, piece in VLLM_FAILS.items():
        assert piece in evidence(audit, check), check
    assert evidence(audit, "chat.effort").startswith("reasoning tokens:")  # usage.completion_tokens_details


def test_skip_tokenizer_init_is_trusted_by_name_and_generates(
    vllm_server: VllmServer, local: LlamaCppBackend, encoding: HarmonyEncoding, tmp_path: Path
) -> None:
    """No /tokenize there: the model is taken for gpt-oss by its name, and token ids work as before."""
    server = VllmServer(vllm_python(), vllm_server.model, tmp_path / "vllm.log", ["--skip-tokenizer-init"])
    server.start()
    try:
        remote = create_remote_backend(server.url, "vllm")
        assert isinstance(remote, VllmBackend)
        remote.load()
        assert remote.vocabulary_note is not None and "--skip-tokenizer-init" in remote.vocabulary_note
        assert remote.supports_json_schema is False
        prompt = user_prompt(encoding, FACTS[0][0])
        theirs = list(remote.generate(prompt, GREEDY, STOPS, lambda: False))
        assert theirs == list(local.generate(prompt, GREEDY, STOPS, lambda: False))
        remote.close()
        assert server.alive()
    finally:
        server.stop()
