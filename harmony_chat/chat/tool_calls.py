"""One tool call, from the model's request to the result the model reads: check, approve, run.

Whatever happens (an unknown tool, arguments that do not parse, a refusal, a failure, a
timeout, a cancellation) ends as a :class:`~harmony_chat.tools.base.ToolResult` that goes back
to the model and a :class:`~harmony_chat.chat.events.ToolFinished` the user sees; nothing here
raises.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from harmony_chat.chat.approval import ApprovalPolicy, Approver, ToolReview, pretty_arguments
from harmony_chat.chat.events import ChatEvent, ToolFinished, ToolStarted
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
        approver: asks the user (None: nobody can be asked, so calls that need asking are declined).
        timeout_s: how long one call may run.
    """

    tools: ToolSet
    policy: ApprovalPolicy
    approver: Approver | None = None
    timeout_s: float = DEFAULT_TOOL_TIMEOUT_S

    def run(self, call: ToolCall, call_id: int, should_stop: Callable[[], bool]) -> Iterator[ChatEvent]:
        """Check, approve and run ``call``; the last event is always a :class:`ToolFinished`."""
        found = self.tools.find(call.name)
        if found is None:
            known = ", ".join(f"functions.{spec.name}" for spec, _ in self.tools.entries()) or "none"
            result = _not_run(f"Error: unknown tool {call.name!r}. Available tools: {known}.")
            yield ToolFinished(call_id, call.name, "", result, "not-run")
            return
        spec, provider = found
        arguments, problem = parse_arguments(call)
        if arguments is None:
            result = _not_run(f"Error: the arguments of {call.name} are not valid JSON ({problem}); nothing was run.")
            yield ToolFinished(call_id, call.name, spec.server, result, "not-run")
            return
        review = ToolReview(
            key=f"{spec.server}.{spec.remote_name}",
            server=spec.server,
            tool=spec.remote_name,
            called_as=call.name,
            arguments=pretty_arguments(json.dumps(arguments)),
        )
        decision, how = self.policy.decide(review, self.approver)
        if not decision.approved:
            reason = f" Reason: {decision.reason}" if decision.reason else ""
            text = f"The user declined this call of {call.name}; it was not run.{reason}"
            yield ToolFinished(call_id, call.name, spec.server, ToolResult(text, "denied", False, 0.0), how)
            return
        if should_stop():
            result = ToolResult("The call was cancelled by the user before it ran.", "cancelled", False, 0.0)
            yield ToolFinished(call_id, call.name, spec.server, result, how)
            return
        yield ToolStarted(call_id, call.name, spec.server, json.dumps(arguments, ensure_ascii=False))
        started = time.monotonic()
        try:
            result = provider.call(spec.name, arguments, timeout_s=self.timeout_s, should_stop=should_stop)
        except Exception as error:  # a provider must not raise; if one does, the model still gets a result
            result = ToolResult(f"Error: {type(error).__name__}: {error}", "failed", False, time.monotonic() - started)
        yield ToolFinished(call_id, call.name, spec.server, result, how)


def parse_arguments(call: ToolCall) -> tuple[dict[str, object] | None, str]:
    """The call's arguments as a JSON object, or None and why not."""
    text = call.arguments.strip() or "{}"
    try:
        value = json.loads(text)
    except ValueError as error:
        return None, str(error)
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, ""


def _not_run(text: str) -> ToolResult:
    return ToolResult(text, "failed", False, 0.0)
