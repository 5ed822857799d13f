"""The ``conform`` command's work, without the CLI: reach the server, name the model, audit, record.

A live server is checked first with ``GET /v1/models`` (an unreachable server or a refused key is
one clear error, before any check runs); the model is ``--model``, or the first gpt-oss one the
server lists (the first one when none is named so). ``--record`` saves every exchange so
``--replay`` can run the checks on it again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harmony_chat.conform.prompts import load_prompts
from harmony_chat.conform.result import Api, Check
from harmony_chat.conform.runner import Audit, run_audit
from harmony_chat.conform.session import ProbeSession
from harmony_chat.conform.transport import (
    ConformError,
    HttpTransport,
    RecordingTransport,
    ReplayTransport,
    Transport,
)
from harmony_chat.errors import EngineError


@dataclass(frozen=True, slots=True)
class ConformSettings:
    """What ``harmony-chat conform`` was asked to do."""

    url: str | None = None
    model: str | None = None
    api_key: str | None = None
    apis: tuple[Api, ...] = ("chat", "responses")
    samples: int = 3
    timeout_s: float = 120.0
    prompts: Path | None = None
    record: Path | None = None
    replay: Path | None = None


def pick_model(listed: list[str]) -> str | None:
    """The model to check among those a server lists: the first gpt-oss one, else the first."""
    for name in listed:
        if any(mark in name.lower().replace("_", "-") for mark in ("gpt-oss", "gptoss")):
            return name
    return listed[0] if listed else None


def audit_server(settings: ConformSettings, progress: Callable[[Check], None] | None = None) -> Audit:
    """Audit the server (or the recording) ``settings`` name.

    Raises:
        ConformError: nothing to audit, the server cannot be reached or refuses the key, no model name.
    """
    prompts = load_prompts(settings.prompts)
    if settings.replay is not None:
        replay = ReplayTransport.load(settings.replay)
        model = settings.model or replay.model
        session = ProbeSession(replay, model, prompts, settings.samples)
        return run_audit(session, f"{replay.server} (recorded)", settings.apis, progress)
    if not settings.url:
        raise ConformError("give the server's URL (for example http://127.0.0.1:8000) or --replay FILE")
    http = HttpTransport(settings.url, settings.api_key, timeout_s=settings.timeout_s)
    try:
        try:
            listed = http.preflight()
        except EngineError as error:
            raise ConformError(str(error)) from None
        named = settings.model or pick_model(listed)
        if not named:
            raise ConformError(f"{http.base}/models lists no model; name the one to check with --model")
        transport: Transport = RecordingTransport(http) if settings.record else http
        audit = run_audit(ProbeSession(transport, named, prompts, settings.samples), http.base, settings.apis, progress)
    finally:
        http.close()
    if settings.record is not None and isinstance(transport, RecordingTransport):
        try:
            transport.save(settings.record, server=http.base, model=named)
        except OSError as error:
            raise ConformError(f"cannot write the recording {settings.record}: {error}") from None
    return audit
