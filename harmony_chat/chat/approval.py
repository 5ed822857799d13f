"""The user's approval of tool calls: what is asked, what can be answered, what is remembered.

Nothing runs without approval unless the configuration says so (``approve = "all"``). The
conversation core asks in its event stream: a call that needs the user is an
:class:`~harmony_chat.chat.events.ApprovalRequested` carrying an :data:`ApprovalAnswer`, a future
the reader of the stream completes with :func:`give` (the TUI from its modal, ``ask`` from the
terminal, through :func:`~harmony_chat.chat.tool_calls.answer_with`), from any thread; the turn
waits for it. :class:`ApprovalPolicy` decides what needs asking and remembers the answers.

Only a tool of an MCP server named in the configuration can be approved for good ("always,
saved" and the config's ``[tools] always``): a built-in tool's "always" lasts for the
conversation, and a saved key never approves a built-in, whatever the file or the UI says.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from concurrent.futures import Future, InvalidStateError
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
"""Asks the user (blocking) and returns the decision: what answers a stream's requests in ``ask`` and tests."""
ApprovalAnswer = Future[Decision]
"""Where the user's decision on one call goes; the turn waits on it (:func:`give` answers it)."""


def give(answer: ApprovalAnswer, decision: Decision) -> bool:
    """Answer ``answer`` with ``decision``, from any thread; False when it was answered already (the first counts)."""
    try:
        answer.set_result(decision)
    except InvalidStateError:
        return False
    return True


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


TURNED_OFF = Decision(Choice.DENY, "tool calls are turned off (approve = none)")
"""The decision on every call with ``approve = "none"``."""
STOPPED = Decision(Choice.DENY, "the user stopped the turn")
"""The answer to a call still waiting when the user stops the turn."""
NOBODY_TO_ASK = Decision(Choice.DENY, "nobody could be asked")
"""The decision on a call that needs asking when nobody reads the turn to answer (``ask`` without a terminal)."""


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

    def rule(self, review: ToolReview, can_ask: bool) -> tuple[Decision, str] | ToolReview:
        """The decision on ``review`` and how it was reached (``auto``, ``always``, ``denied``), or the review to ask.

        The review to ask is ``review`` with ``savable`` set; its answer goes to :meth:`remember`.
        Without anyone to ask (``can_ask`` False) a call that needs asking is declined.
        """
        remembered = self.remembered(review)
        if self.mode == "none":
            return TURNED_OFF, "denied"
        if self.mode == "all":
            return Decision(Choice.ONCE), "auto"
        if remembered:
            return Decision(Choice.ONCE), "always"
        if not can_ask:
            return NOBODY_TO_ASK, "denied"
        return replace(review, savable=self.savable(review))

    def remember(self, asked: ToolReview, decision: Decision) -> tuple[Decision, str]:
        """Take the user's answer to ``asked`` (from :meth:`rule`): keep an "always", say how it was decided.

        An "always, saved" answer for a tool that cannot be saved counts as "always" (for the
        session, or the conversation for a built-in).
        """
        if decision.choice is Choice.ALWAYS_SAVE and not asked.savable:
            decision = Decision(Choice.ALWAYS, decision.reason)
        if decision.choice is Choice.ALWAYS_SAVE:
            self.always.add(asked.key)
        elif decision.choice is Choice.ALWAYS and asked.per_conversation:
            self.conversation_always.add(asked.key)
        elif decision.choice is Choice.ALWAYS:
            self.session_always.add(asked.key)
        return decision, "approved" if decision.approved else "denied"
