"""Property: any text (brackets, markup, control characters) shows exactly, everywhere the TUI shows text.

One headless app runs in a thread for the whole module, so Hypothesis can try many texts quickly:
each example puts the text in every widget that shows user, model, tool or file text, renders the
screen, and compares what is drawn with the text (control characters as their visible symbols).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from textual.fuzzy import Matcher
from textual.pilot import Pilot
from textual.widgets import Collapsible, Static
from textual.widgets._collapsible import CollapsibleTitle
from textual.widgets._toast import Toast

from harmony_chat.chat.approval import pretty_arguments
from harmony_chat.chat.events import ToolFinished
from harmony_chat.harmony.events import ContentDelta, MessageStarted, Recovery, ToolCall
from harmony_chat.tools.base import ToolResult
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.commands import highlight
from harmony_chat.tui.literal import literal, visible
from harmony_chat.tui.screens.help import table_code
from harmony_chat.tui.widgets.inspector import spelled_prompt
from harmony_chat.tui.widgets.turn import Answer, AssistantTurn, ToolCallRow, ToolRow, UserMessage
from harmony_chat.tui.widgets.welcome import WelcomePanel
from tests.tui.harness import make_app, settle
from tests.tui.screen_text import actions, shown, shown_all, squeezed

PIECES = [
    *"[]/\\@=$#:;.,()'\"`*_-|<>!?~ abcXYZ019",
    "[/]",
    "[b]",
    "[/b]",
    "[@click=app.quit]",
    "[@click=screen.toggle_class('x')]",
    "[red on blue]",
    "[$accent]",
    "[link=https://x]",
    "\\[",
    "\n",
    "\t",
    "\r\n",
    "東京",
    "🙂",
    "e\u0301",
]
CONTROLS = st.characters(min_codepoint=0, max_codepoint=0x1F) | st.characters(min_codepoint=0x7F, max_codepoint=0x9F)
TEXT = st.lists(st.sampled_from(PIECES) | CONTROLS, min_size=1, max_size=40).map("".join)
ESC_SEEN = ("\x1b", "\x9b", "\x07", "\x00")


class LiveApp:
    """The app (replay backend, debug mode) running headless in its own thread; ``run`` works in it."""

    def __init__(self) -> None:
        self.app = make_app()
        self.pilot: Pilot[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._done: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self._thread.start()
        assert self._ready.wait(60), "the app did not start"

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._done = asyncio.Event()
        async with self.app.run_test(size=(100, 200), notifications=True) as pilot:
            await settle(pilot)
            await pilot.press("f12")  # debug mode shows analysis and the inspector
            self.pilot = pilot
            self._ready.set()
            await self._done.wait()

    def run(self, work: Callable[[HarmonyChatApp, Pilot[Any]], Awaitable[Any]]) -> Any:
        """Run ``work(app, pilot)`` on the app's loop (in the app's context) and return its result."""
        assert self.pilot is not None
        return self.app.call_from_thread(work, self.app, self.pilot)

    def stop(self) -> None:
        """End the app and its thread."""
        if self._loop is not None and self._done is not None:
            self._loop.call_soon_threadsafe(self._done.set)
        self._thread.join(timeout=30)


@pytest.fixture(scope="module")
def live() -> Iterator[LiveApp]:
    """One running app for the module's examples."""
    app = LiveApp()
    yield app
    app.stop()


def exactly(text: str) -> str:
    """What the screen must show for ``text``, whitespace aside."""
    return squeezed(visible(text))


def assert_clean(drawn: str) -> None:
    """Nothing that drives a terminal reaches the screen."""
    assert not any(code in drawn for code in ESC_SEEN), repr(drawn)


EXAMPLES = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
"""Each example renders the screen (about half a second here); the pure checks below try many more."""


@EXAMPLES
@given(text=TEXT)
def test_conversation_widgets_show_any_text_exactly(live: LiveApp, text: str) -> None:
    async def show(app: HarmonyChatApp, pilot: Pilot[Any]) -> dict[str, Any]:
        chat = app.chat
        log = chat.log_view
        await log.remove_children()
        user = UserMessage(text)
        turn = AssistantTurn(1, text)
        await log.mount_all([user, turn])
        await turn.apply(
            [
                MessageStarted("analysis", None, None),
                ContentDelta("analysis", text),
                MessageStarted("commentary", None, None),
                ContentDelta("commentary", text),
                ToolCall(f"functions.{text}", text, text, "commentary", "json"),
                Recovery("stray-special", text),
                ToolFinished(1, text, text, ToolResult(text, "failed"), "approved"),
            ]
        )
        turn.show_analysis()
        await turn.add_tool_result(text, text)
        await turn.show_error(text)
        status = chat.status
        status.model = text
        for row in [*turn.query(ToolRow), *turn.query(ToolCallRow)]:
            row.collapsed = False
        await pilot.pause()
        (call,) = turn.query(ToolCallRow)
        return {
            "user": shown(user),
            "preamble": shown(turn.query_one(".preamble", Static)),
            "analysis": shown(turn.query_one(".analysis", Static)),
            "rows": [
                (shown(row.query_one(CollapsibleTitle)), shown(row.query_one(Collapsible.Contents).query_one(Static)))
                for row in turn.query(ToolRow)
            ],
            "call": (
                shown(call.query_one(CollapsibleTitle)),
                shown(call.query_one(".tool-arguments", Static)),
                shown(call.query_one(".tool-result", Static)),
            ),
            "notice": shown(turn.query_one(".notice", Static)),
            "error": shown(turn.query_one(".error", Static)),
            "status": shown(status),
            "actions": [action for widget in [user, *turn.query("*"), status] for action in actions(widget)],
        }

    drawn = live.run(show)
    assert squeezed(drawn["user"]) == exactly(text)
    assert squeezed(drawn["preamble"]) == exactly(text)
    assert squeezed(drawn["analysis"]) == exactly("Analysis (raw chain of thought, not reviewed for safety)\n" + text)
    call_title, call_arguments, call_result = drawn["call"]
    assert squeezed(call_title) == "▼" + exactly(f"⚠ Tool call → {text} · {text} · failed · approved")
    assert squeezed(call_arguments) == exactly(pretty_arguments(text))
    assert squeezed(call_result) == exactly(text)
    ((result_title, result_body),) = drawn["rows"]
    assert squeezed(result_title) == "▼" + exactly(f"Tool result ← {text}")
    assert squeezed(result_body) == exactly(text)
    assert squeezed(drawn["notice"]) == exactly(f"Repaired malformed model output (stray-special): {text}")
    assert squeezed(drawn["error"]) == exactly(f"⚠ {text}")
    status, expected = squeezed(drawn["status"]), exactly(text.replace("\n", " ")) + "·"
    assert status.startswith(expected) or expected.startswith(status)  # one line, cut at the edge
    assert drawn["actions"] == []
    for part in (drawn["user"], drawn["preamble"], drawn["analysis"], *drawn["rows"][0], drawn["status"]):
        assert_clean(part)


@EXAMPLES
@given(text=TEXT)
@example(text="\t[[[[[[[[[[[[@click=app.quit]東京\t[")  # tabs: sized as one column, drawn as eight
def test_notifications_inspector_and_welcome_show_any_text_exactly(live: LiveApp, text: str) -> None:
    async def show(app: HarmonyChatApp, pilot: Pilot[Any]) -> dict[str, Any]:
        app.clear_notifications()
        app.chat.notify(text, title=text)
        log = app.chat.log_view
        await log.remove_children()
        inspector = app.chat.inspector
        panel = WelcomePanel([], text)
        await log.mount(panel)
        inspector.record([Recovery("unknown-token", text)])
        inspector.set_prompt(text)
        inspector.flush()
        for _ in range(20):  # the toast rack mounts the toast after the next refresh
            await pilot.pause()
            toasts = [toast for toast in app.screen.query(Toast) if toast.region.height]
            if toasts:
                break
        toast = toasts[-1]
        return {
            "toast": shown(toast).replace("▌", ""),
            "facts": shown(inspector.query_one("#inspector-facts", Static)),
            "panel": shown_all(panel),
            "actions": [action for widget in [toast, *panel.query("*")] for action in actions(widget)],
        }

    drawn = live.run(show)
    assert squeezed(drawn["toast"]) == exactly(text) + exactly(text)
    assert exactly(f"unknown-token: {text}") in squeezed(drawn["facts"])
    assert exactly(f"Could not load the model: {text}") in squeezed(drawn["panel"])
    assert drawn["actions"] == []
    for part in drawn.values():
        if isinstance(part, str):
            assert_clean(part)
    assert spelled_prompt(text, "yellow").plain == visible(text)


@EXAMPLES
@given(text=TEXT, cut=st.integers(min_value=1, max_value=7))
def test_answers_stream_any_text_like_the_whole_answer_and_carry_no_action(live: LiveApp, text: str, cut: int) -> None:
    async def show(app: HarmonyChatApp, pilot: Pilot[Any]) -> tuple[str, str, list[str]]:
        log = app.chat.log_view
        await log.remove_children()
        streamed, whole = Answer(), Answer()
        await log.mount_all([streamed, whole])
        for start in range(0, len(text), cut):
            await streamed.write(text[start : start + cut])
            await pilot.pause()
        await streamed.finish()
        await whole.write(text)
        await whole.finish()
        await pilot.pause()
        found = [action for widget in streamed.query("*") for action in actions(widget)]
        return shown_all(streamed), shown_all(whole), found

    streamed, whole, found = live.run(show)
    assert squeezed(streamed) == squeezed(whole)
    assert_clean(streamed)
    assert all(action.startswith("link(") for action in found), found


@given(text=TEXT)
@settings(max_examples=300)
def test_palette_entries_and_help_cells_show_any_text_exactly(text: str) -> None:
    shown_text = visible(text)
    for query in ("a", "[", "b]", "x"):
        assert highlight(Matcher(query), shown_text).plain == shown_text
    assert literal(text).plain == shown_text
    tokens = MarkdownIt("gfm-like").parse(f"| k |\n|---|\n| {table_code(text)} |\n")
    (cell,) = [child for token in tokens if token.type == "inline" for child in token.children or []][1:]
    assert cell.type == "code_inline" and cell.content.strip() == shown_text.replace("\n", "\u2424").strip()
