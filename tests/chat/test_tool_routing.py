"""Built-in and MCP tools never collide: ``to=python`` is the built-in kernel's, whatever an MCP server names its tools.

Real parts: an MCP server (official SDK, stdio) with a tool named ``python``, the built-in python
tool with its Jupyter kernel, and replayed model output.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.approval import ApprovalPolicy
from harmony_chat.chat.builtins import PythonBuiltin
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.events import ToolFinished
from harmony_chat.chat.tool_calls import ToolRunner
from harmony_chat.chat.toolset import ToolSet
from harmony_chat.generation.turn import PromptReady
from harmony_chat.harmony.session import ChatSession
from harmony_chat.tools.base import ToolSpec
from harmony_chat.tools.mcp_client import McpToolbox
from harmony_chat.tools.mcp_config import McpServerConfig
from harmony_chat.tools.naming import ToolNames
from tests.chat.mcp_python_named_server import answer
from tests.helpers import ids
from tests.tools.python.helpers import needs_sandbox

SERVER = Path(__file__).resolve().parent / "mcp_python_named_server.py"
BUILTIN_CALL = "<|channel|>analysis to=python<|message|>print(12 * 34)<|call|>"
MCP_CALL = '<|channel|>commentary to=functions.snake_python <|constrain|>json<|message|>{"code":"print(1)"}<|call|>'
ANSWER = "<|channel|>final<|message|>408.<|return|>"


@pytest.fixture
def toolbox() -> Iterator[McpToolbox]:
    box = McpToolbox({"snake": McpServerConfig(command=sys.executable, args=[str(SERVER)])})
    box.start()
    assert box.wait_ready(30.0)
    yield box
    box.close()


@pytest.fixture
def python_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PythonBuiltin]:
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    tool = PythonBuiltin(timeout_s=60)
    yield tool
    tool.close()


@needs_sandbox
def test_to_python_reaches_the_built_in_even_beside_an_mcp_tool_named_python(
    encoding: HarmonyEncoding, toolbox: McpToolbox, python_tool: PythonBuiltin
) -> None:
    turns = [BUILTIN_CALL, ANSWER, MCP_CALL, ANSWER]
    backend = ReplayBackend(turns=[ids(encoding, turn) for turn in turns])
    backend.load()
    runner = ToolRunner(ToolSet([toolbox], [python_tool]), ApprovalPolicy("all"), builtin_timeout_s={"python": 60})
    chat = ChatConversation(ChatSession(encoding, start_date="2026-01-01"), backend, tools=runner)

    events = list(chat.send("What is 12 * 34?"))
    (builtin,) = [event for event in events if isinstance(event, ToolFinished)]
    assert builtin.server == "builtin" and builtin.result.status == "done", builtin.result.text
    assert builtin.result.text.strip() == "408"  # the kernel ran it; it was not read as JSON for the MCP tool
    assert [spec.name for spec in toolbox.specs()] == ["snake_python"]  # never the built-in's name
    first_prompt = next(encoding.decode(e.prompt.tokens) for e in events if isinstance(e, PromptReady))
    assert "type snake_python" in first_prompt and "type python =" not in first_prompt

    events = list(chat.send("And the server's tool?"))
    (function,) = [event for event in events if isinstance(event, ToolFinished)]
    assert function.server == "snake" and function.result.text == answer("print(1)")


def test_the_built_in_names_are_never_given_to_a_function() -> None:
    names = ToolNames()
    assert names.name_for("snake", "python") == "snake_python"
    assert names.name_for("web", "browser") == "web_browser"
    assert names.name_for("other", "python") == "other_python"
    assert names.name_for("local", "run_python") == "run_python"


class Specs:
    """A provider whose tool is named ``python`` (not through :class:`ToolNames`)."""

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name="python", description="", parameters={}, server="raw", remote_name="python")]

    def close(self) -> None:
        return None


def test_a_bare_built_in_name_never_finds_a_function_tool() -> None:
    tools = ToolSet([Specs()])  # type: ignore[list-item]
    assert tools.find("python") is None and tools.find("browser.search") is None
    found = tools.find("functions.python")
    assert found is not None and found[0].server == "raw"  # named as a function, it is the function
