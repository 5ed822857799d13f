"""The tool runner's approval step, for the tests of the policy: its ruling, or the user asked and the answer kept."""

from __future__ import annotations

from collections.abc import Callable

from harmony_chat.chat.approval import ApprovalPolicy, Decision, ToolReview


def decide(
    policy: ApprovalPolicy, review: ToolReview, approver: Callable[[ToolReview], Decision] | None
) -> tuple[Decision, str]:
    """What :class:`~harmony_chat.chat.tool_calls.ToolRunner` does with one call (no approver: nobody to ask)."""
    ruling = policy.rule(review, can_ask=approver is not None)
    if isinstance(ruling, ToolReview):
        assert approver is not None
        return policy.remember(ruling, approver(ruling))
    return ruling
