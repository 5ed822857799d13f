"""The real-engine tier: tests marked ``vllm`` run only when asked for (``pytest -m vllm``).

They start vLLM (CPU) once per session, which takes a minute and both cores, so the default run
(``-m 'not slow'``) skips them with how to run them; without the engines venv they skip with the
install line (``.ci/engines``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from openai_harmony import HarmonyEncoding

from tests.engines.vllm_server import TOOL_FLAGS, VllmServer, pocket_export, vllm_python

ASK = pytest.mark.skip(reason="the real-vLLM tier runs when selected: pytest -m vllm tests/engines (after .ci/engines)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the ``vllm`` tests unless the ``-m`` expression names the marker."""
    if "vllm" in (config.option.markexpr or ""):
        return
    for item in items:
        if item.get_closest_marker("vllm") is not None:
            item.add_marker(ASK)


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory: pytest.TempPathFactory, encoding: HarmonyEncoding) -> Iterator[VllmServer]:
    """A vLLM serving the pocket export with the gpt-oss recipe's tool flags (stopped after the session).

    ``encoding`` first puts the vocabulary where vLLM's openai-harmony reads it (TIKTOKEN_ENCODINGS_BASE).
    """
    python = vllm_python()
    folder = tmp_path_factory.mktemp("vllm")
    model = pocket_export(folder / "pocket-gpt-oss-hf")
    server = VllmServer(python, model, folder / "vllm.log", TOOL_FLAGS).start()
    try:
        yield server
    finally:
        server.stop()
