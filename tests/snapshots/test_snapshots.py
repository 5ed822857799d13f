"""Snapshot tests of the main screens (pytest-textual-snapshot; they pass on the Textual range pyproject allows)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import HarmonyEncoding, ToolNamespaceConfig
from textual.pilot import Pilot

from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.approval import ApprovalPolicy
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.summary import Summarizer
from harmony_chat.chat.tool_calls import ToolRunner
from harmony_chat.chat.toolset import ToolSet
from harmony_chat.harmony.session import ChatSession
from harmony_chat.history.store import HistoryStore
from harmony_chat.tools.base import ToolResult
from harmony_chat.tui.screenshots import PINNED_DATE, show_approval, show_debug, tool_call_factory
from tests.helpers import ids
from tests.tui.harness import make_app, send, settle

QUESTION = "How do I reverse a linked list in Python?"


async def _answered(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await send(pilot, QUESTION)


@pytest.fixture(autouse=True)
def _home(isolated_home: object) -> None:
    """Reuse the TUI isolation (no real home, caches or config)."""


def test_welcome_beside_the_pocket_model(snap_compare: Any) -> None:
    assert snap_compare(make_app(replay_demo=False), terminal_size=(100, 34), run_before=settle)


def test_chat_dark(snap_compare: Any) -> None:
    assert snap_compare(make_app(), terminal_size=(100, 34), run_before=_answered)


def test_chat_light(snap_compare: Any) -> None:
    from harmony_chat.config import Settings, UiSettings

    assert snap_compare(
        make_app(settings=Settings(ui=UiSettings(theme="harmony-light"))), terminal_size=(100, 34), run_before=_answered
    )


def test_debug_mode(snap_compare: Any) -> None:
    async def debug(pilot: Pilot[Any]) -> None:
        await _answered(pilot)
        await show_debug(pilot)

    assert snap_compare(make_app(), terminal_size=(130, 40), run_before=debug)


def test_help(snap_compare: Any) -> None:
    async def help_screen(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause(0.2)

    assert snap_compare(make_app(), terminal_size=(100, 40), run_before=help_screen)


def test_approval_modal(snap_compare: Any) -> None:
    assert snap_compare(make_app(factory=tool_call_factory()), terminal_size=(110, 36), run_before=show_approval)


OTTERS_VIEW = (
    "[0] Sea otter facts (https://example.org/otters)\n**viewing lines [0 - 2] of 2**\n\n"
    "L0: Sea otter\nL1: Adult sea otters typically weigh between 14 and 45 kg.\nL2: They eat sea urchins."
)
RESEARCH = [
    "<|channel|>analysis<|message|>The user asks how heavy sea otters are. I should open a page about them.<|end|>",
    "I decided to look the weight up on a page about sea otters before answering.<|return|>",
    '<|start|>assistant<|channel|>analysis to=browser.open code<|message|>{"id": "https://example.org/otters"}<|call|>',
    "<|channel|>final<|message|>Adult sea otters weigh **14 to 45 kg**【0†L1】; they eat urchins【0†L2】.<|return|>",
]


class PageBrowser:
    """A stand-in browser that always shows the same page (no network in snapshots)."""

    name = "browser"
    label = "web request"
    language = "json"

    def namespace(self) -> ToolNamespaceConfig:
        return ToolNamespaceConfig.browser()

    def handles(self, recipient: str) -> bool:
        return recipient.startswith("browser.")

    def warning(self) -> str:
        return ""

    def run(self, recipient: str, content: str, *, timeout_s: float, should_stop: Callable[[], bool]) -> ToolResult:
        return ToolResult(OTTERS_VIEW, "done", False, 0.3)

    def citation_sources(self) -> dict[int, Any]:
        return {}

    def reset(self, conversation: str) -> None:
        """Nothing to forget."""

    def close(self) -> None:
        """Nothing to close."""


def researched(encoding: HarmonyEncoding, path: Path) -> tuple[HistoryStore, int]:
    """A stored conversation: a summarised analysis, a browser call, and an answer that cites the page."""
    store = HistoryStore(path)
    backend = ReplayBackend(turns=[ids(encoding, part) for part in RESEARCH])
    backend.load()
    tools = ToolRunner(ToolSet(builtins=[PageBrowser()]), ApprovalPolicy("all"))
    session = ChatSession(encoding, start_date=PINNED_DATE)
    chat = ChatConversation(session, backend, store=store, tools=tools, summarizer=Summarizer(encoding), model_name="t")
    for _ in chat.send("How heavy is a sea otter?"):
        pass
    assert chat.conversation_id is not None
    return store, chat.conversation_id


def test_summary_and_citations(snap_compare: Any, encoding: HarmonyEncoding, tmp_path: Path) -> None:
    store, conversation = researched(encoding, tmp_path / "history.sqlite3")
    app = make_app(history=store, resume=conversation, values={"ui.reasoning": "summary"})
    assert snap_compare(app, terminal_size=(100, 30), run_before=settle)
