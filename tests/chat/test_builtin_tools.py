"""Built-in tools in the loop: the python tool's call, approval and result, with a real kernel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.approval import ApprovalPolicy, Choice, Decision, ToolReview
from harmony_chat.chat.builtins import PythonBuiltin
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.events import ToolFinished
from harmony_chat.chat.tool_calls import ToolRunner, answer_with
from harmony_chat.chat.toolset import ToolSet
from harmony_chat.generation.turn import PromptReady
from harmony_chat.harmony.events import ContentDelta
from harmony_chat.harmony.session import ChatSession
from tests.helpers import ids
from tests.tools.python.helpers import needs_sandbox

CODE_CALL = (
    "<|channel|>analysis<|message|>Let me compute.<|end|>"
    "<|start|>assistant<|channel|>analysis to=python<|message|>x = 1234 * 5678\nprint(x)<|call|>"
)
STATE_CALL = "<|channel|>analysis to=python<|message|>print(x + 1)<|call|>"
ANSWER = "<|channel|>final<|message|>It is 7006652.<|return|>"


@pytest.fixture
def python_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PythonBuiltin]:
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    tool = PythonBuiltin(timeout_s=60)
    yield tool
    tool.close()


def _chat(encoding: HarmonyEncoding, tool: PythonBuiltin, turns: list[str]) -> ChatConversation:
    backend = ReplayBackend(turns=[ids(encoding, turn) for turn in turns])
    backend.load()
    runner = ToolRunner(ToolSet(builtins=[tool]), ApprovalPolicy("ask"), asks=True, builtin_timeout_s={"python": 60})
    return ChatConversation(ChatSession(encoding, start_date="2026-01-01"), backend, tools=runner)


@needs_sandbox
def test_python_runs_after_approval_and_the_model_reads_its_output(
    encoding: HarmonyEncoding, python_tool: PythonBuiltin
) -> None:
    asked: list[ToolReview] = []

    def approver(review: ToolReview) -> Decision:
        asked.append(review)
        return Decision(Choice.ALWAYS)

    chat = _chat(encoding, python_tool, [CODE_CALL, STATE_CALL, ANSWER, CODE_CALL, ANSWER])
    events = list(answer_with(chat.send("What is 1234 * 5678?"), approver))
    results = [e.result for e in events if isinstance(e, ToolFinished)]
    assert [r.status for r in results] == ["done", "done"]
    assert "7006652" in results[0].text and "7006653" in results[1].text  # the kernel keeps state
    assert len(asked) == 1  # "always" for this conversation: the second call ran without asking
    review = asked[0]
    assert review.language == "python" and review.per_conversation and "hidden reasoning" in review.label
    assert review.arguments == "x = 1234 * 5678\nprint(x)" and review.warning
    prompts = [encoding.decode(e.prompt.tokens) for e in events if isinstance(e, PromptReady)]
    assert "## python" in prompts[0].split("<|end|>", 1)[0]  # declared in the system message
    assert "<|start|>python to=assistant<|channel|>analysis<|message|>7006652" in prompts[1]
    assert "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final") == "It is 7006652."
    chat.new_chat()  # a new conversation: a fresh kernel, and "always" asked again
    list(answer_with(chat.send("Again?"), approver))
    assert len(asked) == 2


def test_without_approval_nothing_runs(encoding: HarmonyEncoding, python_tool: PythonBuiltin) -> None:
    backend = ReplayBackend(turns=[ids(encoding, CODE_CALL), ids(encoding, ANSWER)])
    backend.load()
    runner = ToolRunner(ToolSet(builtins=[python_tool]), ApprovalPolicy("ask"), asks=True)
    chat = ChatConversation(ChatSession(encoding), backend, tools=runner)
    events = list(answer_with(chat.send("?"), lambda r: Decision(Choice.DENY, "no")))
    (finished,) = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.status == "denied"
    assert python_tool._tool is None or python_tool._tool._kernel is None  # no kernel was even started
