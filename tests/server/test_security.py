"""Who may drive a keyless server: loopback Host names only, JSON bodies only, no CORS; health without the key.

A web page the user opens can send a request to 127.0.0.1 (a form or ``text/plain`` POST needs no
CORS preflight) or, through DNS rebinding, under its own host name; neither may reach the model.
Bodies that broke the JSON reader (deep nesting, lone surrogates) are client errors, not 500s.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from typing import Any

import httpx
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.server.app import ServerLimits
from harmony_chat.server.guard import LOOPBACK_HOSTS, RequestGuard, host_rule
from harmony_chat.server.harmony_request import ServedModel
from tests.server.conftest import DATE, RunningServer, replay, replay_server, running
from tests.server.test_chat_completions import ANSWER

USER: Any = [{"role": "user", "content": "What is 2 + 2?"}]
BODY: Any = {"model": "replay-model", "messages": USER}


def _error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    error: dict[str, Any] = body["error"]
    return error


def _port(server: RunningServer) -> str:
    return server.url.rsplit(":", 1)[1]


def test_foreign_host_names_never_reach_the_model(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running_server:
        url, port = running_server.url + "/v1/chat/completions", _port(running_server)
        rebound = httpx.post(url, json=BODY, headers={"Host": f"attacker.example:{port}"}, timeout=10)
        bare = httpx.post(url, json=BODY, headers={"Host": "attacker.example"}, timeout=10)
        listed = httpx.get(running_server.url + "/v1/models", headers={"Host": f"attacker.example:{port}"}, timeout=10)
        health = httpx.get(running_server.url + "/health", headers={"Host": f"attacker.example:{port}"}, timeout=10)
        names = [f"localhost:{port}", "localhost", f"127.0.0.1:{port}", f"[::1]:{port}", f"LocalHost:{port}"]
        allowed = [
            httpx.get(running_server.url + "/v1/models", headers={"Host": name}, timeout=10).status_code
            for name in names
        ]
    assert rebound.status_code == 400 and _error(rebound)["code"] == "invalid_host"
    assert "attacker.example" in _error(rebound)["message"] and "--allow-host" in _error(rebound)["message"]
    assert bare.status_code == 400 and listed.status_code == 400 and health.status_code == 400
    assert allowed == [200] * len(names)
    assert backend.prompts == []


def test_a_host_that_is_not_host_and_port_is_refused(encoding: HarmonyEncoding) -> None:
    """Userinfo, paths and spaces in ``Host`` are no name of this server, even when they start with one."""
    backend, server = replay_server(encoding, ANSWER)
    with server as running_server:
        url, port = running_server.url + "/v1/chat/completions", _port(running_server)
        tricks = [f"127.0.0.1:{port}@evil.com", f"user@127.0.0.1:{port}", f"localhost:{port}/x", "localhost evil.com"]
        refused = [httpx.post(url, json=BODY, headers={"Host": trick}, timeout=10) for trick in tricks]
    assert [response.status_code for response in refused] == [400] * len(tricks)
    assert {_error(response)["code"] for response in refused} == {"invalid_host"}
    assert backend.prompts == []


def test_an_allowed_host_name_is_accepted(encoding: HarmonyEncoding) -> None:
    served = ServedModel(replay(encoding, ANSWER), encoding, "replay-model", start_date=DATE)
    with running(served, ServerLimits(allowed_hosts=(*LOOPBACK_HOSTS, "chat.lan"))) as running_server:
        port = _port(running_server)
        url = running_server.url + "/v1/chat/completions"
        named = httpx.post(url, json=BODY, headers={"Host": f"chat.lan:{port}"}, timeout=10)
        other = httpx.post(url, json=BODY, headers={"Host": f"attacker.example:{port}"}, timeout=10)
    assert named.status_code == 200 and named.json()["choices"][0]["message"]["content"] == "2 + 2 = 4."
    assert other.status_code == 400


def test_which_host_names_a_bind_accepts() -> None:
    assert host_rule("127.0.0.1", api_key=None, allow=()) == LOOPBACK_HOSTS
    assert host_rule("::1", api_key="k", allow=("Chat.Lan",)) == (*LOOPBACK_HOSTS, "chat.lan")
    assert host_rule("0.0.0.0", api_key="k", allow=()) is None  # the key guards it; any name reaches it
    guard = RequestGuard(lambda *_: None, None)  # type: ignore[arg-type]
    request = {"type": "http", "method": "GET", "headers": [(b"host", b"a.example:1@b.example")]}
    assert guard.check(request) is not None  # even where any name is accepted, not a malformed one
    assert host_rule("0.0.0.0", api_key="k", allow=("gpu.lan",)) == (*LOOPBACK_HOSTS, "gpu.lan")


def test_cross_site_bodies_are_refused_with_415(encoding: HarmonyEncoding) -> None:
    """A page's form or ``text/plain`` POST needs no preflight: only ``application/json`` bodies are read."""
    backend, server = replay_server(encoding, ANSWER)
    with server as running_server:
        url, port = running_server.url + "/v1/chat/completions", _port(running_server)
        text = json.dumps(BODY)
        plain = httpx.post(url, content=text, headers={"Content-Type": "text/plain"}, timeout=10)
        form = httpx.post(url, content=text, headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=10)
        multipart = httpx.post(url, content=text, headers={"Content-Type": "multipart/form-data; b=x"}, timeout=10)
        missing = httpx.post(url, content=text, timeout=10)
        responses = httpx.post(
            running_server.url + "/v1/responses",
            content=json.dumps({"model": "replay-model", "input": "Hi"}),
            headers={"Content-Type": "text/plain;charset=UTF-8", "Origin": f"http://localhost:{port}"},
            timeout=10,
        )
        with_charset = httpx.post(
            url, content=text, headers={"Content-Type": "Application/JSON; charset=utf-8"}, timeout=10
        )
    for refused in (plain, form, multipart, missing, responses):
        assert refused.status_code == 415, refused.text
        assert _error(refused)["code"] == "unsupported_media_type"
    assert with_charset.status_code == 200
    assert len(backend.prompts) == 1  # only the JSON one reached the model


def test_foreign_origins_are_refused_and_no_cors_is_sent(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running_server:
        url, port = running_server.url + "/v1/chat/completions", _port(running_server)
        foreign = httpx.post(url, json=BODY, headers={"Origin": f"http://attacker.example:{port}"}, timeout=10)
        null = httpx.post(url, json=BODY, headers={"Origin": "null"}, timeout=10)
        preflight = httpx.options(
            url,
            headers={
                "Origin": f"http://localhost:{port}",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
            timeout=10,
        )
        same = httpx.post(url, json=BODY, headers={"Origin": f"http://localhost:{port}"}, timeout=10)
    assert foreign.status_code == 403 and _error(foreign)["code"] == "forbidden_origin"
    assert null.status_code == 403
    for response in (foreign, preflight, same):
        assert not any(name.lower().startswith("access-control-") for name in response.headers)
    assert preflight.status_code >= 400
    assert same.status_code == 200 and len(backend.prompts) == 1


def test_health_shows_details_only_with_the_key(encoding: HarmonyEncoding) -> None:
    served = ServedModel(replay(encoding, ANSWER), encoding, "replay-model", start_date=DATE)
    with running(served, ServerLimits(api_key="s3cret")) as running_server:
        url = running_server.url + "/health"
        anonymous = httpx.get(url, timeout=10)
        wrong = httpx.get(url, headers={"Authorization": "Bearer nope"}, timeout=10)
        keyed = httpx.get(url, headers={"Authorization": "Bearer s3cret"}, timeout=10)
    assert anonymous.status_code == 200 and anonymous.json() == {"status": "ok"}
    assert wrong.status_code == 200 and wrong.json() == {"status": "ok"}
    assert keyed.json() == {
        "status": "ok",
        "model": "replay-model",
        "busy": False,
        "waiting": 0,
        "generating": 0,
        "parallel": 1,
        "parallel_reason": "the in-process replay model runs one generation at a time",
        "workers": 1,
    }


def test_deeply_nested_json_is_a_400_without_a_traceback(
    encoding: HarmonyEncoding, caplog: pytest.LogCaptureFixture
) -> None:
    backend, server = replay_server(encoding, ANSWER)
    nested = b'{"model": "replay-model", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    shallow_but_deep = {"model": "replay-model", "messages": USER, "metadata": json.loads("[" * 500 + "]" * 500)}
    with caplog.at_level(logging.INFO), server as running_server:
        url = running_server.url + "/v1/chat/completions"
        deep = httpx.post(url, content=nested, headers={"Content-Type": "application/json"}, timeout=30)
        deep_items = httpx.post(
            running_server.url + "/v1/responses",
            json={"model": "replay-model", "input": [{"role": "user", "content": "[" * 50_000}]},
            timeout=30,
        )
        five_hundred = httpx.post(url, json=shallow_but_deep, timeout=30)
    assert deep.status_code == 400 and "nested" in _error(deep)["message"]
    assert five_hundred.status_code == 400 and "nested" in _error(five_hundred)["message"]
    assert deep_items.status_code == 200  # brackets inside a string are text, not nesting
    assert "Traceback" not in caplog.text and "RecursionError" not in caplog.text
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(backend.prompts) == 1


def test_lone_surrogates_are_a_400_without_a_traceback(
    encoding: HarmonyEncoding, caplog: pytest.LogCaptureFixture
) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with caplog.at_level(logging.INFO), server as running_server:
        chat = httpx.post(
            running_server.url + "/v1/chat/completions",
            content=b'{"model": "replay-model", "messages": [{"role": "user", "content": "hi \\ud800"}]}',
            headers={"Content-Type": "application/json"},
            timeout=10,
        )
        responses = httpx.post(
            running_server.url + "/v1/responses",
            content=b'{"model": "replay-model", "input": "x", "instructions": "\\udfff!"}',
            headers={"Content-Type": "application/json"},
            timeout=10,
        )
        in_a_key = httpx.post(
            running_server.url + "/v1/responses",
            content=b'{"model": "replay-model", "input": "x", "metadata": {"\\ud83d": "v"}}',
            headers={"Content-Type": "application/json"},
            timeout=10,
        )
        pair = httpx.post(
            running_server.url + "/v1/chat/completions",
            content=b'{"model": "replay-model", "messages": [{"role": "user", "content": "ok \\ud83d\\ude00"}]}',
            headers={"Content-Type": "application/json"},
            timeout=10,
        )
    for refused in (chat, responses, in_a_key):
        assert refused.status_code == 400, refused.text
        assert "surrogate" in _error(refused)["message"]
    assert _error(chat)["param"] == "messages.0.content"
    assert pair.status_code == 200  # a proper surrogate pair is one emoji
    assert "Traceback" not in caplog.text
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(backend.prompts) == 1


def test_a_client_that_leaves_mid_body_is_one_info_line_not_an_error(
    encoding: HarmonyEncoding, caplog: pytest.LogCaptureFixture
) -> None:
    backend, server = replay_server(encoding, ANSWER)
    caplog.set_level(logging.INFO, logger="harmony_chat.server")
    with server as running_server:
        port = int(_port(running_server))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"model": '
            )
            time.sleep(0.3)
        deadline = time.monotonic() + 10
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.05)
        health = httpx.get(running_server.url + "/health", timeout=10)
    records = [record for record in caplog.records if record.name == "harmony_chat.server"]
    assert health.status_code == 200 and backend.prompts == []
    assert [record.levelno for record in records] == [logging.INFO], [record.getMessage() for record in records]
    assert records[0].getMessage() == "a client left /v1/chat/completions before its request body arrived"
    assert records[0].exc_info is None
