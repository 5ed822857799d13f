"""Servers for the serve tests: uvicorn on 127.0.0.1 (a free port) in a thread, over replay or the pocket model."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

import pytest
import uvicorn
from openai import OpenAI
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.demo.pocket import POCKET_DATE, POCKET_NAME, pocket_model_path
from harmony_chat.server.app import ServerLimits, create_app, uvicorn_config
from harmony_chat.server.backend_pool import BackendPool
from harmony_chat.server.harmony_request import ServedModel
from tests.helpers import ids

DATE = "2026-11-21"


class PromptRecordingReplay(ReplayBackend):
    """Replays turns and keeps every prompt (to check what the CoT rule kept) and sampling it was given."""

    def __init__(self, turns: Sequence[Sequence[int]], delay_s: float = 0.0, **options: object) -> None:
        super().__init__(turns=turns, delay_s=delay_s, **options)  # type: ignore[arg-type]
        self.prompts: list[list[int]] = []
        self.samplings: list[SamplingParams] = []
        self.active = 0
        self.most_active = 0
        self.finished = 0
        self.stopped = threading.Event()

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        self.prompts.append(list(prompt))
        self.samplings.append(sampling)
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        try:
            yield from super().generate(prompt, sampling, stop_ids, should_stop)
            if should_stop():
                self.stopped.set()
        finally:
            self.active -= 1
            self.finished += 1


def replay(encoding: HarmonyEncoding, *turns: str, delay_s: float = 0.0) -> PromptRecordingReplay:
    backend = PromptRecordingReplay([ids(encoding, turn) for turn in turns], delay_s=delay_s, name="replay-model")
    backend.load()
    return backend


@dataclass
class RunningServer:
    """A server on loopback and how to reach it."""

    url: str
    served: ServedModel

    def client(self, api_key: str = "unused", timeout: float = 60.0) -> OpenAI:
        return OpenAI(base_url=f"{self.url}/v1", api_key=api_key, max_retries=0, timeout=timeout)


@contextmanager
def running(
    served: ServedModel, limits: ServerLimits | None = None, pool: BackendPool | None = None
) -> Iterator[RunningServer]:
    """Run the app on 127.0.0.1 at a free port until the block ends (on ``pool``'s handles when given)."""
    limits = limits or ServerLimits()
    app = create_app(served, limits, pool)
    config = uvicorn_config(app, "127.0.0.1", 0, limits, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield RunningServer(f"http://127.0.0.1:{port}", served)
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def replay_server(
    encoding: HarmonyEncoding, *turns: str, delay_s: float = 0.0, limits: ServerLimits | None = None
) -> tuple[PromptRecordingReplay, AbstractContextManager[RunningServer]]:
    backend = replay(encoding, *turns, delay_s=delay_s)
    served = ServedModel(backend, encoding, "replay-model", start_date=DATE)
    return backend, running(served, limits)


@pytest.fixture(scope="session")
def pocket_backend() -> Iterator[LlamaCppBackend]:
    backend = LlamaCppBackend(pocket_model_path(), context_size=4096)
    backend.load()
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def pocket_server(pocket_backend: LlamaCppBackend, encoding: HarmonyEncoding) -> Iterator[RunningServer]:
    """The pocket model behind the server, sampling greedily so its answers are the trained ones."""
    served = ServedModel(
        pocket_backend, encoding, POCKET_NAME, sampling=SamplingParams(temperature=0.0, max_tokens=256),
        start_date=POCKET_DATE,
    )  # fmt: skip
    with running(served) as server:
        yield server
