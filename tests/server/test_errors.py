"""Bad requests get OpenAI-shaped errors (400/401/404/413/500) and never a traceback; the bind rule."""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Sequence
from typing import Any

import httpx
import pytest
from openai import AuthenticationError, BadRequestError, InternalServerError, NotFoundError
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.server.app import ServerLimits, run_server
from harmony_chat.server.harmony_request import ServedModel
from harmony_chat.server.limits import UnsafeBind, check_bind, is_loopback
from tests.server.conftest import DATE, PromptRecordingReplay, replay, replay_server, running
from tests.server.test_chat_completions import ANSWER

USER: Any = [{"role": "user", "content": "What is 2 + 2?"}]


def _error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    assert "Traceback" not in response.text
    error: dict[str, Any] = body["error"]
    return error


def test_bad_json_and_bad_fields_are_400(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANSWER)
    with server as running_server:
        url = running_server.url + "/v1/chat/completions"
        json_type = {"Content-Type": "application/json"}
        bad_json = httpx.post(url, content=b'{"model": "replay-model", "messages": [', headers=json_type, timeout=10)
        not_object = httpx.post(url, json=[1, 2], timeout=10)
        missing = httpx.post(url, json={"model": "replay-model"}, timeout=10)
        wrong_type = httpx.post(url, json={"model": "replay-model", "messages": USER, "temperature": "hot"}, timeout=10)
        client = running_server.client()
        with pytest.raises(BadRequestError) as n_two:
            client.chat.completions.create(model="replay-model", messages=USER, n=2)
        unknown_call: Any = [*USER, {"role": "tool", "tool_call_id": "call_x", "content": "42"}]
        with pytest.raises(BadRequestError) as orphan:
            client.chat.completions.create(model="replay-model", messages=unknown_call)
        with pytest.raises(BadRequestError) as effort:
            client.chat.completions.create(model="replay-model", messages=USER, reasoning_effort="max")
    assert bad_json.status_code == 400 and _error(bad_json)["message"].startswith("the body is not valid JSON")
    assert not_object.status_code == 400 and _error(not_object)["message"] == "the body must be a JSON object"
    assert missing.status_code == 400 and _error(missing)["param"] == "messages"
    assert wrong_type.status_code == 400 and _error(wrong_type)["param"] == "temperature"
    assert n_two.value.param == "n"
    assert "call_x" in orphan.value.message
    assert effort.value.param == "reasoning_effort"


def test_unknown_model_route_and_method(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANSWER)
    with server as running_server:
        with pytest.raises(NotFoundError) as unknown:
            running_server.client().chat.completions.create(model="gpt-oss-120b", messages=USER)
        route = httpx.get(running_server.url + "/v1/nothing", timeout=10)
        method = httpx.get(running_server.url + "/v1/chat/completions", timeout=10)
        models = running_server.client().models.list()
    assert unknown.value.code == "model_not_found"
    assert route.status_code == 404 and _error(route)["code"] == "not_found"
    assert method.status_code == 405 and _error(method)
    assert [model.id for model in models.data] == ["replay-model"]


def test_oversized_body_is_413_with_or_without_content_length(encoding: HarmonyEncoding) -> None:
    backend = replay(encoding, ANSWER)
    served = ServedModel(backend, encoding, "replay-model", start_date=DATE)
    big = {"model": "replay-model", "messages": [{"role": "user", "content": "x" * 5000}]}
    with running(served, ServerLimits(max_body_bytes=4096)) as running_server:
        url = running_server.url + "/v1/chat/completions"
        declared = httpx.post(url, json=big, timeout=10)
        json_type = {"Content-Type": "application/json"}
        chunked = httpx.post(url, content=(b"x" * 1024 for _ in range(8)), headers=json_type, timeout=10)  # no length
        small = httpx.post(url, json={"model": "replay-model", "messages": USER}, timeout=10)
    assert declared.status_code == 413 and _error(declared)["code"] == "request_too_large"
    assert chunked.status_code == 413
    assert small.status_code == 200
    assert backend.prompts and len(backend.prompts) == 1  # nothing oversized reached the model


def test_api_key_is_required_when_set(encoding: HarmonyEncoding) -> None:
    served = ServedModel(replay(encoding, ANSWER), encoding, "replay-model", start_date=DATE)
    with running(served, ServerLimits(api_key="s3cret")) as running_server:
        body = {"model": "replay-model", "messages": USER}
        missing = httpx.post(running_server.url + "/v1/chat/completions", json=body, timeout=10)
        with pytest.raises(AuthenticationError) as wrong:
            running_server.client(api_key="s3cre").models.list()
        good = running_server.client(api_key="s3cret").chat.completions.create(model="replay-model", messages=USER)
        health = httpx.get(running_server.url + "/health", timeout=10)
    assert missing.status_code == 401 and _error(missing)["message"].startswith("missing API key")
    assert wrong.value.status_code == 401 and wrong.value.code == "invalid_api_key"
    assert good.choices[0].message.content == "2 + 2 = 4."
    assert health.status_code == 200 and health.json()["status"] == "ok"


def test_non_loopback_bind_needs_a_key_and_is_refused_before_binding(encoding: HarmonyEncoding) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("example.org")
    served = ServedModel(replay(encoding, ANSWER), encoding, "replay-model")
    with pytest.raises(UnsafeBind, match="--api-key"):
        run_server(served, host="0.0.0.0", port=1)  # refused before uvicorn is even imported to bind
    check_bind("0.0.0.0", "a-key")  # with a key it is allowed (not bound here)
    check_bind("127.0.0.1", None)


def test_context_overflow_is_400(encoding: HarmonyEncoding) -> None:
    backend = replay(encoding, ANSWER)
    served = ServedModel(backend, encoding, "replay-model", start_date=DATE, context_size=64)
    with running(served) as running_server, pytest.raises(BadRequestError) as overflow:
        running_server.client().chat.completions.create(model="replay-model", messages=USER, stream=True)
    assert overflow.value.code == "context_length_exceeded"
    assert backend.prompts == []


class FailingReplay(PromptRecordingReplay):
    """Fails after a few tokens (its first two turns), as a backend whose engine dies mid-turn."""

    failures_left = 3

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        stream = super().generate(prompt, sampling, stop_ids, should_stop)
        if self.failures_left <= 0:
            yield from stream
            return
        self.failures_left -= 1
        for _ in range(3):
            yield next(stream)
        raise RuntimeError("engine went away")


def test_backend_failure_is_500_or_an_error_event(encoding: HarmonyEncoding) -> None:
    from tests.helpers import ids

    backend = FailingReplay([ids(encoding, ANSWER)], name="replay-model")
    backend.load()
    with running(ServedModel(backend, encoding, "replay-model", start_date=DATE)) as running_server:
        client = running_server.client()
        with pytest.raises(InternalServerError) as failed:
            client.chat.completions.create(model="replay-model", messages=USER)
        with httpx.stream(
            "POST",
            running_server.url + "/v1/chat/completions",
            json={"model": "replay-model", "messages": USER, "stream": True},
        ) as streamed:
            lines = [line for line in streamed.iter_lines() if line.startswith("data:")]
        events = list(client.responses.create(model="replay-model", input="What is 2 + 2?", stream=True))
        again = client.chat.completions.create(model="replay-model", messages=USER)  # the server is still fine
    assert "engine went away" in failed.value.message and "Traceback" not in str(failed.value.body)
    assert '"error"' in lines[-2] and "engine went away" in lines[-2] and lines[-1] == "data: [DONE]"
    assert again.choices[0].message.content == "2 + 2 = 4."
    failed_event = events[-1]
    assert failed_event.type == "response.failed" and failed_event.response.error is not None
    assert "engine went away" in failed_event.response.error.message


def test_a_small_body_is_parsed_on_the_event_loop_and_a_big_one_in_a_worker_thread(
    encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread hop per request makes concurrent requests wait their turn at the GIL; a big body still takes it."""
    from harmony_chat.server import app

    hops: list[int] = []

    async def recording(function: Any, raw: bytes) -> Any:
        hops.append(len(raw))
        return function(raw)

    monkeypatch.setattr(app, "run_in_threadpool", recording)
    _, server = replay_server(encoding, ANSWER, ANSWER)
    big = "word " * (app.INLINE_PARSE_BYTES // 5)
    with server as running:
        client = running.client()
        small_answer = client.chat.completions.create(
            model="replay-model", messages=[{"role": "user", "content": "hi"}]
        )
        big_answer = client.chat.completions.create(model="replay-model", messages=[{"role": "user", "content": big}])
    assert small_answer.choices[0].message.content and big_answer.choices[0].message.content
    assert len(hops) == 1 and hops[0] > app.INLINE_PARSE_BYTES
