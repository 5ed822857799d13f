"""vLLM and SGLang at the protocol level: recorded answers (tests/data/engines) served on loopback.

A small real HTTP server replays the request/response shapes their sources define (versions cited
in the fixtures) and records what harmony-chat sends, so these run in the default suite; the real
vLLM (CPU) is the ``vllm`` tier (``tests/engines``), SGLang's CPU build is not on PyPI.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import MIN_TIMED_BURSTS, GenerationStats, SamplingParams
from harmony_chat.backends.remote import RemoteBackend, SglangBackend, VllmBackend, create_remote_backend
from harmony_chat.errors import EngineAuthError, EngineError, EngineStreamError, EngineTimeoutError, ModelError
from harmony_chat.generation.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import RawToken, StopReason
from harmony_chat.harmony.session import ChatSession
from tests.support.fake_engine import FakeEngine, load_fixture

ENGINES = ("vllm", "sglang")
ANSWER = [200005, 35644, 200008, 38, 5409, 1602, 13, 200007, 200006, 173781, 200005, 17196, 200008, 13225, 0, 200002]
"""``<|channel|>analysis<|message|>Greet back.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>``"""
SAMPLING = SamplingParams(temperature=0.7, top_p=0.9, seed=11, max_tokens=300)
KEY = "engine-secret-123"


def connect(fake: FakeEngine, engine: str | None = None, **options: Any) -> RemoteBackend:
    backend = create_remote_backend(fake.url, engine, **options)
    backend.load()
    return backend


def prompt(encoding: HarmonyEncoding) -> list[int]:
    session = ChatSession(encoding)
    session.add_user("Hi")
    return session.render().tokens


def generate(backend: RemoteBackend, tokens: list[int], sampling: SamplingParams = SAMPLING) -> list[int]:
    return list(backend.generate(tokens, sampling, tk.GENERATION_STOPS, lambda: False))


@pytest.mark.parametrize(("engine", "kind"), [("vllm", VllmBackend), ("sglang", SglangBackend)])
def test_detect_connect_and_describe(serve: Any, engine: str, kind: type) -> None:
    fake = serve(engine)
    backend = connect(fake)  # no engine named: probed
    assert isinstance(backend, kind)
    info = backend.info
    assert (info.name, info.backend, info.context_size) == ("openai/gpt-oss-120b", engine, 131072)
    assert info.host == fake.url.removeprefix("http://")
    tokenize = [r for r in fake.requests if r.path == "/tokenize"][0].body
    assert tokenize["add_special_tokens"] is False and "<|constrain|>" in tokenize["prompt"]


def test_vllm_request_and_stream(serve: Any, encoding: HarmonyEncoding) -> None:
    fake = serve("vllm", api_key=KEY)
    backend = connect(fake, "vllm", api_key=KEY)
    tokens = prompt(encoding)
    assert generate(backend, tokens) == ANSWER
    request = fake.generate_requests()[0]
    body = request.body
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert body["prompt"] == tokens and body["model"] == "openai/gpt-oss-120b"
    assert body["return_token_ids"] is True and body["skip_special_tokens"] is False and body["stream"] is True
    assert body["stop_token_ids"] == sorted(tk.GENERATION_STOPS) and {200002, 200012} <= set(body["stop_token_ids"])
    assert (body["temperature"], body["top_p"], body["seed"], body["max_tokens"]) == (0.7, 0.9, 11, 300)
    assert body["stream_options"] == {"include_usage": True} and "logprobs" not in body
    stats = backend.last_stats
    assert (stats.prompt_tokens_cached, stats.prompt_tokens_evaluated) == (64, len(tokens) - 64)
    assert stats.generated_tokens == len(ANSWER) and stats.engine == "vllm"
    assert stats.bursts is not None and 1 <= stats.bursts <= len(ANSWER)  # arrivals counted, not assumed


@pytest.mark.parametrize(
    ("bursts", "speed"),
    [(None, 99 / 2.0), (1, 0.0), (MIN_TIMED_BURSTS - 1, 0.0), (MIN_TIMED_BURSTS, 99 / 2.0), (100, 99 / 2.0)],
)
def test_a_speed_needs_a_stream_that_arrived_over_time(bursts: int | None, speed: float) -> None:
    """A proxy that buffers (the whole answer in a burst or two) gave 5,148.9 tok/s: now unknown (0), not shown."""
    stats = GenerationStats(prompt_tokens=10, generated_tokens=100, decode_s=2.0, engine="vllm", bursts=bursts)
    assert stats.decode_tokens_per_s == speed
    assert stats.as_dict()["decode_tokens_per_s"] == round(speed, 3) and stats.as_dict()["bursts"] == bursts


def test_sglang_request_and_cumulative_or_incremental_stream(serve: Any, encoding: HarmonyEncoding) -> None:
    tokens = prompt(encoding)
    for stream in ("answer", "answer_incremental"):
        fake = serve("sglang", stream)
        backend = connect(fake, "sglang")
        assert generate(backend, tokens) == ANSWER, stream
        body = fake.generate_requests()[0].body
        assert body["input_ids"] == tokens and body["stream"] is True
        params = body["sampling_params"]
        assert params["max_new_tokens"] == 300 and params["stop_token_ids"] == sorted(tk.GENERATION_STOPS)
        assert params["skip_special_tokens"] is False and params["no_stop_trim"] is True
        assert (params["temperature"], params["top_p"], params["top_k"]) == (0.7, 0.9, -1)
        assert backend.last_stats.prompt_tokens_cached == 64


@pytest.mark.parametrize(("engine", "stream"), [("vllm", "stop_not_in_ids"), ("sglang", "trimmed_stop")])
def test_stop_token_left_out_of_the_ids_is_restored(
    serve: Any, encoding: HarmonyEncoding, engine: str, stream: str
) -> None:
    backend = connect(serve(engine, stream))
    assert generate(backend, prompt(encoding)) == ANSWER


def test_vllm_before_0_10_2_returns_ids_through_logprobs(serve: Any, encoding: HarmonyEncoding) -> None:
    fake = serve("vllm", "legacy_logprobs", overrides={"GET /version": {"status": 200, "body": {"version": "0.9.2"}}})
    backend = connect(fake)
    assert generate(backend, prompt(encoding)) == ANSWER
    body = fake.generate_requests()[0].body
    assert body["logprobs"] == 0 and body["return_tokens_as_token_ids"] is True and "return_token_ids" not in body
    assert backend.last_stats.prompt_tokens_cached is None  # not reported: not invented


@pytest.mark.parametrize("engine", ENGINES)
def test_a_turn_through_the_engine(serve: Any, encoding: HarmonyEncoding, engine: str) -> None:
    backend = connect(serve(engine))
    session = ChatSession(encoding)
    session.add_user("Hi")
    events = list(run_turn(session, backend, TurnOptions(sampling=SAMPLING)))
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.reason is StopReason.RETURN
    assert [m.channel for m in session.history[1:]] == ["analysis", "final"]
    assert session.history[-1].content[0].text == "Hello!"
    figures = stats.as_dict()
    assert figures["engine"] == engine and figures["prompt_tokens_cached"] == 64


@pytest.mark.parametrize("engine", ENGINES)
def test_constrained_tool_arguments_use_the_engine_grammar(serve: Any, encoding: HarmonyEncoding, engine: str) -> None:
    fake = serve(engine, ["tool_call", "tool_arguments"])
    backend = connect(fake)
    schema = {"type": "object", "properties": {"location": {"enum": ["Tokyo"]}}, "required": ["location"]}
    session = ChatSession(encoding)
    session.add_user("Hi")
    tokens = session.render().tokens
    options = TurnOptions(sampling=SAMPLING, tool_schemas={"functions.get_weather": schema})
    events = list(run_turn(session, backend, options))  # the turn switches the engine's grammar on mid-answer
    generated = [event.token_id for event in events if isinstance(event, RawToken)]
    assert encoding.decode(generated).endswith('<|constrain|>json<|message|>{"location": "Tokyo"}<|call|>')
    first, second = (r.body for r in fake.generate_requests())
    header = generated[: generated.index(tk.MESSAGE, generated.index(tk.CONSTRAIN)) + 1]
    if engine == "vllm":
        assert "structured_outputs" not in first and second["structured_outputs"] == {"json": schema}
        assert second["prompt"] == tokens + header and second["max_tokens"] == SAMPLING.max_tokens - len(header)
    else:
        assert "json_schema" not in first["sampling_params"]
        assert json.loads(second["sampling_params"]["json_schema"]) == schema
        assert second["input_ids"] == tokens + header
    # the first request's cache figure, never the continuation's: SGLang sends it with every event; vLLM
    # only at the end, which the abandoned first request never reaches, so it stays unreported
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.stats.prompt_tokens_cached == (64 if engine == "sglang" else None)


@pytest.mark.parametrize("engine", ENGINES)
def test_error_in_the_stream_keeps_the_partial_answer(serve: Any, encoding: HarmonyEncoding, engine: str) -> None:
    backend = connect(serve(engine, "error_mid_stream"))
    session = ChatSession(encoding)
    session.add_user("Hi")
    events: list[object] = []
    with pytest.raises(EngineError, match="reported an error") as caught:
        events.extend(run_turn(session, backend))
    stats = events[-1]
    sent_before_the_error = {"vllm": 7, "sglang": 2}[engine]  # the ids in the fixture's chunks before the error
    assert isinstance(stats, TurnStats) and stats.reason is StopReason.ERROR
    assert stats.stats.generated_tokens == sent_before_the_error
    assert session.turns[-1].stop_reason == "error"
    assert "\n" not in str(caught.value)


def test_sglang_abort_is_an_error(serve: Any, encoding: HarmonyEncoding) -> None:
    backend = connect(serve("sglang", "abort"))
    with pytest.raises(EngineError, match="aborted the request: Abort in waiting queue"):
        generate(backend, prompt(encoding))


@pytest.mark.parametrize("engine", ENGINES)
def test_dropped_stream(serve: Any, encoding: HarmonyEncoding, engine: str) -> None:
    backend = connect(serve(engine, "dropped"))
    received: list[int] = []
    with pytest.raises(EngineStreamError, match="broke.*answers again"):
        received.extend(backend.generate(prompt(encoding), SAMPLING, tk.GENERATION_STOPS, lambda: False))
    assert received == ANSWER[: len(received)] and received


@pytest.mark.parametrize("engine", ENGINES)
def test_cancel_while_the_engine_processes_the_prompt(serve: Any, encoding: HarmonyEncoding, engine: str) -> None:
    fake = serve(engine, "held")
    backend = connect(fake)
    cancel = threading.Event()
    timer = threading.Timer(0.2, cancel.set)
    timer.start()
    assert list(backend.generate(prompt(encoding), SAMPLING, tk.GENERATION_STOPS, cancel.is_set)) == []
    assert fake.disconnected.wait(10)  # the connection closed while the engine held the answer back
    timer.cancel()


@pytest.mark.parametrize("engine", ENGINES)
def test_cancel_mid_answer_stops_at_once(serve: Any, encoding: HarmonyEncoding, engine: str) -> None:
    backend = connect(serve(engine))
    tokens: list[int] = []
    tokens.extend(backend.generate(prompt(encoding), SAMPLING, tk.GENERATION_STOPS, lambda: len(tokens) >= 4))
    assert tokens == ANSWER[:4]


@pytest.mark.parametrize("engine", ENGINES)
def test_api_key_refused_and_never_shown(serve: Any, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARMONY_CHAT_API_KEY", raising=False)
    fake = serve(engine, api_key=KEY)
    for key in (None, "not-" + KEY):
        with pytest.raises(EngineAuthError, match="HTTP 401: Unauthorized") as caught:
            create_remote_backend(fake.url, engine, api_key=key).load()
        assert KEY not in str(caught.value)
    monkeypatch.setenv("HARMONY_CHAT_API_KEY", KEY)
    backend = connect(fake)  # detection and load with the key from the environment
    assert backend.name == engine and KEY not in repr(backend.client)


@pytest.mark.parametrize(("engine", "error"), [("vllm", "context_too_long"), ("sglang", "bad_request")])
def test_http_error_body_becomes_one_line(serve: Any, encoding: HarmonyEncoding, engine: str, error: str) -> None:
    fixture = load_fixture(engine)
    path = f"POST {fixture['generate_path']}"
    backend = connect(serve(engine, overrides={path: fixture["errors"][error]}))
    with pytest.raises(EngineError, match=r"answered HTTP 400 while generating: .*context length") as caught:
        generate(backend, prompt(encoding))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_wrong_vocabulary_is_refused(serve: Any, engine: str) -> None:
    with pytest.raises(ModelError, match="o200k_harmony"):
        connect(serve(engine, tokenize_offset=7))


def test_vllm_model_name_must_be_served(serve: Any) -> None:
    fake = serve("vllm")
    with pytest.raises(EngineError, match="does not serve 'gpt-oss-20b'; it serves openai/gpt-oss-120b"):
        connect(fake, "vllm", model_name="gpt-oss-20b")


def test_unknown_server_and_engine_names(serve: Any) -> None:
    fake = serve("vllm", overrides={"GET /version": {"status": 404, "body": {"detail": "Not Found"}}})
    with pytest.raises(EngineError, match="cannot tell which engine"):
        create_remote_backend(fake.url)
    with pytest.raises(EngineError, match="unknown engine 'ollama'"):
        create_remote_backend(fake.url, "ollama")
    with pytest.raises(EngineError, match="not an http"):
        create_remote_backend("ftp://example.org")


def test_llama_server_still_loading(serve: Any) -> None:
    loading = {"status": 503, "body": {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}}
    fake = serve("vllm", overrides={"GET /health": loading})  # the body llama-server's README documents
    backend = create_remote_backend(fake.url)
    assert backend.name == "llama-server"
    with pytest.raises(EngineError, match=r"llama-server at .* is not ready \(HTTP 503: Loading model\)"):
        backend.load()


@pytest.mark.parametrize("engine", ENGINES)
def test_stalled_stream_times_out(serve: Any, encoding: HarmonyEncoding, engine: str) -> None:
    fake = serve(engine, "held")
    backend = create_remote_backend(fake.url, engine, timeout=0.5)
    backend.load()
    with pytest.raises(EngineTimeoutError, match="did not answer within 0.5 s while streaming the answer"):
        generate(backend, prompt(encoding))
