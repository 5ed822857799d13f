"""The user's approval of tool calls: what is asked, what can be answered, what is remembered.

Nothing runs without approval unless the configuration says so (``approve = "all"``). The
conversation core asks through an :data:`Approver`, a blocking callable the UI provides: the TUI
opens a modal, ``ask`` prompts on the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

ApprovalMode = Literal["ask", "all", "none"]
"""``ask`` the user for each call, run ``all`` without asking, or run ``none``."""
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("ask", "all", "none")


class Choice(StrEnum):
    """The user's answer to one tool call."""

    ONCE = "once"
    """Run this call."""
    ALWAYS = "always"
    """Run this call and every later call of the same tool in this session."""
    ALWAYS_SAVE = "always-save"
    """Like ``always``, and remember it in the config file."""
    DENY = "deny"
    """Do not run it; the model is told the user declined (with the reason, if given)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to a :class:`ToolReview`."""

    choice: Choice
    reason: str = ""

    @property
    def approved(self) -> bool:
        """Whether the call may run."""
        return self.choice is not Choice.DENY


@dataclass(frozen=True, slots=True)
class ToolReview:
    """What the user is shown before a tool call runs."""

    key: str
    """What ``always`` remembers: ``server.tool`` (e.g. ``weather.get_weather``)."""
    server: str
    tool: str
    """The tool's own name on its server."""
    called_as: str
    """The name the model used, e.g. ``functions.get_weather``."""
    arguments: str
    """The arguments, formatted as indented JSON when they parse."""
    label: str = "tool call"
    """What kind of action this is (e.g. ``code the model wants to run``)."""
    warning: str = ""
    """A caveat to show with it (e.g. that network access is not blocked)."""
    language: str = "json"
    """How to highlight ``arguments`` (``json``, or ``python`` for code)."""
    per_conversation: bool = False
    """"Always" lasts for this conversation only (built-in tools), not the whole session."""


Approver = Callable[[ToolReview], Decision]
"""Asks the user (blocking) and returns the decision."""


def pretty_arguments(arguments: str) -> str:
    """Format JSON arguments for reading; text that is not JSON is returned as it is."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


def deny_all(review: ToolReview) -> Decision:
    """The approver of ``approve = "none"``: every call is declined."""
    return Decision(Choice.DENY, "tool calls are turned off (approve = none)")


@dataclass(slots=True)
class ApprovalPolicy:
    """Decides which calls need the user, and remembers the "always" answers of this session.

    Args:
        mode: ``ask``, ``all`` or ``none``.
        always: keys (``server.tool``) approved for good, e.g. from the config file.
    """

    mode: ApprovalMode = "ask"
    always: set[str] = field(default_factory=set)
    conversation_always: set[str] = field(default_factory=set)
    """Keys approved for good in the current conversation only (cleared by :meth:`new_conversation`)."""

    def new_conversation(self) -> None:
        """Forget the "always" answers that were for one conversation."""
        self.conversation_always.clear()

    @classmethod
    def from_config(cls, mode: ApprovalMode, always: Iterable[str] = ()) -> ApprovalPolicy:
        """Build the policy from the configured mode and the saved "always" list."""
        return cls(mode, set(always))

    def decide(self, review: ToolReview, approver: Approver | None) -> tuple[Decision, str]:
        """Return the decision for ``review`` and how it was reached (``auto``, ``always``, ``approved``...)."""
        remembered = review.key in self.always or review.key in self.conversation_always
        if self.mode == "none" or (self.mode == "ask" and approver is None and not remembered):
            return deny_all(review), "denied"
        if self.mode == "all":
            return Decision(Choice.ONCE), "auto"
        if remembered:
            return Decision(Choice.ONCE), "always"
        assert approver is not None
        decision = approver(review)
        if decision.choice is Choice.ALWAYS_SAVE or (decision.choice is Choice.ALWAYS and not review.per_conversation):
            self.always.add(review.key)
        elif decision.choice is Choice.ALWAYS:
            self.conversation_always.add(review.key)
        return decision, "approved" if decision.approved else "denied"
