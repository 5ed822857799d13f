"""``serve --url``'s engine path: every turn on the event loop, many streams on one pooled client.

A fake vLLM on loopback (tests/data/engines) answers; the real server, the official openai client
and real sockets are in between. What the thread path could not do is checked here: no thread per
turn, many streams interleaving through one engine session, and a client that leaves closing the
engine's connection while the engine still holds the prompt.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.remote import RemoteBackend, create_remote_backend
from harmony_chat.server.backend_pool import pool_for
from harmony_chat.server.harmony_request import ServedModel
from tests.server.conftest import DATE, RunningServer, running
from tests.support.fake_engine import FakeEngine, load_fixture

MODEL = "openai/gpt-oss-120b"
"""The model the vLLM fixture serves."""
TURN_THREAD = "harmony-chat-serve-turn"


@pytest.fixture
def engine_server(encoding: HarmonyEncoding) -> Iterator[Any]:
    opened: list[tuple[FakeEngine, Any]] = []

    def start(stream: str = "answer", parallel: int = 32) -> tuple[FakeEngine, RunningServer]:
        fake = FakeEngine(load_fixture("vllm"), stream)
        backend = create_remote_backend(fake.url, "vllm")
        assert isinstance(backend, RemoteBackend)
        backend.load()
        served = ServedModel(backend, encoding, MODEL, start_date=DATE)
        context = running(served, pool=pool_for(backend, parallel))
        server = context.__enter__()
        opened.append((fake, context))
        return fake, server

    yield start
    for fake, context in opened:
        context.__exit__(None, None, None)
        fake.close()


def _turn_threads() -> int:
    return sum(thread.name == TURN_THREAD for thread in threading.enumerate())


def test_many_streams_at_once_each_get_the_whole_answer_with_no_thread_per_turn(engine_server: Any) -> None:
    fake, server = engine_server()
    streams = 24
    seen_threads = 0

    async def one(client: AsyncOpenAI, index: int) -> tuple[str, str | None]:
        nonlocal seen_threads
        text = ""
        finish = None
        stream = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": f"Hi {index}"}], stream=True
        )
        async for chunk in stream:
            seen_threads = max(seen_threads, _turn_threads())
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
                finish = chunk.choices[0].finish_reason or finish
        return text, finish

    async def all_at_once() -> list[tuple[str, str | None]]:
        async with AsyncOpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0) as client:
            return await asyncio.gather(*(one(client, index) for index in range(streams)))

    answers = asyncio.run(all_at_once())
    assert answers == [("Hello!", "stop")] * streams
    assert seen_threads == 0  # every turn ran on the event loop
    prompts = {tuple(request.body["prompt"]) for request in fake.generate_requests()}
    assert len(prompts) == streams  # each stream's own conversation reached the engine


def test_a_client_that_leaves_closes_the_engine_request_while_it_holds_the_prompt(engine_server: Any) -> None:
    fake, server = engine_server("held")
    body = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    with httpx.Client(timeout=10) as client, client.stream("POST", server.url + "/v1/chat/completions", json=body):
        time.sleep(0.5)  # the request reached the engine, which holds its answer back
        assert fake.generate_requests()
        left = time.monotonic()
    assert fake.disconnected.wait(10)
    assert time.monotonic() - left < 5  # long before the engine's hold ended


def test_a_responses_stream_whose_client_left_is_not_stored(engine_server: Any) -> None:
    fake, server = engine_server("held")
    body = {"model": MODEL, "input": "Hi", "stream": True, "store": True}
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", server.url + "/v1/responses", json=body) as response:
            created = next(line for line in response.iter_lines() if line.startswith("data: "))
        assert fake.disconnected.wait(10), "the engine request was not closed"
        response_id = httpx.Response(200, content=created[len("data: ") :]).json()["response"]["id"]
        time.sleep(0.2)
        assert client.get(f"{server.url}/v1/responses/{response_id}").status_code == 404


def test_a_stop_sequence_ends_the_answer_with_usage_on_the_engine_path(engine_server: Any) -> None:
    _, server = engine_server()
    client = server.client()
    answer = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Hi"}], stop=["llo"])
    assert answer.choices[0].message.content == "He"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.usage is not None and answer.usage.completion_tokens > 0
    chunks = list(
        client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Hi"}],
            stop="llo",
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == "He"
    assert [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices and chunk.choices[0].finish_reason] == [
        "stop"
    ]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_an_engine_error_mid_answer_is_reported_after_what_came_before(engine_server: Any) -> None:
    _, server = engine_server("error_mid_stream")
    body = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]}
    answer = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=30)
    assert answer.status_code == 500
    assert "the model failed" in answer.json()["error"]["message"]
