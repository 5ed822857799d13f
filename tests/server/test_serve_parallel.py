"""``serve --url`` in front of a real llama-server with four slots: four generations at once, each on its own slot.

Bounded: the pocket model, four streams of at most 64 tokens, every wait with a limit. Overlap is
shown twice: by the client (every stream had its first token before any stream had its last) and
by the engine (its ``/slots`` showed all four processing at one moment).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.remote import LlamaServerBackend, create_remote_backend
from harmony_chat.bench.serve_bench import parse_concurrency, run_serve_bench
from harmony_chat.cli import main
from harmony_chat.demo.pocket import POCKET_DATE, POCKET_NAME, pocket_model_path
from harmony_chat.server.backend_pool import BackendPool, ParallelError, pool_for
from harmony_chat.server.harmony_request import ServedModel
from tests.server.conftest import RunningServer, running
from tests.support.llama_server import LlamaServer, llama_server_binary, serve

pytestmark = pytest.mark.llama_server

SLOTS = 4
TOKENS = 64
LIMIT_S = 120.0
"""Longest any test here waits for its streams (a bound, not a speed check)."""


@pytest.fixture(scope="module")
def four_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-server on the pocket model with four slots (the ``-np`` given last wins)."""
    folder = tmp_path_factory.mktemp("four-slots")
    yield from serve(llama_server_binary(), pocket_model_path(), folder, context=8192, extra_args=["-np", str(SLOTS)])


@pytest.fixture(scope="module")
def engine(four_slots: LlamaServer) -> Iterator[LlamaServerBackend]:
    backend = create_remote_backend(four_slots.url, "llama-server")
    assert isinstance(backend, LlamaServerBackend)
    backend.load()
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def serving(engine: LlamaServerBackend, encoding: HarmonyEncoding) -> Iterator[tuple[RunningServer, BackendPool]]:
    """``serve --url`` on the engine, with the pool it makes by default."""
    pool = pool_for(engine, None)
    served = ServedModel(engine, encoding, POCKET_NAME, start_date=POCKET_DATE)
    with running(served, pool=pool) as server:
        yield server, pool


def _processing(server: LlamaServer) -> int:
    slots = httpx.get(server.url + "/slots", timeout=10.0).json()
    return sum(1 for slot in slots if slot.get("is_processing"))


def _watch_slots(server: LlamaServer, done: threading.Event) -> Callable[[], int]:
    """Poll ``/slots`` until ``done``; the returned function gives the most slots seen processing at once."""
    most = [0]

    def poll() -> None:
        deadline = time.monotonic() + LIMIT_S
        while not done.is_set() and time.monotonic() < deadline:
            most[0] = max(most[0], _processing(server))
            time.sleep(0.005)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()

    def result() -> int:
        watcher.join(timeout=10)
        return most[0]

    return result


def test_the_pool_takes_one_handle_per_slot_and_refuses_more(engine: LlamaServerBackend) -> None:
    pool = pool_for(engine, None)
    assert engine.parallel_slots == SLOTS and pool.size == SLOTS
    assert pool.reason == f"llama-server at {engine.client.host} has {SLOTS} slots"
    slots = []
    for index in range(pool.size):
        handle = pool.backend(index)
        assert isinstance(handle, LlamaServerBackend) and handle.client is engine.client
        slots.append(handle.slot)
    assert slots == [0, 1, 2, 3] and engine.slot == -1  # copies: the engine's own backend is left as it was
    assert [pool_for(engine, count).size for count in (1, 2)] == [1, 2]
    assert pool_for(engine, 1).backend(0) is engine  # one handle: the backend itself, the server picks the slot
    engine.total_slots = None  # an older server that does not say
    try:
        assert pool_for(engine, None).size == 1 and pool_for(engine, None).reason.endswith("has 1 slot")
    finally:
        engine.total_slots = SLOTS
    with pytest.raises(ParallelError, match=rf"--parallel 5: 5 generations at once need 5 slots, and .* has {SLOTS}"):
        pool_for(engine, 5)


def test_four_streams_through_serve_generate_at_once(
    serving: tuple[RunningServer, BackendPool], four_slots: LlamaServer
) -> None:
    server, _ = serving
    times: list[list[float]] = [[] for _ in range(SLOTS)]
    usage: list[dict[str, Any]] = [{} for _ in range(SLOTS)]
    done = threading.Event()
    most_processing = _watch_slots(four_slots, done)
    start = threading.Barrier(SLOTS, timeout=30)

    def stream(index: int) -> None:
        body = {
            "model": POCKET_NAME,
            "messages": [{"role": "user", "content": f"Tell me a long story about otter number {index}."}],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": TOKENS,
            "temperature": 1.0,
            "seed": index,
        }
        start.wait()
        with httpx.stream("POST", server.url + "/v1/chat/completions", json=body, timeout=LIMIT_S) as response:
            for line in response.iter_lines():
                if not line.startswith("data: {"):
                    continue
                chunk = json.loads(line[6:])
                if chunk.get("usage"):
                    usage[index] = chunk["usage"]
                elif chunk["choices"] and set(chunk["choices"][0]["delta"]) & {"content", "reasoning"}:
                    times[index].append(time.monotonic())

    threads = [threading.Thread(target=stream, args=(index,)) for index in range(SLOTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=LIMIT_S)
    done.set()
    assert all(u.get("completion_tokens") == TOKENS for u in usage), usage  # the pocket model's answer is longer
    assert all(len(arrivals) >= 2 for arrivals in times)  # streamed as it came (serve joins text of 20 ms per chunk)
    # every stream had its first token before any stream had its last: all four ran at the same time
    assert max(arrivals[0] for arrivals in times) < min(arrivals[-1] for arrivals in times)
    assert most_processing() == SLOTS  # and the engine had all four slots generating at one moment


def test_each_conversations_next_turn_goes_back_to_its_slot(serving: tuple[RunningServer, BackendPool]) -> None:
    """Four conversations, then their second turns at once: each finds its first turn in its slot's cache.

    Each opens with a long message of its own (about 400 tokens): another slot would share only the
    system message and the user header with it (under 80 tokens). The second turns start last
    conversation first, so taking the least recently used slot would give each the wrong one.
    """
    server, _ = serving

    def ask(messages: list[dict[str, str]]) -> dict[str, Any]:
        body = {"model": POCKET_NAME, "messages": messages, "max_tokens": TOKENS, "temperature": 0.0}
        answer: dict[str, Any] = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=LIMIT_S).json()
        return answer

    def together(conversations: list[list[dict[str, str]]]) -> list[dict[str, Any]]:
        """Ask them all at once, starting with the last one (a few milliseconds apart, so in that order)."""
        answers: list[dict[str, Any]] = [{} for _ in conversations]

        def run(index: int) -> None:
            answers[index] = ask(conversations[index])

        threads = [threading.Thread(target=run, args=(index,)) for index in range(len(conversations))]
        for thread in reversed(threads):
            thread.start()
            time.sleep(0.05)
        for thread in threads:
            thread.join(timeout=LIMIT_S)
        return answers

    openings = [
        f"Conversation {i}. " + " ".join(f"w{i}x{j}" for j in range(80)) + " What is 2 + 2?" for i in range(SLOTS)
    ]
    firsts = [[{"role": "user", "content": opening}] for opening in openings]
    first_answers = [ask(conversation) for conversation in firsts]  # one after the other: slot i holds conversation i
    seconds = [
        [*conversation, {"role": "assistant", "content": answer["choices"][0]["message"]["content"] or "OK."}]
        + [{"role": "user", "content": "Thanks!"}]
        for conversation, answer in zip(firsts, first_answers, strict=True)
    ]
    second_answers = together(seconds)
    for first, second in zip(first_answers, second_answers, strict=True):
        prompt = first["usage"]["prompt_tokens"]
        assert prompt > 300
        # the slot still held the first turn: its prompt came from the cache, but for the few tokens
        # the engine may re-evaluate from its last cache checkpoint
        assert second["usage"]["prompt_tokens_details"]["cached_tokens"] >= prompt - 16


def test_bench_serve_measures_both_sides_with_the_same_streams(
    serving: tuple[RunningServer, BackendPool], engine: LlamaServerBackend
) -> None:
    server, _ = serving
    report = run_serve_bench(server.url + "/v1", parse_concurrency("1,4"), engine=engine, max_tokens=32, runs=1)
    assert (report.model, report.engine, report.max_tokens, report.runs) == (POCKET_NAME, "llama-server", 32, 1)
    assert [level.concurrency for level in report.levels] == [1, 4]
    for level in report.levels:
        assert level.engine is not None
        for side in (level.serve, level.engine):
            assert side.errors == 0 and side.tokens_per_stream == 32  # every answer is longer than 32 tokens
            assert side.tokens_per_s > 0 and 0 < side.ttft_median_s <= side.ttft_p95_s < LIMIT_S
        assert level.engine.prompt_tokens == level.serve.prompt_tokens  # the same conversation on both sides
        assert level.ratio is not None and level.ratio > 0


def test_bench_serve_prints_json_from_the_command_line(
    serving: tuple[RunningServer, BackendPool], four_slots: LlamaServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = serving
    arguments = ["bench", "--serve", server.url, "--engine-url", four_slots.url, "--concurrency", "2"]
    code = main([*arguments, "--tokens", "16", "--runs", "1", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert report["engine"] == "llama-server" and [level["concurrency"] for level in report["levels"]] == [2]
    level = report["levels"][0]
    assert level["serve"]["errors"] == level["engine"]["errors"] == 0 and level["ratio"] > 0
    assert main(["bench", "--serve", server.url, "--concurrency", "1,x"]) == 1
    assert "--concurrency takes whole numbers" in capsys.readouterr().err


def test_serve_only_needs_no_engine_url(serving: tuple[RunningServer, BackendPool]) -> None:
    server, _ = serving
    report = run_serve_bench(server.url, (2,), max_tokens=16, runs=1)
    (level,) = report.levels
    assert level.engine is None and level.ratio is None and level.serve.errors == 0
    assert report.engine is None and level.serve.tokens_per_stream == 16
