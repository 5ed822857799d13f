"""``bench --fake-engine``: the synthetic vLLM that ``bench --serve`` measures against, and the CPU figures.

The engine runs on loopback in this process; harmony-chat's own vLLM backend talks to it, so what
it streams is what ``serve`` would read from vLLM.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote import RemoteBackend, create_remote_backend
from harmony_chat.bench.fake_engine import BLOCK, FakeEngine, FakeEngineSettings, start_fake_engine
from harmony_chat.bench.process_cpu import tree_cpu
from harmony_chat.generation.turn import TurnOptions, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import ContentDelta
from harmony_chat.harmony.session import ChatSession


class Running:
    """The fake engine on a loop in a thread of its own."""

    def __init__(self, settings: FakeEngineSettings) -> None:
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.engine: FakeEngine | None = None
        self.url = ""

        async def start() -> None:
            server, self.engine = await start_fake_engine(settings)
            self.server = server
            self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
            ready.set()

        self.thread = threading.Thread(target=self._run, args=(start,), daemon=True)
        self.thread.start()
        assert ready.wait(30)

    def _run(self, start: object) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(start())  # type: ignore[operator]
        self.loop.run_forever()

    def close(self) -> None:
        async def stop() -> None:
            self.server.close()
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:  # the connections' handlers
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.server.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def fast_engine() -> Iterator[Running]:
    running = Running(FakeEngineSettings(rate=5000, tokens_per_event=4, ttft_s=0.0))
    yield running
    running.close()


def connect(running: Running) -> RemoteBackend:
    backend = create_remote_backend(running.url, "vllm")
    backend.load()  # the vocabulary check: /tokenize answers harmony's ids
    return backend


def test_harmony_chats_vllm_backend_runs_a_whole_turn_on_it(fast_engine: Running, encoding: HarmonyEncoding) -> None:
    backend = connect(fast_engine)
    session = ChatSession(encoding)
    session.add_user("Tell me a story.")
    events = list(run_turn(session, backend, TurnOptions(sampling=SamplingParams(max_tokens=120))))
    final = "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")
    analysis = "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "analysis")
    assert analysis.startswith("The user wants a long story.") and final.startswith("Once upon a time")
    assert backend.last_stats.generated_tokens == 120  # exactly max_tokens, ending in <|return|>
    assert session.history[-1].content  # recorded like any turn
    assert fast_engine.engine is not None and fast_engine.engine.tokens == 120


def test_tokens_come_in_events_of_the_set_size_and_the_prefix_cache_is_reported(fast_engine: Running) -> None:
    backend = connect(fast_engine)
    prompt = list(range(1000, 1000 + 3 * BLOCK + 5))

    async def read() -> list[list[int]]:
        reads: list[list[int]] = []
        try:
            async for ids in backend.agenerate(prompt, SamplingParams(max_tokens=40), tk.GENERATION_STOPS, bool):
                reads.append(ids)
        finally:
            await backend.aclose()
        return reads

    first = asyncio.run(read())
    assert sum(map(len, first)) == 40 and first[-1][-1] == tk.RETURN
    assert all(len(ids) % 4 == 0 for ids in first)  # 4 ids an event, one or more events a read
    assert backend.last_stats.prompt_tokens_cached == 0
    asyncio.run(read())
    assert backend.last_stats.prompt_tokens_cached == 3 * BLOCK  # the whole blocks seen before


def test_it_speaks_llama_servers_protocol_too(fast_engine: Running) -> None:
    backend = create_remote_backend(fast_engine.url, "llama-server")
    backend.load()
    assert backend.parallel_slots == 64 and backend.info.context_size == 131072
    prompt = list(range(2000, 2000 + 2 * BLOCK + 3))
    ids = list(backend.generate(prompt, SamplingParams(max_tokens=30), tk.GENERATION_STOPS, bool))
    again = list(backend.generate(prompt, SamplingParams(max_tokens=30), tk.GENERATION_STOPS, bool))
    assert ids == again and len(ids) == 30 and ids[-1] == tk.RETURN
    assert backend.last_stats.prompt_tokens_cached == 2 * BLOCK  # from the closing event's timings


def test_the_pace_is_kept() -> None:
    running = Running(FakeEngineSettings(rate=200, tokens_per_event=1, ttft_s=0.05))
    try:
        backend = connect(running)
        started = time.perf_counter()
        ids = list(backend.generate(list(range(100, 120)), SamplingParams(max_tokens=21), tk.GENERATION_STOPS, bool))
        took = time.perf_counter() - started
    finally:
        running.close()
    assert len(ids) == 21
    assert took >= 0.05 + 20 / 200  # the first token after ttft, then 200 a second: never faster than set


def test_process_tree_cpu_counts_the_children() -> None:
    busy = "import sys, time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\nsys.stdin.read()"
    child = subprocess.Popen([sys.executable, "-c", busy], stdin=subprocess.PIPE)
    try:
        time.sleep(1.0)
        own = tree_cpu(os.getpid())
        assert own is not None
        alone = tree_cpu(child.pid)
        assert alone is not None and alone.user_s + alone.system_s >= 0.3
        assert own.user_s + own.system_s >= alone.user_s + alone.system_s  # the child is part of the tree
    finally:
        child.communicate(b"")
    assert tree_cpu(child.pid) is None  # gone
