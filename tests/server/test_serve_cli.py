"""``harmony-chat serve``: the bind rule before anything loads, and ``serve --demo`` answering a real client."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import OpenAI
from openai_harmony import HarmonyEncoding

from harmony_chat.cli import main
from tests.support.fake_engine import FakeEngine, load_fixture
from tests.support.serve_process import wait_for_health

ROOT = Path(__file__).resolve().parents[2]


def test_a_non_loopback_host_without_a_key_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARMONY_CHAT_SERVE_API_KEY", raising=False)
    monkeypatch.setenv("HARMONY_CHAT_API_KEY", "a-remote-engines-key")  # not a key for this server
    code = main(["serve", "--host", "0.0.0.0", "--replay", "/nonexistent.txt"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: --host 0.0.0.0 would let other machines use the model") and err.count("\n") == 1
    assert "/nonexistent" not in err  # refused before the model is even looked for
    monkeypatch.setenv("HARMONY_CHAT_SERVE_API_KEY", "the-servers-key")
    code = main(["serve", "--host", "0.0.0.0", "--replay", "/nonexistent.txt"])
    err = capsys.readouterr().err
    # past the bind rule, to the model, which fails first: the socket is bound only after the model loads
    assert code == 1 and "/nonexistent.txt" in err and "--host" not in err and "cannot listen" not in err


def test_parallel_for_the_in_process_model_is_refused_in_one_line_before_it_loads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["serve", "--parallel", "4", "--replay", "/nonexistent.txt"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: --parallel needs a serving engine (--url)") and "llama-server --parallel N" in err
    assert "/nonexistent" not in err  # refused before the model is even looked for
    assert main(["serve", "--parallel", "0", "--replay", "/nonexistent.txt"]) == 2  # below 1: refused by the option


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.llama
def test_serve_demo_answers_an_openai_client(tmp_path: Path, encoding: HarmonyEncoding) -> None:
    """``encoding`` puts the vocabulary in the (isolated) cache the server process reads it from."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARMONY_CHAT_CONFIG_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "harmony_chat", "serve", "--demo", "--port", str(port), "--temperature", "0"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_health(server, port, lambda: server.communicate()[1])
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=60)
        (model,) = client.models.list().data
        messages: Any = [{"role": "user", "content": "What is 2 + 2?"}]
        answer = client.chat.completions.create(model=model.id, messages=messages)
        assert answer.choices[0].message.content == "2 + 2 = 4."
    finally:
        server.send_signal(signal.SIGINT)
        try:
            _, err = server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            _, err = server.communicate()
    assert "serving pocket-gpt-oss at http://127.0.0.1:" in err and "Traceback" not in err


def test_serve_flags_reach_the_server(tmp_path: Path, encoding: HarmonyEncoding) -> None:
    """``--allow-host`` and ``--store-path`` through the command line, on a real server process."""
    recording = tmp_path / "answer.txt"
    recording.write_text("<|channel|>final<|message|>Hi.<|return|>", encoding="utf-8")
    store = tmp_path / "kept" / "serve.sqlite3"
    port = _free_port()
    command = [sys.executable, "-m", "harmony_chat", "serve", "--replay", str(recording), "--port", str(port)]
    command += ["--allow-host", "chat.lan", "--store-path", str(store)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(server, port, lambda: server.communicate()[1])
        named = httpx.get(f"{url}/v1/models", headers={"Host": f"chat.lan:{port}"}, timeout=5)
        foreign = httpx.get(f"{url}/v1/models", headers={"Host": f"attacker.example:{port}"}, timeout=5)
        client = OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=30)
        response = client.responses.create(model=named.json()["data"][0]["id"], input="Hi")
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()
    assert named.status_code == 200 and foreign.status_code == 400
    assert response.output_text == "Hi."
    assert store.exists() and (store.stat().st_mode & 0o777) == 0o600


def test_a_port_in_use_is_one_error_line_exit_1_and_no_serving_claim(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    recording = tmp_path / "r.txt"
    recording.write_text("<|channel|>final<|message|>hi<|return|>\n", encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code = main(["serve", "--replay", str(recording), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.splitlines()[-1] == f"error: cannot listen on 127.0.0.1:{port}: address already in use"
    assert "serving" not in err and "Traceback" not in err and "Errno" not in err


def test_a_missing_model_file_is_said_before_any_loading_step(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--model", "/nonexistent/missing.gguf"])
    err = capsys.readouterr().err
    assert code == 1 and err.splitlines() == [
        "finding the model...",
        "error: model file not found: /nonexistent/missing.gguf",
    ]


def test_the_store_bounds_are_serve_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--store-item-kb``, ``--store-conversation-mb`` and ``--store-max-mb`` reach the store; the defaults hold."""
    from harmony_chat.server.response_store import DEFAULT_STORE_LIMITS, StoreLimits

    seen: list[Any] = []
    monkeypatch.setattr("harmony_chat.server.app.run_server", lambda *args, **kwargs: seen.append(kwargs["limits"]))
    recording = tmp_path / "r.txt"
    recording.write_text("<|channel|>final<|message|>hi<|return|>\n", encoding="utf-8")
    common = ["serve", "--replay", str(recording), "--port", str(_free_port()), "--store-path", ":memory:"]
    assert main([*common, "--store-item-kb", "8", "--store-conversation-mb", "2", "--store-max-mb", "16"]) == 0
    assert main(common) == 0
    assert [limits.store_limits for limits in seen] == [
        StoreLimits(item_bytes=8 * 1024, conversation_bytes=2 * 1024**2, store_bytes=16 * 1024**2),
        DEFAULT_STORE_LIMITS,
    ]
    assert main([*common, "--store-max-mb", "0"]) == 2  # below 1: refused by the option, in one line
    assert capsys.readouterr().err.count("error:") == 1


def test_ctrl_c_cuts_an_open_stream_at_once_instead_of_waiting_for_it(encoding: HarmonyEncoding) -> None:
    """The engine holds its answer for 30 s; the stream is cut at Ctrl+C, not after uvicorn's 5 s of grace."""
    fake = FakeEngine(load_fixture("vllm"), "held")
    port = _free_port()
    command = [sys.executable, "-m", "harmony_chat", "serve", "--url", fake.url, "--engine", "vllm"]
    command += ["--workers", "1", "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(server, port, lambda: server.communicate()[1])
        model = httpx.get(f"{url}/v1/models", timeout=5).json()["data"][0]["id"]
        body = {"model": model, "messages": [{"role": "user", "content": "Hi"}], "stream": True}
        with (
            httpx.Client(timeout=20) as client,
            client.stream("POST", f"{url}/v1/chat/completions", json=body) as reply,
        ):
            chunks = reply.iter_raw()
            assert next(chunks).startswith(b"data: ")
            server.send_signal(signal.SIGINT)
            asked = time.monotonic()
            with pytest.raises(httpx.RemoteProtocolError):  # cut: no [DONE], the body unfinished
                for _ in chunks:
                    pass
            cut_after = time.monotonic() - asked
        _, err = server.communicate(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
        fake.close()
    assert cut_after < 4
    assert server.returncode == 0 and "Traceback" not in err
