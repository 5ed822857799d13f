"""What a check is and what it finds: a clause tested, a status, the evidence.

A check is data: an id, a title, the API it exercises, the clause it tests, and a function from
a probe session to an :class:`Outcome`. Only ``fail`` counts against a server; ``not offered``
(the server lacks the endpoint or feature) and ``inconclusive`` (the model never did the thing
the check needs) always say why, so nothing passes silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from harmony_chat.conform.guide import Clause

if TYPE_CHECKING:
    from harmony_chat.conform.session import ProbeSession

Api = Literal["chat", "responses"]


class Status(StrEnum):
    """A check's verdict."""

    PASS = "pass"
    FAIL = "fail"
    NOT_OFFERED = "not offered"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True, slots=True)
class Outcome:
    """A verdict and the evidence for it (what was sent, what came back, the numbers)."""

    status: Status
    evidence: str

    @classmethod
    def passed(cls, evidence: str) -> Outcome:
        """A pass."""
        return cls(Status.PASS, evidence)

    @classmethod
    def failed(cls, evidence: str) -> Outcome:
        """A failure (a deviation from the clause)."""
        return cls(Status.FAIL, evidence)

    @classmethod
    def not_offered(cls, evidence: str) -> Outcome:
        """The server does not offer what the check needs."""
        return cls(Status.NOT_OFFERED, evidence)

    @classmethod
    def inconclusive(cls, evidence: str) -> Outcome:
        """The check could not be exercised (the model never did the thing)."""
        return cls(Status.INCONCLUSIVE, evidence)


@dataclass(frozen=True, slots=True)
class Check:
    """One conformance check."""

    id: str
    title: str
    api: Api
    clause: Clause
    run: Callable[[ProbeSession], Outcome]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A check and its outcome."""

    check: Check
    outcome: Outcome

    @property
    def status(self) -> Status:
        """The outcome's status."""
        return self.outcome.status
