"""The user's approval of tool calls: what is asked, what can be answered, what is remembered.

Nothing runs without approval unless the configuration says so (``approve = "all"``). The
conversation core asks through an :data:`Approver`, a blocking callable the UI provides: the TUI
opens a modal, ``ask`` prompts on the terminal.

Only a tool of an MCP server named in the configuration can be approved for good ("always,
saved" and the config's ``[tools] always``): a built-in tool's "always" lasts for the
conversation, and a saved key never approves a built-in, whatever the file or the UI says.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from harmony_chat.tools.base import ApprovalMode


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
    savable: bool = False
    """Whether "always" may be saved in the config file (set by :meth:`ApprovalPolicy.decide`)."""


Approver = Callable[[ToolReview], Decision]
"""Asks the user (blocking) and returns the decision."""


def pretty_arguments(arguments: str) -> str:
    """Format JSON arguments for reading; text that is not JSON is returned as it is."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


BLANK_RUN = 3
"""Blank lines in a row from which the view folds them into one line that says how many there were."""


@dataclass(frozen=True, slots=True)
class CodeView:
    """What the approval shows of a call's arguments: every line that holds anything, blank runs folded."""

    text: str
    """The arguments with each run of :data:`BLANK_RUN` or more blank lines as one ``⋯ N blank lines ⋯`` line."""
    lines: int
    """Lines of the arguments as the model wrote them."""
    folded: int
    """Blank lines folded away in ``text``."""

    @property
    def summary(self) -> str:
        """``12 lines`` or ``130 lines, 118 blank ones folded``: the size of what runs, whatever the view shows."""
        size = f"{self.lines} line{'s' if self.lines != 1 else ''}"
        return size + (f", {self.folded} blank ones folded" if self.folded else "")


def code_view(arguments: str) -> CodeView:
    """The arguments for the approval: blank runs folded so that no line can hide below them.

    The model's call is not changed: only what the user reads is.
    """
    lines = arguments.split("\n")
    shown: list[str] = []
    blank: list[str] = []
    folded = 0

    def flush() -> None:
        nonlocal folded
        if len(blank) >= BLANK_RUN:
            shown.append(f"⋯ {len(blank)} blank lines ⋯")
            folded += len(blank)
        else:
            shown.extend(blank)
        blank.clear()

    for line in lines:
        if line.strip():
            flush()
            shown.append(line)
        else:
            blank.append(line)
    flush()
    return CodeView("\n".join(shown), len(lines), folded)


BUILTIN_KEY_PREFIX = "builtin."
"""How the keys of built-in tools begin (``builtin.python``): never savable."""


def deny_all(review: ToolReview) -> Decision:
    """The approver of ``approve = "none"``: every call is declined."""
    return Decision(Choice.DENY, "tool calls are turned off (approve = none)")


@dataclass(slots=True)
class ApprovalPolicy:
    """Decides which calls need the user, and remembers the "always" answers.

    Args:
        mode: ``ask``, ``all`` or ``none``.
        always: keys (``server.tool``) approved for good, e.g. from the config file. They apply to
            the tools of ``servers`` only, never to a built-in tool.
        servers: the MCP servers named in the configuration (None: every MCP server counts); only
            their tools may be approved for good.
    """

    mode: ApprovalMode = "ask"
    always: set[str] = field(default_factory=set)
    servers: frozenset[str] | None = None
    session_always: set[str] = field(default_factory=set)
    """Keys approved with "always" (not saved) for the rest of the session."""
    conversation_always: set[str] = field(default_factory=set)
    """Keys approved for good in the current conversation only (cleared by :meth:`new_conversation`)."""

    def new_conversation(self) -> None:
        """Forget the "always" answers that were for one conversation."""
        self.conversation_always.clear()

    @classmethod
    def from_config(
        cls, mode: ApprovalMode, always: Iterable[str] = (), servers: Iterable[str] | None = None
    ) -> ApprovalPolicy:
        """Build the policy from the configured mode, the saved "always" list and the configured servers."""
        return cls(mode, set(always), None if servers is None else frozenset(servers))

    def savable(self, review: ToolReview) -> bool:
        """Whether "always" for ``review``'s tool may be saved (a configured MCP server's tool, never a built-in)."""
        if review.per_conversation:
            return False
        return self.servers is None or review.server in self.servers

    def ignored_always(self) -> list[str]:
        """The saved keys that approve nothing because they name a built-in tool (``builtin.python``)."""
        if self.servers is not None and BUILTIN_KEY_PREFIX.rstrip(".") in self.servers:
            return []  # an MCP server the user named "builtin": its keys are its tools'
        return sorted(key for key in self.always if key.startswith(BUILTIN_KEY_PREFIX))

    def remembered(self, review: ToolReview) -> bool:
        """Whether an earlier "always" approves ``review`` without asking."""
        if review.key in self.conversation_always:
            return True
        if review.per_conversation:
            return False  # a built-in: only this conversation's "always" counts
        return review.key in self.session_always or (review.key in self.always and self.savable(review))

    def decide(self, review: ToolReview, approver: Approver | None) -> tuple[Decision, str]:
        """Return the decision for ``review`` and how it was reached (``auto``, ``always``, ``approved``...).

        The approver is shown ``review`` with ``savable`` set; an "always, saved" answer for a tool
        that cannot be saved counts as "always" (for the session, or the conversation for a built-in).
        """
        remembered = self.remembered(review)
        if self.mode == "none" or (self.mode == "ask" and approver is None and not remembered):
            return deny_all(review), "denied"
        if self.mode == "all":
            return Decision(Choice.ONCE), "auto"
        if remembered:
            return Decision(Choice.ONCE), "always"
        assert approver is not None
        savable = self.savable(review)
        decision = approver(replace(review, savable=savable))
        if decision.choice is Choice.ALWAYS_SAVE and not savable:
            decision = Decision(Choice.ALWAYS, decision.reason)
        if decision.choice is Choice.ALWAYS_SAVE:
            self.always.add(review.key)
        elif decision.choice is Choice.ALWAYS and review.per_conversation:
            self.conversation_always.add(review.key)
        elif decision.choice is Choice.ALWAYS:
            self.session_always.add(review.key)
        return decision, "approved" if decision.approved else "denied"
