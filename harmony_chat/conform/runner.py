"""Running an audit: the checks of the chosen APIs over one probe session, into a :class:`Audit`."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from harmony_chat.conform.checks import CHECKS
from harmony_chat.conform.probes import CHAT, RESPONSES
from harmony_chat.conform.result import Api, Check, CheckResult, Outcome, Status
from harmony_chat.conform.session import ProbeSession

PATHS: dict[Api, str] = {"chat": CHAT, "responses": RESPONSES}


@dataclass(frozen=True, slots=True)
class Audit:
    """What an audit found, and of what."""

    server: str
    model: str
    results: tuple[CheckResult, ...]
    requests: int

    @property
    def failed(self) -> bool:
        """Whether any check failed."""
        return any(result.status is Status.FAIL for result in self.results)

    def count(self, status: Status) -> int:
        """How many checks ended with ``status``."""
        return sum(result.status is status for result in self.results)


def _outcome(check: Check, session: ProbeSession) -> Outcome:
    missing = session.missing_endpoint(PATHS[check.api])
    if missing is not None:
        return Outcome.not_offered(f"the server does not serve POST /v1{PATHS[check.api]} ({missing.summary()})")
    try:
        return check.run(session)
    except Exception as error:  # a reply no reader foresaw: report it on this check, keep auditing
        return Outcome.inconclusive(f"the check could not read this server's replies ({type(error).__name__}: {error})")


def run_audit(
    session: ProbeSession,
    server: str,
    apis: Collection[Api] = ("chat", "responses"),
    progress: Callable[[Check], None] | None = None,
) -> Audit:
    """Run every check of ``apis`` (probes are shared between checks and sent once)."""
    results: list[CheckResult] = []
    for check in CHECKS:
        if check.api not in apis:
            continue
        if progress is not None:
            progress(check)
        results.append(CheckResult(check, _outcome(check, session)))
    return Audit(server, session.model, tuple(results), len(session.replies))
