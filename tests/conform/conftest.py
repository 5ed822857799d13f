"""Helpers for the conform tests: recordings replayed, and recordings written in the test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harmony_chat.conform.command import ConformSettings, audit_server
from harmony_chat.conform.result import Api, Status
from harmony_chat.conform.runner import Audit, run_audit
from harmony_chat.conform.session import ProbeSession
from harmony_chat.conform.transport import ReplayTransport

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LLAMA_SERVER_FAILS = {
    "chat.reasoning": "came as message.reasoning_content (DeepSeek's name",
    "chat.reasoning.stream": "came as delta.reasoning_content",
    "chat.reasoning.exclude": "reasoning still came as message.reasoning_content",
    "chat.cot.kept": "174 with it = 174 without (as reasoning); sent as reasoning_content it counts (+30)",
    "chat.errors": "not_json: HTTP 500 (a server error, not a 4xx)",
    "responses.reasoning.stream": "14 deltas but no response.reasoning_text.done",
    "responses.continue": "HTTP 400 (llama.cpp does not support 'previous_response_id'.)",
    "responses.errors": "not_json: HTTP 500",
}
"""What llama-server (vendored llama.cpp b1-0c1e570) gets wrong, and a piece of the evidence for each."""


def replay(name: str, apis: tuple[Api, ...] = ("chat", "responses"), samples: int = 2) -> Audit:
    """Run the checks on a committed recording."""
    return audit_server(ConformSettings(replay=FIXTURES / f"{name}.json", apis=apis, samples=samples))


def statuses(audit: Audit) -> dict[str, Status]:
    """Check id -> status."""
    return {result.check.id: result.status for result in audit.results}


def evidence(audit: Audit, check_id: str) -> str:
    """The evidence one check gave."""
    return next(result.outcome.evidence for result in audit.results if result.check.id == check_id)


def audit_of(probes: dict[str, Any], apis: tuple[Api, ...] = ("chat", "responses"), samples: int = 1) -> Audit:
    """Run the checks on a recording built in the test (probe name -> stored reply)."""
    session = ProbeSession(ReplayTransport({"probes": probes}), "gpt-oss", samples=samples)
    return run_audit(session, "test server", apis)
