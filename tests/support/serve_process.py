"""Waiting for a ``harmony-chat serve`` started as a process in a test to answer ``/health``."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import httpx

STARTUP_S = 60.0
"""How long a server may take to load its model and bind."""


def wait_for_health(server: subprocess.Popen[str] | subprocess.Popen[bytes], port: int, log: Callable[[], str]) -> None:
    """Return once ``/health`` on 127.0.0.1:``port`` answers 200; fail with ``log()`` if the server exits first."""
    deadline = time.monotonic() + STARTUP_S
    while True:
        assert server.poll() is None, log()
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "serve did not come up"
        time.sleep(0.2)
