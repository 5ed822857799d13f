"""Handles for generations at once on vLLM and SGLang (recorded answers on loopback), and what serve makes of them.

Neither engine reports a limit of its own (they schedule requests themselves), so ``serve``
drives them through :data:`~harmony_chat.server.backend_pool.DEFAULT_ENGINE_PARALLEL` handles
unless ``--parallel`` says otherwise.
"""

from __future__ import annotations

import threading

import httpx
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote import RemoteBackend, create_remote_backend
from harmony_chat.harmony import tokens as tk
from harmony_chat.server.backend_pool import DEFAULT_ENGINE_PARALLEL, pool_for
from harmony_chat.server.harmony_request import ServedModel
from tests.server.conftest import running
from tests.support.fake_engine import FakeEngine, load_fixture

ANSWER_TOKENS = 16
"""Ids in the fixtures' recorded answer."""


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_engines_without_slots_get_the_default_number_of_handles(engine: str) -> None:
    fake = FakeEngine(load_fixture(engine))
    try:
        backend = create_remote_backend(fake.url, engine)
        backend.load()
        pool = pool_for(backend, None)
        assert backend.parallel_slots is None and pool.size == DEFAULT_ENGINE_PARALLEL
        assert pool.reason == f"{engine} at {backend.client.host} reports no limit; serve's default is 16"
        assert pool_for(backend, 3).size == 3 and pool_for(backend, 64).size == 64  # --parallel decides
    finally:
        fake.close()


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_handles_share_the_connection_but_each_keeps_its_own_figures(engine: str) -> None:
    fake = FakeEngine(load_fixture(engine))
    try:
        backend = create_remote_backend(fake.url, engine)
        backend.load()
        handles = backend.handles(3)
        assert handles[0] is backend and all(isinstance(handle, RemoteBackend) for handle in handles)
        assert all(handle.client is backend.client and handle.info is backend.info for handle in handles)
        generated: dict[int, list[int]] = {}

        def generate(index: int) -> None:
            sampling = SamplingParams(temperature=0.0, max_tokens=100)
            generated[index] = list(handles[index].generate([1, 2, 3], sampling, tk.GENERATION_STOPS, lambda: False))

        threads = [threading.Thread(target=generate, args=(index,)) for index in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert [len(generated[index]) for index in range(3)] == [ANSWER_TOKENS] * 3
        figures = [handle.last_stats for handle in handles]
        assert len({id(stats) for stats in figures}) == 3
        assert [stats.generated_tokens for stats in figures] == [ANSWER_TOKENS] * 3
    finally:
        fake.close()


def test_serve_reports_the_engines_concurrency(encoding: HarmonyEncoding) -> None:
    fake = FakeEngine(load_fixture("vllm"))
    try:
        backend = create_remote_backend(fake.url, "vllm")
        backend.load()
        served = ServedModel(backend, encoding, "gpt-oss")
        with running(served) as server:
            health = httpx.get(server.url + "/health", timeout=10).json()
    finally:
        fake.close()
    assert (health["parallel"], health["generating"]) == (DEFAULT_ENGINE_PARALLEL, 0)
    assert health["parallel_reason"].endswith("reports no limit; serve's default is 16")
