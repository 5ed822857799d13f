"""Start and stop a real ``llama-server`` on 127.0.0.1 for the remote-engine tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from harmony_chat.backends.remote import llama_server_build as build
from harmony_chat.backends.remote.llama_server_build import BuildError, SdistUnavailable, build_llama_server
from harmony_chat.locations import cache_dir

BUILD_ROOT = cache_dir()
"""The developer's cache dir, read at import: the suite's session fixture later points the cache at a temp dir."""
CACHED_AT_START = build.server_binary(BUILD_ROOT).is_file()
"""Whether a built llama-server was there when the run started (read in the process that prints the header)."""
PORT_TRIES = 3
"""Starts on a fresh port when another process took the chosen one first (parallel workers)."""

STARTUP_S = 120.0
"""Longest wait for a server to load its model (a bound, not a speed check)."""


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PortTaken(RuntimeError):
    """llama-server could not bind its port."""


class LlamaServer:
    """One llama-server process serving ``model`` on loopback (``stop()`` ends it)."""

    def __init__(
        self,
        binary: Path,
        model: Path,
        log: Path,
        *,
        port: int | None = None,
        api_key: str | None = None,
        context: int = 4096,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.binary, self.model, self.log_path = binary, model, log
        self.port = port or free_port()
        self.api_key = api_key
        self.context = context
        self.extra_args = list(extra_args)
        """More command-line arguments (``--chat-template-file`` for a GGUF that carries no template)."""
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self._port_given = port is not None

    def start(self) -> LlamaServer:
        """Launch the server and wait until ``/health`` says the model is loaded.

        A port chosen here may be taken by another process between the probe and the bind: the server
        then says it could not bind, and starts again on another port (a port given stays).
        """
        for _ in range(PORT_TRIES - 1):
            try:
                return self._start()
            except PortTaken:
                if self._port_given:
                    raise
                self.port = free_port()
                self.url = f"http://127.0.0.1:{self.port}"
        return self._start()

    def _start(self) -> LlamaServer:
        command = [str(self.binary), "-m", str(self.model), "--host", "127.0.0.1", "--port", str(self.port)]
        command += ["-c", str(self.context), "-np", "1", "-t", "1", "--no-warmup", "--metrics"]
        if self.api_key:
            command += ["--api-key", self.api_key]
        command += self.extra_args
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_tail()
                if "couldn't bind" in tail:
                    raise PortTaken(tail)
                raise RuntimeError(f"llama-server exited ({self.process.returncode}): {tail}")
            try:
                if httpx.get(self.url + "/health", timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"llama-server did not get ready in {STARTUP_S:g} s: {self.log_tail()}")

    def metric(self, name: str) -> float:
        """One counter from ``GET /metrics`` (e.g. ``tokens_predicted_total``: tokens generated so far)."""
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        text = httpx.get(self.url + "/metrics", headers=headers, timeout=10.0).text
        for line in text.splitlines():
            if line.startswith(f"llamacpp:{name} "):
                return float(line.split()[1])
        raise AssertionError(f"llama-server reports no {name}")

    def slot(self) -> dict[str, Any]:
        """The first slot's state from ``GET /slots`` (what the server is doing now)."""
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        slots = httpx.get(self.url + "/slots", headers=headers, timeout=10.0).json()
        assert isinstance(slots, list) and isinstance(slots[0], dict)
        return slots[0]

    def wait_idle(self, limit_s: float = 60.0) -> dict[str, Any]:
        """Poll until the slot is not processing (bounded); return its state."""
        deadline = time.monotonic() + limit_s
        state = self.slot()
        while state["is_processing"] and time.monotonic() < deadline:
            time.sleep(0.05)
            state = self.slot()
        return state

    def kill(self) -> None:
        """Kill the process at once (SIGKILL), as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def stop(self) -> None:
        """End the process politely, then by force."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self) -> str:
        """The last lines the server logged."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "no log"
        return " | ".join(lines[-8:])


def status_line() -> str:
    """One line for the run's header: where llama-server comes from, or what the run will do without it."""
    given = os.environ.get(build.BINARY_ENV)
    if given:
        return f"llama-server: ${build.BINARY_ENV} = {given}"
    binary = build.server_binary(BUILD_ROOT)
    if binary.is_file():
        return f"llama-server: cached at {binary}"
    if shutil.which("cmake") is None:
        return "llama-server: not built and no cmake: its tests are skipped (install cmake and a C++ compiler)"
    minutes = build.QUICK_BUILD_MINUTES if build.wheel_library_dir() else build.FULL_BUILD_MINUTES
    return (
        f"llama-server: not built yet: the first test that needs it builds it once (~{minutes} min on 2 cores) "
        f"into {binary.parent.parent}; with no network and no llama-cpp-python sdist in pip's cache, "
        "its tests are skipped"
    )


def built_during_run_line() -> str | None:
    """A line for the run's summary when this run built llama-server, else None."""
    binary = build.server_binary(BUILD_ROOT)
    if CACHED_AT_START or os.environ.get(build.BINARY_ENV) or not binary.is_file():
        return None
    return f"llama-server was built during this run; later runs reuse {binary}"


def llama_server_binary() -> Path:
    """The cached llama-server, built on first use (minutes, once per machine, under a file lock).

    Offline with no build cached and no sources at hand, or without cmake, the tests are skipped
    with the reason; a build that fails with its sources and cmake present is a failure.
    """
    try:
        return build_llama_server(BUILD_ROOT)
    except SdistUnavailable as error:
        pytest.skip(f"no llama-server: {error}")
    except BuildError as error:
        if shutil.which("cmake") is None:
            pytest.skip(str(error))
        pytest.fail(str(error))


def serve(binary: Path, model: Path, folder: Path, **options: Any) -> Iterator[LlamaServer]:
    """A started server on ``model`` (logging into ``folder``) for a fixture to yield; stopped afterwards."""
    server = LlamaServer(binary, model, folder / f"llama-server-{free_port()}.log", **options)
    server.start()
    try:
        yield server
    finally:
        server.stop()
