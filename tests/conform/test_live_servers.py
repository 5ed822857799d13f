"""The audit on real servers: ``harmony-chat serve --demo``, and llama-server built from the vendored llama.cpp.

``serve --demo`` must pass every check. llama-server (its own ``/v1/chat/completions`` and
``/v1/responses``, the gpt-oss chat template, the pocket GGUF) is audited as any server would be:
the test pins what it gets wrong, with the evidence, so a change in either side shows up here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.conform.command import ConformSettings, audit_server
from harmony_chat.conform.result import Status
from harmony_chat.demo.pocket import pocket_model_path
from tests.conform.conftest import LLAMA_SERVER_FAILS, evidence, statuses
from tests.support.llama_server import LlamaServer, free_port, llama_server_binary, serve
from tests.support.serve_process import wait_for_health

ROOT = Path(__file__).resolve().parents[2]
CHAT_TEMPLATE = ROOT / "tests" / "data" / "chat-template" / "gpt-oss-chat-template.jinja"
SAMPLES = 2


@pytest.fixture(scope="module")
def serve_demo(tmp_path_factory: pytest.TempPathFactory, encoding: HarmonyEncoding) -> Iterator[str]:
    """``harmony-chat serve --demo`` in its own process, greedy so its answers are the trained ones.

    ``encoding`` puts the vocabulary in the (isolated) cache the server process reads it from.
    """
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARMONY_CHAT_CONFIG_DIR": str(tmp_path_factory.mktemp("cfg"))}
    command = [sys.executable, "-m", "harmony_chat", "serve", "--demo", "--port", str(port), "--temperature", "0"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_health(server, port, lambda: server.communicate()[1])
        yield f"http://127.0.0.1:{port}"
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()


@pytest.mark.llama
def test_serve_demo_passes_every_check(serve_demo: str, tmp_path: Path) -> None:
    recording = tmp_path / "serve-demo.json"
    audit = audit_server(ConformSettings(url=serve_demo, samples=SAMPLES, record=recording))
    not_passed = {
        r.check.id: (r.status.value, r.outcome.evidence) for r in audit.results if r.status is not Status.PASS
    }
    assert not_passed == {} and len(audit.results) == 28
    assert "(+30)" in evidence(audit, "chat.cot.kept") and "101 = 101" in evidence(audit, "chat.cot.dropped")
    replayed = audit_server(ConformSettings(replay=recording, samples=SAMPLES))  # the recording keeps the verdicts
    assert statuses(replayed) == statuses(audit)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-server on the pocket GGUF with gpt-oss's chat template (the pocket GGUF carries none)."""
    binary = llama_server_binary()
    extra = ["--chat-template-file", str(CHAT_TEMPLATE)]
    yield from serve(binary, pocket_model_path(), tmp_path_factory.mktemp("llama-server"), extra_args=extra)


@pytest.mark.llama_server
def test_llama_server_is_audited_with_evidence(llama_server: LlamaServer) -> None:
    """Its deviations are llama.cpp's, reported with evidence; everything else passes (none is ours)."""
    audit = audit_server(ConformSettings(url=llama_server.url, samples=SAMPLES))
    failed = {r.check.id for r in audit.results if r.status is Status.FAIL}
    assert failed == set(LLAMA_SERVER_FAILS)
    assert {r.status for r in audit.results} == {Status.PASS, Status.FAIL}  # every probe answered, nothing unread
    for check, piece in LLAMA_SERVER_FAILS.items():
        assert piece in evidence(audit, check), check
