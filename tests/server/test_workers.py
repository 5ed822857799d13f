"""``serve --workers N``: real worker processes on one port, one store on disk, stopped together.

``serve --url`` runs as a process in front of the fake vLLM (tests/data/engines, on loopback in
this process); its workers are real spawned interpreters. What a user relies on is checked: both
workers run and answer, a stored response survives the death of every worker that could have
stored it (the supervisor starts new ones, which serve ``previous_response_id`` from the shared
SQLite file), SIGTERM stops them all, a parent killed outright takes them with it, and what cannot
be split is refused in one line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openai import OpenAI
from openai_harmony import HarmonyEncoding

from harmony_chat.cli import main
from harmony_chat.server.workers import default_workers
from tests.support.fake_engine import FakeEngine, load_fixture
from tests.support.serve_process import wait_for_health

ROOT = Path(__file__).resolve().parents[2]
MODEL = "openai/gpt-oss-120b"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


def _workers(pid: int) -> set[int]:
    """The parent's children that are serve workers (not multiprocessing's resource tracker)."""
    return {child for child in _children(pid) if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()}


def _wait_for(condition: object, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.fixture
def engine() -> Iterator[FakeEngine]:
    fake = FakeEngine(load_fixture("vllm"), "answer")
    yield fake
    fake.close()


@pytest.fixture
def two_workers(
    tmp_path: Path, engine: FakeEngine, encoding: HarmonyEncoding
) -> Iterator[tuple[subprocess.Popen[str], int, Path]]:
    """``serve --url`` with two workers and a store file; ``encoding`` puts the vocabulary in the cache it reads."""
    port = _free_port()
    store = tmp_path / "serve.sqlite3"
    command = [sys.executable, "-m", "harmony_chat", "serve", "--url", engine.url, "--engine", "vllm"]
    command += ["--port", str(port), "--workers", "2", "--store-path", str(store)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARMONY_CHAT_CONFIG_DIR": str(tmp_path)}
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_health(server, port, lambda: server.communicate()[1])
        _wait_for(lambda: len(_workers(server.pid)) == 2)
        yield server, port, store
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.communicate()


def test_two_workers_answer_and_share_one_store_that_outlives_them(
    two_workers: tuple[subprocess.Popen[str], int, Path],
) -> None:
    server, port, store = two_workers
    url = f"http://127.0.0.1:{port}"
    health = httpx.get(url + "/health", timeout=5).json()
    assert health["workers"] == 2 and "in each of 2 workers" in health["parallel_reason"]
    client = OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=30)
    first = client.responses.create(model=MODEL, input="Hi")
    assert first.output_text == "Hello!"
    before = _workers(server.pid)
    for pid in before:  # every worker that could have stored it dies
        os.kill(pid, signal.SIGKILL)
    _wait_for(lambda: len(_workers(server.pid)) == 2 and not _workers(server.pid) & before)
    wait_for_health(server, port, lambda: "")
    # new processes, none of which stored it, continue from it (and each other's, on fresh connections)
    previous = first.id
    for _ in range(6):
        with OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=30) as fresh:
            answer = fresh.responses.create(model=MODEL, input="And again?", previous_response_id=previous)
        assert answer.output_text == "Hello!"
        previous = answer.id
    kept = client.responses.retrieve(first.id)
    assert kept.id == first.id and kept.output_text == "Hello!"
    assert store.exists() and (store.stat().st_mode & 0o777) == 0o600


def test_workers_end_when_their_parent_is_killed_outright(
    two_workers: tuple[subprocess.Popen[str], int, Path],
) -> None:
    server, port, _ = two_workers
    workers = _workers(server.pid)
    server.kill()  # SIGKILL: the parent cannot stop them itself
    server.wait()  # (not communicate: workers left running would hold its pipes open)

    def ended(pid: int) -> bool:
        return not Path(f"/proc/{pid}").exists() or b"zombie" in Path(f"/proc/{pid}/status").read_bytes().lower()

    _wait_for(lambda: all(ended(pid) for pid in workers), seconds=30)
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)


def test_sigterm_stops_every_worker(two_workers: tuple[subprocess.Popen[str], int, Path]) -> None:
    server, port, _ = two_workers
    workers = _workers(server.pid)
    server.send_signal(signal.SIGTERM)
    _, err = server.communicate(timeout=30)
    assert server.returncode == 0
    assert "in 2 workers" in err and "Traceback" not in err
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or b"zombie" in Path(f"/proc/{pid}/status").read_bytes().lower()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)


def test_workers_for_the_in_process_model_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording = tmp_path / "answer.txt"
    recording.write_text("<|channel|>final<|message|>Hi.<|return|>", encoding="utf-8")
    code = main(["serve", "--workers", "2", "--replay", str(recording), "--port", str(_free_port())])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: --workers 2: the in-process model runs in one worker")  # before it loads


def test_workers_with_an_in_memory_store_are_refused(
    engine: FakeEngine, encoding: HarmonyEncoding, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["serve", "--url", engine.url, "--engine", "vllm", "--workers", "2", "--store-path", ":memory:"]
    code = main([*command, "--port", str(_free_port())])
    err = capsys.readouterr().err
    assert code == 2 and "an in-memory store (:memory:) cannot be shared" in err


def test_the_default_is_one_worker_unless_the_engine_can_be_split() -> None:
    assert default_workers(False) == 1
    cores = len(os.sched_getaffinity(0))
    assert default_workers(True) == max(1, min(cores, 4))
