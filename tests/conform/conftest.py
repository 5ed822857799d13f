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
