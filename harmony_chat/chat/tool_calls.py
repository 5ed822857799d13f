"""One tool call, from the model's request to the result the model reads: check, approve, run.

Whatever happens (an unknown tool, arguments that do not parse, a refusal, a failure, a
timeout, a cancellation) ends as a :class:`~harmony_chat.tools.base.ToolResult` that goes back
to the model and a :class:`~harmony_chat.chat.events.ToolFinished` the user sees; nothing here
raises. A call that needs the user is an :class:`~harmony_chat.chat.events.ApprovalRequested` in
the turn's events; the turn waits for its answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field

from harmony_chat.chat.approval import ApprovalPolicy, Approver, Decision, ToolReview, give, pretty_arguments
from harmony_chat.chat.builtins import BuiltinTool
from harmony_chat.chat.events import ApprovalRequested, ChatEvent, ToolFinished, ToolStarted
from harmony_chat.chat.toolset import ToolSet
from harmony_chat.harmony.events import ToolCall
from harmony_chat.tools.base import ToolResult

DEFAULT_TOOL_TIMEOUT_S = 60.0


@dataclass(slots=True)
class ToolRunner:
    """Runs the model's tool calls after the user's approval.

    Args:
        tools: the tools on offer.
        policy: which calls need asking.
        asks: whether the reader of the turn's events answers its
            :class:`~harmony_chat.chat.events.ApprovalRequested` (False: nobody can be asked, so
            calls that need asking are declined).
        timeout_s: how long one call may run.
    """

    tools: ToolSet
    policy: ApprovalPolicy
    asks: bool = False
    timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    builtin_timeout_s: dict[str, float] = field(default_factory=dict)
    """Per built-in tool (``python``: its own 120 s), else ``timeout_s``."""

    def run(self, call: ToolCall, call_id: int, should_stop: Callable[[], bool]) -> Iterator[ChatEvent]:
        """Check, approve and run ``call``; the last event is always a :class:`ToolFinished`."""
        builtin = self.tools.find_builtin(call.recipient)
        if builtin is not None:
            yield from self._run_builtin(builtin, call, call_id, should_stop)
            return
        found = self.tools.find(call.name)
        if found is None:
            known = ", ".join(f"functions.{spec.name}" for spec, _ in self.tools.entries()) or "none"
            result = _not_run(f"Error: unknown tool {call.name!r}. Available tools: {known}.")
            yield ToolFinished(call_id, call.name, "", result, "not-run")
            return
        spec, provider = found
        arguments, problem = parse_arguments(call)
        if arguments is None:
            result = _not_run(f"Error: the arguments of {call.name} are unusable ({problem}); nothing was run.")
            yield ToolFinished(call_id, call.name, spec.server, result, "not-run")
            return
        review = ToolReview(
            key=f"{spec.server}.{spec.remote_name}",
            server=spec.server,
            tool=spec.remote_name,
            called_as=call.name,
            arguments=pretty_arguments(json.dumps(arguments)),
        )
        how = yield from self._approve(review, call, call_id, spec.server)
        if how is None:
            return
        yield ToolStarted(call_id, call.name, spec.server, json.dumps(arguments, ensure_ascii=False))
        started = time.monotonic()
        try:
            result = provider.call(spec.name, arguments, timeout_s=self.timeout_s, should_stop=should_stop)
        except Exception as error:  # a provider must not raise; if one does, the model still gets a result
            result = ToolResult(f"Error: {type(error).__name__}: {error}", "failed", False, time.monotonic() - started)
        yield ToolFinished(call_id, call.name, spec.server, result, how)

    def _run_builtin(
        self, tool: BuiltinTool, call: ToolCall, call_id: int, should_stop: Callable[[], bool]
    ) -> Iterator[ChatEvent]:
        if not call.runnable:
            result = _not_run(f"Error: {call.error}; nothing was run.")
            yield ToolFinished(call_id, call.name, "builtin", result, "not-run")
            return
        content = call.arguments if tool.language != "json" else pretty_arguments(call.arguments)
        review = ToolReview(
            key=f"builtin.{tool.name}",
            server="built-in",
            tool=call.name,
            called_as=call.recipient,
            arguments=content,
            label=tool.label,
            warning=tool.warning(),
            language=tool.language,
            per_conversation=True,
        )
        how = yield from self._approve(review, call, call_id, "builtin")
        if how is None:
            return
        yield ToolStarted(call_id, call.name, "builtin", call.arguments)
        timeout = self.builtin_timeout_s.get(tool.name, self.timeout_s)
        started = time.monotonic()
        try:
            result = tool.run(call.recipient, call.arguments, timeout_s=timeout, should_stop=should_stop)
        except Exception as error:  # a tool must not raise; if one does, the model still gets a result
            result = ToolResult(f"Error: {type(error).__name__}: {error}", "failed", False, time.monotonic() - started)
        yield ToolFinished(call_id, call.name, "builtin", result, how)

    def _approve(
        self, review: ToolReview, call: ToolCall, call_id: int, server: str
    ) -> Generator[ChatEvent, None, str | None]:
        """Ask (when needed) and wait for the answer; how the call was approved, or None when it was not.

        A refusal ends the call with a result telling the model why.
        """
        ruling = self.policy.rule(review, can_ask=self.asks)
        if isinstance(ruling, ToolReview):
            answer: Future[Decision] = Future()
            yield ApprovalRequested(call_id, call.name, ruling, answer)
            decision, how = self.policy.remember(ruling, answer.result())  # the reader answers: see ApprovalRequested
        else:
            decision, how = ruling
        if decision.approved:
            return how
        reason = f" Reason: {decision.reason}" if decision.reason else ""
        text = f"The user declined this call of {call.name}; it was not run.{reason}"
        yield ToolFinished(call_id, call.name, server, ToolResult(text, "denied", False, 0.0), how)
        return None

    def new_conversation(self, conversation: str) -> None:
        """A new or resumed conversation: fresh built-in tool state, per-conversation approvals forgotten."""
        self.policy.new_conversation()
        self.tools.new_conversation(conversation)


def answer_with(events: Iterable[ChatEvent], approver: Approver) -> Iterator[ChatEvent]:
    """Pass ``events`` on, answering each :class:`~harmony_chat.chat.events.ApprovalRequested` with ``approver``.

    The request is passed on first (so a printer shows the call before the question), then
    answered when the next event is asked for: for a reader that asks on its own thread (``ask``).
    """
    for event in events:
        yield event
        if isinstance(event, ApprovalRequested):
            give(event.answer, approver(event.review))


def parse_arguments(call: ToolCall) -> tuple[dict[str, object] | None, str]:
    """The call's arguments as a JSON object (as the decoder checked and repaired them), or None and why not."""
    if call.error is not None:
        return None, call.error
    value = call.parsed_arguments
    if value is None and not call.arguments.strip():
        value = {}
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, ""


def _not_run(text: str) -> ToolResult:
    return ToolResult(text, "failed", False, 0.0)
