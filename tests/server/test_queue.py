"""One generation at a time: clients queue without loss, a full queue gets 429, a client that leaves cancels."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest
from openai import RateLimitError
from openai_harmony import HarmonyEncoding

from harmony_chat.server.app import ServerLimits
from harmony_chat.server.harmony_request import ServedModel
from tests.server.conftest import DATE, PromptRecordingReplay, RunningServer, replay, replay_server, running
from tests.server.test_chat_completions import ANSWER

LONG = (
    "<|channel|>analysis<|message|>"
    + " ".join(f"step{i}" for i in range(300))
    + "<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>"
)
USER: Any = [{"role": "user", "content": "What is 2 + 2?"}]


def _wait(condition: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _health(server: RunningServer) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(server.url + "/health", timeout=10).json()
    return body


def test_twenty_concurrent_clients_queue_without_loss(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER, delay_s=0.002)
    answers: list[str | None] = []
    errors: list[BaseException] = []
    with server as running_server:

        def ask(index: int) -> None:
            try:
                client = running_server.client(timeout=60)
                messages: Any = [{"role": "user", "content": f"Question {index}: what is 2 + 2?"}]
                answers.append(
                    client.chat.completions.create(model="replay-model", messages=messages).choices[0].message.content
                )
            except BaseException as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=90)
    assert not errors and answers == ["2 + 2 = 4."] * 20
    assert backend.most_active == 1  # never two generations on the model at once
    asked = sorted(encoding.decode(prompt).split("Question ", 1)[1].split(":", 1)[0] for prompt in backend.prompts)
    assert asked == sorted(str(i) for i in range(20))  # each request was generated once, none lost


def test_a_full_queue_gets_429_with_retry_after(encoding: HarmonyEncoding) -> None:
    backend = replay(encoding, LONG, delay_s=0.01)
    served = ServedModel(backend, encoding, "replay-model", start_date=DATE)
    timeouts: list[BaseException] = []

    def wait_then_give_up(url: str) -> None:
        try:
            httpx.post(url, json={"model": "replay-model", "messages": USER}, timeout=1.5)
        except httpx.ReadTimeout as timeout:
            timeouts.append(timeout)

    with running(served, ServerLimits(max_queue=1)) as running_server:
        client = running_server.client()
        holding = client.chat.completions.create(model="replay-model", messages=USER, stream=True)
        next(iter(holding))  # the model is busy with this one
        waiting = threading.Thread(target=wait_then_give_up, args=(running_server.url + "/v1/chat/completions",))
        waiting.start()
        assert _wait(lambda: _health(running_server)["waiting"] == 1)
        with pytest.raises(RateLimitError) as refused:
            client.chat.completions.create(model="replay-model", messages=USER)
        waiting.join(timeout=10)
        assert _wait(lambda: _health(running_server)["waiting"] == 0)  # the server saw the waiting client leave
        holding.close()
    assert refused.value.status_code == 429 and int(refused.value.response.headers["Retry-After"]) >= 1
    assert refused.value.code == "queue_full" and len(timeouts) == 1
    assert len(backend.prompts) == 1  # neither the refused nor the departed request reached the model


def _stops_when_the_client_leaves(backend: PromptRecordingReplay, running_server: RunningServer, leave: Any) -> None:
    leave(running_server)
    assert backend.stopped.wait(10), "the generation was not cancelled"
    assert _wait(lambda: not _health(running_server)["busy"])
    total = len(backend._turns[0])
    assert backend.last_stats.generated_tokens < total  # it stopped well before the end of the turn


def test_a_client_that_disconnects_mid_stream_cancels_its_generation(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, LONG, delay_s=0.01)

    def leave(running_server: RunningServer) -> None:
        stream = running_server.client().chat.completions.create(model="replay-model", messages=USER, stream=True)
        for index, _ in enumerate(stream):
            if index == 5:
                break
        stream.close()

    with server as running_server:
        _stops_when_the_client_leaves(backend, running_server, leave)
        # the model is free again: the next client gets its answer
        after = running_server.client().responses.create(model="replay-model", input="Next?", stream=True)
        for event in after:
            if event.type == "response.reasoning_text.delta":
                break
        after.close()
        assert _wait(lambda: not _health(running_server)["busy"])


def test_a_client_that_gives_up_on_a_plain_request_cancels_it(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, LONG, delay_s=0.01)

    def leave(running_server: RunningServer) -> None:
        with pytest.raises(httpx.ReadTimeout):
            body = {"model": "replay-model", "messages": USER}
            httpx.post(running_server.url + "/v1/chat/completions", json=body, timeout=0.5)

    with server as running_server:
        _stops_when_the_client_leaves(backend, running_server, leave)
