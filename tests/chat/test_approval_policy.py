"""What an "always" answer may remember, whatever the UI sends: built-in tools are never approved for good."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harmony_chat.chat.approval import ApprovalPolicy, Choice, Decision, ToolReview
from harmony_chat.chat.factory import configured_servers, tool_runner
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import load_settings
from tests.chat.approvals import decide

PYTHON = ToolReview(
    key="builtin.python",
    server="built-in",
    tool="python",
    called_as="python",
    arguments="print(12 * 34)",
    language="python",
    per_conversation=True,
)
WEATHER = ToolReview(
    key="weather.get_weather",
    server="weather",
    tool="get_weather",
    called_as="functions.get_weather",
    arguments="{}",
)


class Answers:
    """An approver that always gives ``choice`` and keeps what it was shown."""

    def __init__(self, choice: Choice) -> None:
        self.choice = choice
        self.shown: list[ToolReview] = []

    def __call__(self, review: ToolReview) -> Decision:
        self.shown.append(review)
        return Decision(self.choice)


def test_always_saved_for_a_built_in_lasts_for_the_conversation_only() -> None:
    policy = ApprovalPolicy("ask")
    approver = Answers(Choice.ALWAYS_SAVE)  # what a UI may send, whatever it offered
    decision, how = decide(policy, PYTHON, approver)
    assert decision.approved and decision.choice is Choice.ALWAYS and how == "approved"
    assert approver.shown[0].savable is False
    assert "builtin.python" not in policy.always
    assert decide(policy, PYTHON, approver)[1] == "always"  # for the rest of this conversation
    policy.new_conversation()
    decide(policy, PYTHON, approver)
    assert len(approver.shown) == 2  # asked again in the next one


def test_a_saved_always_never_approves_a_built_in() -> None:
    policy = ApprovalPolicy("ask", {"builtin.python"})  # as the config file's [tools] always gives it
    approver = Answers(Choice.DENY)
    decision, how = decide(policy, PYTHON, approver)
    assert not decision.approved and how == "denied" and approver.shown == [PYTHON]
    assert policy.ignored_always() == ["builtin.python"]
    no_one = ApprovalPolicy.from_config("ask", ["builtin.python"], servers=["weather"])
    assert decide(no_one, PYTHON, None)[1] == "denied"  # with nobody to ask, it is not run either


def test_only_a_configured_server_s_tool_is_saved() -> None:
    configured = ApprovalPolicy.from_config("ask", servers=["weather"])
    approver = Answers(Choice.ALWAYS_SAVE)
    assert decide(configured, WEATHER, approver)[0].choice is Choice.ALWAYS_SAVE
    assert approver.shown[0].savable and configured.always == {"weather.get_weather"}
    demo = ApprovalPolicy.from_config("ask", ["weather.get_weather"], servers=[])  # e.g. the pocket demo's server
    approver = Answers(Choice.ALWAYS_SAVE)
    decision, _ = decide(demo, WEATHER, approver)  # the saved key does not apply to it either
    assert decision.choice is Choice.ALWAYS and not approver.shown[0].savable
    assert decide(demo, WEATHER, approver)[1] == "always"  # for the session
    assert "weather.get_weather" in demo.session_always


def test_the_factory_names_the_configured_servers(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[tools]\nbuiltin = ["python"]\nalways = ["builtin.python", "w.get_weather"]\n\n'
        '[mcp.servers.w]\ncommand = "true"\n',
        encoding="utf-8",
    )
    options = ChatOptions(load_settings(config))
    assert configured_servers(options) == {"w"}
    approver = Answers(Choice.DENY)
    runner = tool_runner(options, [], asks=True)
    try:
        assert decide(runner.policy, PYTHON, approver)[1] == "denied" and approver.shown  # asked: `ask --tool python`
        configured = replace(WEATHER, key="w.get_weather", server="w")
        assert decide(runner.policy, configured, None)[1] == "always"  # a configured server's saved key still works
    finally:
        runner.tools.close()
