"""The remote backend against a real llama-server (built once from the vendored llama.cpp sources)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.backends.remote import LlamaServerBackend, create_remote_backend
from harmony_chat.demo.pocket import POCKET_DATE, pocket_model_path
from harmony_chat.errors import (
    EngineAuthError,
    EngineStreamError,
    EngineTimeoutError,
    EngineUnreachableError,
    ModelError,
)
from harmony_chat.generation.turn import TurnOptions, TurnStats, prefill_next_turn, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import StopReason
from harmony_chat.harmony.session import ChatSession
from tests.support.llama_server import LlamaServer, free_port, llama_server_binary, serve
from tests.support.other_gguf import write_other_vocab_gguf
from training.pocket.data import FACTS, WEATHER, WEATHER_TOOL

pytestmark = pytest.mark.llama_server

GREEDY = SamplingParams(temperature=0.0, max_tokens=200)
GREEDY_4 = SamplingParams(temperature=0.0, max_tokens=4)
LONG = SamplingParams(temperature=1.0, seed=7, max_tokens=3000)
"""Long enough that the tiny model is still generating when a test interrupts it."""
STOPS = tk.GENERATION_STOPS
SECRET = "s3cret-key-for-tests"


@pytest.fixture(scope="session")
def llama_server_bin() -> Path:
    """The cached llama-server, built on first use (several minutes, once per machine)."""
    return llama_server_binary()


@pytest.fixture(scope="module")
def pocket_server(
    llama_server_bin: Path, tmp_path_factory: pytest.TempPathFactory, encoding: HarmonyEncoding
) -> Iterator[LlamaServer]:
    yield from serve(llama_server_bin, pocket_model_path(), tmp_path_factory.mktemp("pocket-server"))


@pytest.fixture(scope="module")
def tiny_server(
    llama_server_bin: Path, tiny_gguf: Path, tmp_path_factory: pytest.TempPathFactory, encoding: HarmonyEncoding
) -> Iterator[LlamaServer]:
    yield from serve(llama_server_bin, tiny_gguf, tmp_path_factory.mktemp("tiny-server"))


@pytest.fixture
def fresh_tiny_server(llama_server_bin: Path, tiny_gguf: Path, tmp_path: Path) -> Iterator[LlamaServer]:
    """A server of its own, for tests that kill it."""
    yield from serve(llama_server_bin, tiny_gguf, tmp_path)


def connect(server: LlamaServer, **options: object) -> LlamaServerBackend:
    backend = create_remote_backend(server.url, "llama-server", **options)  # type: ignore[arg-type]
    assert isinstance(backend, LlamaServerBackend)
    backend.load()
    return backend


def user_prompt(encoding: HarmonyEncoding, question: str) -> list[int]:
    session = ChatSession(encoding, start_date=POCKET_DATE)
    session.add_user(question)
    return session.render().tokens


def generated_by_server(server: LlamaServer, before: float) -> float:
    """Tokens the server generated since its counter read ``before`` (after it went idle)."""
    server.wait_idle()
    return server.metric("tokens_predicted_total") - before


def test_connect_describes_the_served_model(pocket_server: LlamaServer) -> None:
    backend = create_remote_backend(pocket_server.url)  # no engine named: probed
    assert isinstance(backend, LlamaServerBackend)
    info = backend.load()
    host = f"127.0.0.1:{pocket_server.port}"
    assert (info.name, info.backend, info.context_size, info.host) == ("pocket-gpt-oss", "llama-server", 4096, host)
    assert info.device == f"llama-server @ {host}"
    backend.close()


def test_remote_tokens_equal_in_process_tokens(pocket_server: LlamaServer, encoding: HarmonyEncoding) -> None:
    remote = connect(pocket_server)
    local = LlamaCppBackend(pocket_model_path(), context_size=2048)
    local.load()
    try:
        for question, *_ in FACTS[:2]:
            prompt = user_prompt(encoding, question)
            theirs = list(remote.generate(prompt, GREEDY, STOPS, lambda: False))
            ours = list(local.generate(prompt, GREEDY, STOPS, lambda: False))
            assert theirs == ours and theirs[-1] == tk.RETURN
    finally:
        local.close()
        remote.close()


def test_turns_hide_reasoning_and_reuse_the_prefix_cache(pocket_server: LlamaServer, encoding: HarmonyEncoding) -> None:
    backend = connect(pocket_server)
    session = ChatSession(encoding, start_date=POCKET_DATE)
    options = TurnOptions(sampling=GREEDY)
    session.add_user(FACTS[0][0])
    first = list(run_turn(session, backend, options))[-1]
    assert session.history[-1].channel == "final" and session.history[-1].content[0].text == FACTS[0][1]
    assert any(m.channel == "analysis" for m in session.history)  # reasoning arrives as its own message
    prefill_next_turn(session, backend)
    session.add_user("And what is that times 3?")
    second = list(run_turn(session, backend, options))[-1]
    backend.close()
    assert isinstance(first, TurnStats) and isinstance(second, TurnStats)
    assert session.history[-1].content[0].text == "4 × 3 = 12."
    cached = second.stats.prompt_tokens_cached
    # most of the second prompt comes from the slot's cache (llama-server re-evaluates a few tokens
    # before the end of a cached prefix on sliding-window models, so not all of the first turn)
    assert cached is not None and cached > second.stats.prompt_tokens // 2
    assert second.stats.prompt_tokens_evaluated == second.stats.prompt_tokens - cached
    figures = second.as_dict()
    assert figures["engine"] == "llama-server" and figures["host"] == f"127.0.0.1:{pocket_server.port}"
    assert figures["prompt_tokens_cached"] == cached and second.stats.ttft_s > 0


def test_tool_call_and_constrained_arguments(pocket_server: LlamaServer, encoding: HarmonyEncoding) -> None:
    city = WEATHER[0][0]
    backend = connect(pocket_server)
    for schema, expected in (
        (None, city),  # the model's own choice
        ({"type": "object", "properties": {"location": {"enum": ["Tokyo"]}}, "required": ["location"]}, "Tokyo"),
    ):
        schemas = {"functions.get_weather": schema} if schema is not None else {}  # llama-server's json_schema
        session = ChatSession(encoding, functions=[WEATHER_TOOL], start_date=POCKET_DATE)
        session.add_user(f"What's the weather in {city}?")
        stats = list(run_turn(session, backend, TurnOptions(sampling=GREEDY, tool_schemas=schemas)))[-1]
        call = session.pending_tool_call()
        assert isinstance(stats, TurnStats) and stats.reason is StopReason.CALL and call is not None
        assert call.recipient == "functions.get_weather"
        assert json.loads(call.content[0].text) == {"location": expected}
    backend.close()


def test_tokens_stream_while_the_server_generates(tiny_server: LlamaServer, encoding: HarmonyEncoding) -> None:
    backend = connect(tiny_server)
    before = tiny_server.metric("tokens_predicted_total")
    stream = backend.generate(user_prompt(encoding, "Hi"), LONG, STOPS, lambda: False)
    next(stream)
    assert tiny_server.slot()["is_processing"]  # the first token came before the answer was done
    stream.close()
    assert 0 < generated_by_server(tiny_server, before) < LONG.max_tokens
    backend.close()


def test_cancelling_closes_the_stream_and_the_server_stops(tiny_server: LlamaServer, encoding: HarmonyEncoding) -> None:
    backend = connect(tiny_server)
    before = tiny_server.metric("tokens_predicted_total")
    tokens: list[int] = []
    tokens.extend(backend.generate(user_prompt(encoding, "Hi"), LONG, STOPS, lambda: len(tokens) >= 5))
    assert len(tokens) == 5 and backend.last_stats.generated_tokens == 5
    assert 5 <= generated_by_server(tiny_server, before) < LONG.max_tokens  # the server stopped too
    backend.close()


def test_cancel_during_prompt_processing(tiny_server: LlamaServer) -> None:
    backend = connect(tiny_server)
    long_prompt = [tk.START, 1428, tk.MESSAGE, *(1000 + (i * 7919) % 50000 for i in range(3500)), tk.END, tk.START]
    sampling = SamplingParams(temperature=1.0, seed=3, max_tokens=500)
    before = tiny_server.metric("tokens_predicted_total")
    cancel = threading.Event()
    timer = threading.Timer(0.05, cancel.set)  # most likely while the server still reads the prompt
    timer.start()
    received = list(backend.generate(long_prompt, sampling, STOPS, cancel.is_set))
    timer.cancel()
    backend.close()
    generated = generated_by_server(tiny_server, before)
    assert len(received) < sampling.max_tokens and generated < sampling.max_tokens  # both ends stopped


def test_killed_server_keeps_the_partial_answer(fresh_tiny_server: LlamaServer, encoding: HarmonyEncoding) -> None:
    backend = connect(fresh_tiny_server)
    session = ChatSession(encoding, start_date=POCKET_DATE)
    session.add_user("Hi")
    events = []
    with pytest.raises(EngineStreamError, match="gone") as caught:
        for event in run_turn(session, backend, TurnOptions(sampling=LONG)):
            events.append(event)
            if len(events) == 3:
                fresh_tiny_server.kill()
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.reason is StopReason.ERROR and stats.stats.generated_tokens > 0
    assert session.turns[-1].stop_reason == "error"  # the partial turn is in the conversation
    assert "127.0.0.1" in str(caught.value)


def test_server_restart_mid_answer_is_named(fresh_tiny_server: LlamaServer, encoding: HarmonyEncoding) -> None:
    backend = connect(fresh_tiny_server)
    stream = backend.generate(user_prompt(encoding, "Hi"), LONG, STOPS, lambda: False)
    received = [next(stream) for _ in range(3)]
    fresh_tiny_server.kill()
    fresh_tiny_server.start()  # the same port answers again
    with pytest.raises(EngineStreamError, match="restarted"):
        received.extend(stream)
    assert len(received) >= 3


def test_wrong_model_is_refused(llama_server_bin: Path, tmp_path: Path, encoding: HarmonyEncoding) -> None:
    model = write_other_vocab_gguf(tmp_path / "other.gguf")
    for server in serve(llama_server_bin, model, tmp_path, context=512):
        with pytest.raises(ModelError, match="not give harmony's o200k_harmony token ids"):
            create_remote_backend(server.url).load()


def test_api_key(
    llama_server_bin: Path, tiny_gguf: Path, tmp_path: Path, encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARMONY_CHAT_API_KEY", raising=False)
    for server in serve(llama_server_bin, tiny_gguf, tmp_path, api_key=SECRET):
        assert isinstance(create_remote_backend(server.url), LlamaServerBackend)  # /health is public
        for key in (None, "wrong-" + SECRET):
            with pytest.raises(EngineAuthError, match="HTTP 401") as caught:
                create_remote_backend(server.url, "llama-server", api_key=key).load()
            assert SECRET not in str(caught.value)
        monkeypatch.setenv("HARMONY_CHAT_API_KEY", SECRET)
        backend = connect(server)
        # greedy: at temperature 1 the random tiny model now and then drew a stop token within 4 tokens
        tokens = list(backend.generate(user_prompt(encoding, "Hi"), GREEDY_4, STOPS, lambda: False))
        assert 0 < len(tokens) <= 4  # the key let tokens through
        assert SECRET not in repr(backend.client) + json.dumps(backend.last_stats.as_dict()) + repr(backend.info)
        backend.close()


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(EngineUnreachableError, match="cannot reach llama-server at 127.0.0.1"):
        create_remote_backend(url, "llama-server").load()
    with pytest.raises(EngineUnreachableError):
        create_remote_backend(url)  # probing fails the same way


def test_silent_server_times_out() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        accepted: list[socket.socket] = []
        threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(EngineTimeoutError, match="did not answer within 0.5 s"):
            create_remote_backend(url, "llama-server", timeout=0.5).load()
        for connection in accepted:
            connection.close()


def test_bench_compares_raw_and_pipeline(tiny_server: LlamaServer, encoding: HarmonyEncoding) -> None:
    from harmony_chat.bench.remote_bench import compare_remote

    backend = connect(tiny_server)
    result = compare_remote(backend, tokens=24, runs=1)
    backend.close()
    assert result.engine == "llama-server" and result.host == f"127.0.0.1:{tiny_server.port}"
    assert result.raw.tokens == result.pipeline.tokens > 0  # same seed, same request: the same tokens
