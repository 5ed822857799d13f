"""A conversation owns its model, tools and summarizer, and closes them once, however it ends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.approval import ApprovalPolicy
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.factory import LoadedModel, create_conversation
from harmony_chat.chat.options import ChatOptions
from harmony_chat.chat.summary import Summarizer
from harmony_chat.chat.tool_calls import ToolRunner
from harmony_chat.chat.toolset import ToolSet
from harmony_chat.cli import main
from harmony_chat.config import default_settings
from harmony_chat.harmony.session import ChatSession
from harmony_chat.tools.base import ToolResult, ToolSpec
from tests.helpers import ids

ANSWER = "<|channel|>final<|message|>Hello.<|return|>"


class CountingBackend(ReplayBackend):
    """A replayed model that counts how often it was closed."""

    def __init__(self, encoding: HarmonyEncoding) -> None:
        super().__init__(turns=[ids(encoding, ANSWER)])
        self.closed = 0

    def close(self) -> None:
        self.closed += 1
        super().close()


class CountingTools:
    """A tool provider (no tools) that counts how often it was closed."""

    def __init__(self) -> None:
        self.closed = 0

    def specs(self) -> list[ToolSpec]:
        return []

    def call(
        self, name: str, arguments: dict[str, object], *, timeout_s: float, should_stop: Callable[[], bool]
    ) -> ToolResult:
        raise AssertionError("no tool is called")

    def close(self) -> None:
        self.closed += 1


Parts = tuple[ChatConversation, CountingBackend, CountingTools, CountingBackend]


def _conversation(encoding: HarmonyEncoding) -> Parts:
    backend, tools, summary_model = CountingBackend(encoding), CountingTools(), CountingBackend(encoding)
    backend.load()
    runner = ToolRunner(ToolSet([tools]), ApprovalPolicy("none"))
    summarizer = Summarizer(encoding, summary_model)
    conversation = ChatConversation(ChatSession(encoding), backend, tools=runner, summarizer=summarizer)
    return conversation, backend, tools, summary_model


def test_the_with_block_closes_model_tools_and_summarizer_once_even_when_it_fails(encoding: HarmonyEncoding) -> None:
    conversation, backend, tools, summary_model = _conversation(encoding)
    with pytest.raises(RuntimeError, match="the caller failed"), conversation:
        list(conversation.send("hi"))
        raise RuntimeError("the caller failed")
    assert (backend.closed, tools.closed, summary_model.closed) == (1, 1, 1)
    conversation.close()  # a second close does nothing
    assert (backend.closed, tools.closed, summary_model.closed) == (1, 1, 1)


def test_detached_tools_are_left_to_their_owner(encoding: HarmonyEncoding) -> None:
    """The app's tools outlive a conversation on a model the user switched away from."""
    conversation, backend, tools, summary_model = _conversation(encoding)
    conversation.tools = None
    conversation.close()
    assert (backend.closed, tools.closed, summary_model.closed) == (1, 0, 1)


def test_a_conversation_that_cannot_be_made_closes_its_model(
    encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = CountingBackend(encoding)
    model = LoadedModel(backend, backend.load(), encoding, None)

    def broken(options: ChatOptions, model: LoadedModel) -> Summarizer:
        raise RuntimeError("no summarizer")

    monkeypatch.setattr("harmony_chat.chat.factory.create_summarizer", broken)
    with pytest.raises(RuntimeError, match="no summarizer"):
        create_conversation(ChatOptions(default_settings({"ui.reasoning": "summary"})), model)
    assert backend.closed == 1


def _count_closes(monkeypatch: pytest.MonkeyPatch, encoding: HarmonyEncoding) -> list[CountingBackend]:
    """Every model ``ask`` and ``serve`` load is a counting replay of one answer."""
    loaded: list[CountingBackend] = []

    def load(options: ChatOptions, progress: object = None) -> LoadedModel:
        backend = CountingBackend(encoding)
        loaded.append(backend)
        return LoadedModel(backend, backend.load(), encoding, None)

    monkeypatch.setattr("harmony_chat.cli.ask.load_model", load)
    monkeypatch.setattr("harmony_chat.chat.factory.load_model", load)
    return loaded


def test_ask_closes_the_model_after_the_turn_and_after_a_failure(
    capsys: pytest.CaptureFixture[str], encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded = _count_closes(monkeypatch, encoding)
    assert main(["ask", "--demo", "hi"]) == 0
    assert capsys.readouterr().out == "Hello.\n"
    missing = tmp_path / "missing.json"
    assert main(["ask", "--demo", "--conversation", str(missing), "hi"]) == 1
    assert "error: " in capsys.readouterr().err
    assert [backend.closed for backend in loaded] == [1, 1]


def test_serve_closes_the_model_when_the_server_stops(
    capsys: pytest.CaptureFixture[str], encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = _count_closes(monkeypatch, encoding)

    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("harmony_chat.server.app.run_server", stopped)
    assert main(["serve", "--demo", "--port", "0"]) == 130
    assert [backend.closed for backend in loaded] == [1]
