"""Tools in the app, with real parts: the test MCP server over stdio and replayed tool loops.

Each recording holds several completions (a call, then the answer that uses its result), played
in order by the replay backend; the tool itself runs in the MCP test server.
"""

from __future__ import annotations

import re
import sys
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from textual.pilot import Pilot
from textual.widgets import Input

from harmony_chat.chat.factory import create_backend
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import load_settings
from harmony_chat.history.store import HistoryStore
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.screens.approval import GUARD_S, ApprovalScreen
from harmony_chat.tui.screens.history import HistoryScreen
from harmony_chat.tui.screens.tools import ToolsScreen
from harmony_chat.tui.screenshots import PINNED_DATE
from harmony_chat.tui.widgets.tool_row import ToolCallRow
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.tools.conftest import stdio_toml
from tests.tools.mcp_test_server import forecast
from tests.tui.harness import ManualClock, settle

CALL = (
    "<|channel|>analysis<|message|>I need the weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location":"Tokyo"}<|call|>'
)
ANSWER = "<|channel|>analysis<|message|>Got it.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"
HANG = '<|channel|>commentary to=functions.hang <|constrain|>json<|message|>{"tag":"tui-hang"}<|call|>'
ROUNDS = 400
"""Polls of 0.05 s at most while waiting for the server or the modal (bounded, not a timing)."""


def recording(tmp_path: Path, *completions: str) -> Path:
    """A multi-completion ``.txt`` recording."""
    path = tmp_path / "loop.txt"
    path.write_text("\n=====\n".join(completions) + "\n", encoding="utf-8")
    return path


def config_with_server(tmp_path: Path, extra: str = "", name: str = "weather") -> Path:
    """A config file with the MCP test server over stdio (and ``extra`` TOML before it)."""
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    path = tmp_path / "config.toml"
    path.write_text(extra + stdio_toml(name, markers), encoding="utf-8")
    return path


def tool_app(
    config: Path, replay: Path, history: HistoryStore | None = None, resume: int | None = None
) -> HarmonyChatApp:
    """The app as ``harmony-chat --config CONFIG --replay REPLAY`` starts it (replay without delay)."""
    settings = load_settings(config)
    settings.ui.cursor_blink = False
    options = ChatOptions(settings, replay=replay, start_date=PINNED_DATE)
    app = HarmonyChatApp(options, backend_factory=create_backend, history=history, resume=resume)
    app.approval_clock = ManualClock()  # the approval modal's typing guard: ask() lets its time pass
    return app


async def until(pilot: Pilot[Any], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition`` holds."""
    for _ in range(ROUNDS):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never happened: {what}")


async def tools_ready(pilot: Pilot[Any]) -> None:
    """Wait for the model and the MCP server's tools."""
    app: Any = pilot.app
    await settle(pilot)
    await until(pilot, lambda: app.chat.status.tools_state == "ready" and app.chat.status.tool_count > 0, "tools")


async def ask(pilot: Pilot[Any], text: str) -> ApprovalScreen:
    """Send ``text``, wait for the approval modal, and let its typing guard pass (the user read it)."""
    modal = await ask_only(pilot, text)
    await pass_guard(pilot, modal)
    return modal


async def pass_guard(pilot: Pilot[Any], modal: ApprovalScreen) -> None:
    """Let the modal's typing guard end (moving a manual clock; else waiting for it)."""
    clock = modal.guard.clock
    if isinstance(clock, ManualClock):
        clock.advance(GUARD_S)
    await until(pilot, lambda: modal.focused is modal.query_one("#deny"), "the modal taking answers")


async def ask_only(pilot: Pilot[Any], text: str) -> ApprovalScreen:
    """Send ``text`` and wait for the approval modal (just opened: its typing guard is on)."""
    app: Any = pilot.app
    app.chat.prompt.text = text
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval modal")
    await pilot.pause(0.1)
    return app.screen  # type: ignore[no-any-return]


async def finish(pilot: Pilot[Any]) -> None:
    """Wait for the turn to end."""
    app: Any = pilot.app
    await until(pilot, lambda: not app.chat.generating, "the end of the turn")
    await settle(pilot)


def rows(app: HarmonyChatApp) -> list[ToolCallRow]:
    return list(app.chat.query(ToolCallRow))


def notices(app: Any) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


async def test_approve_once_runs_the_mcp_tool_and_resuming_shows_the_row(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    app = tool_app(config_with_server(tmp_path), recording(tmp_path, CALL, ANSWER), history=store)
    try:
        async with app.run_test(size=(110, 36)) as pilot:
            await tools_ready(pilot)
            count = app.chat.status.tool_count
            assert count > 1 and f"· {count} tools ·" in str(app.chat.status.render())
            modal = await ask(pilot, "Weather in Tokyo?")
            assert modal.review.server == "weather" and modal.review.tool == "get_weather"
            assert '"location": "Tokyo"' in modal.review.arguments
            (row,) = rows(app)
            assert row.state == "asking" and str(row.title).startswith("? Tool call → functions.get_weather")
            title = row._title  # as wide as its text: a screen under a modal is not laid out again
            assert title.size.width >= cell_len(str(title.render())) >= cell_len(str(row.title))
            await pilot.press("y")
            await finish(pilot)
            assert row.state == "done" and row.result is not None and row.result.text == forecast("Tokyo")
            assert "approved" in str(row.title) and "weather" in str(row.title)
            turn = app.chat.query_one(AssistantTurn)
            assert turn.final_text == "Sunny." and "2 steps" in str(turn.query_one(".footer").render())
            expected = f"<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{forecast('Tokyo')}"
            assert expected in app.chat.inspector.prompt_text
            conversation = app.chat.conversation
            assert conversation is not None and conversation.conversation_id is not None
            stored_id = conversation.conversation_id
    finally:
        app.release()
    again = tool_app(config_with_server(tmp_path), recording(tmp_path, ANSWER), history=store, resume=stored_id)
    try:
        async with again.run_test(size=(110, 36)) as pilot:
            await settle(pilot)
            await until(pilot, lambda: bool(rows(again)), "the restored tool row")
            (restored,) = rows(again)
            assert restored.tool_name == "functions.get_weather" and "result from history" in str(restored.title)
            restored.collapsed = False
            await pilot.pause(0.1)
            shown = " ".join(str(static.render()) for static in restored.query(".tool-result"))
            assert forecast("Tokyo") in shown
            assert again.chat.query_one(AssistantTurn).final_text == "Sunny."
    finally:
        again.release()


async def test_always_for_the_session_asks_once(tmp_path: Path) -> None:
    config = config_with_server(tmp_path)
    before = config.read_text()
    app = tool_app(config, recording(tmp_path, CALL, ANSWER, CALL, ANSWER))
    try:
        async with app.run_test(size=(110, 36)) as pilot:
            await tools_ready(pilot)
            await ask(pilot, "Weather in Tokyo?")
            await pilot.press("a")
            await finish(pilot)
            app.chat.prompt.text = "And now?"
            await pilot.press("enter")
            await finish(pilot)
            assert not isinstance(app.screen, ApprovalScreen)
            first, second = rows(app)
            assert first.state == second.state == "done" and "always allowed" in str(second.title)
    finally:
        app.release()
    assert config.read_text() == before  # "always" for this session is not saved


async def test_always_saved_adds_the_tool_to_the_config_file(tmp_path: Path) -> None:
    config = config_with_server(tmp_path, extra='# my settings\n[tools]\nalways = ["other.tool"]\n\n')
    app = tool_app(config, recording(tmp_path, CALL, ANSWER))
    try:
        async with app.run_test(size=(110, 36)) as pilot:
            await tools_ready(pilot)
            await ask(pilot, "Weather in Tokyo?")
            await pilot.press("s")
            await finish(pilot)
            assert rows(app)[0].state == "done"
    finally:
        app.release()
    text = config.read_text()
    assert tomllib.loads(text)["tools"]["always"] == ["other.tool", "weather.get_weather"]
    assert "# my settings" in text and "[mcp.servers.weather]" in text
    assert load_settings(config).tools.always == ["other.tool", "weather.get_weather"]


async def test_deny_with_a_reason_tells_the_model(tmp_path: Path) -> None:
    app = tool_app(config_with_server(tmp_path), recording(tmp_path, CALL, ANSWER))
    try:
        async with app.run_test(size=(110, 36)) as pilot:
            await tools_ready(pilot)
            modal = await ask(pilot, "Weather in Tokyo?")
            await pilot.press("r")  # the reason field, reached on purpose
            await pilot.press(*"not [b]now[/b]")
            assert modal.query_one("#approval-reason", Input).value == "not [b]now[/b]"
            await pilot.press("enter")
            await finish(pilot)
            (row,) = rows(app)
            assert row.state == "denied" and row.result is not None
            declined = "The user declined this call of functions.get_weather; it was not run. Reason: not [b]now[/b]"
            assert row.result.text == declined
            assert f"<|channel|>commentary<|message|>{declined}<|end|>" in app.chat.inspector.prompt_text
            assert app.chat.query_one(AssistantTurn).final_text == "Sunny."  # the model went on
    finally:
        app.release()


async def test_escape_in_the_modal_denies_and_stops_the_turn(tmp_path: Path) -> None:
    app = tool_app(config_with_server(tmp_path), recording(tmp_path, CALL, ANSWER))
    try:
        async with app.run_test(size=(110, 36)) as pilot:
            await tools_ready(pilot)
            await ask(pilot, "Weather in Tokyo?")
            await pilot.press("escape")
            await finish(pilot)
            (row,) = rows(app)
            turn = app.chat.query_one(AssistantTurn)
            assert row.state == "denied" and turn.final_text == ""
            assert "stopped" in str(turn.query_one(".footer").render())
    finally:
        app.release()


async def test_a_stop_while_asking_closes_the_modal_as_a_denial(tmp_path: Path) -> None:
    app = tool_app(config_with_server(tmp_path), recording(tmp_path, CALL, ANSWER))
    try:
        async with app.run_test(size=(110, 36)) as pilot:
            await tools_ready(pilot)
            await ask(pilot, "Weather in Tokyo?")
            app.chat.action_stop()  # a stop from anywhere but the modal (ctrl+q cancels the worker the same way)
            await finish(pilot)
            assert not isinstance(app.screen, ApprovalScreen)
            (row,) = rows(app)
            assert row.state == "denied" and app.chat.query_one(AssistantTurn).final_text == ""
    finally:
        app.release()


async def test_escape_stops_a_hanging_tool(tmp_path: Path) -> None:
    config = config_with_server(tmp_path)
    app = tool_app(config, recording(tmp_path, HANG, ANSWER))
    try:
        async with app.run_test(size=(110, 36)) as pilot:
            await tools_ready(pilot)
            await ask(pilot, "Hang, please.")
            await pilot.press("y")
            await until(pilot, lambda: (tmp_path / "markers" / "tui-hang.started").exists(), "the tool started")
            await pilot.pause(0.3)
            (row,) = rows(app)
            assert row.state == "running" and re.search(r"running \d+\.\ds", str(row.title))
            assert app.chat.generating and app.chat.status.state == "running a tool"
            await pilot.press("escape")
            await finish(pilot)
            assert row.state == "cancelled" and "stopped" in str(app.chat.query_one(".footer").render())
            await until(pilot, lambda: (tmp_path / "markers" / "tui-hang.cancelled").exists(), "the server saw it")
    finally:
        app.release()


async def test_a_server_that_fails_to_start_is_one_notice(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-mcp-server"
    config = tmp_path / "config.toml"
    config.write_text(f"[mcp.servers.broken]\ncommand = {str(missing)!r}\n", encoding="utf-8")
    app = tool_app(config, recording(tmp_path, ANSWER))
    try:
        async with app.run_test(size=(110, 36), notifications=True) as pilot:
            await settle(pilot)
            await until(pilot, lambda: app.chat.status.servers_failed == 1, "the failure")
            await pilot.pause(0.5)
            failures = [text for text in notices(app) if "broken" in text]
            assert len(failures) == 1 and str(missing) in failures[0]
            assert "0 tools, 1 server failed" in str(app.chat.status.render())
            app.chat.prompt.text = "Still there?"
            await pilot.press("enter")
            await finish(pilot)
            assert app.chat.query_one(AssistantTurn).final_text == "Sunny."
    finally:
        app.release()


async def test_tools_screen_switches_a_server_off(tmp_path: Path) -> None:
    app = tool_app(config_with_server(tmp_path), recording(tmp_path, ANSWER))
    try:
        async with app.run_test(size=(110, 36)) as pilot:
            await tools_ready(pilot)
            app.chat.prompt.text = "First?"
            await pilot.press("enter")
            await finish(pilot)
            assert "type get_weather" in app.chat.inspector.prompt_text
            app.chat.prompt.text = "/tools"
            await pilot.press("enter")
            await pilot.pause(0.3)
            screen = app.screen
            assert isinstance(screen, ToolsScreen)
            (row,) = screen.rows
            line = str(row.line.render())
            assert line.startswith("weather · ready · ") and sys.executable in line
            assert "get_weather" in str(row.tools.render())
            assert row.switch.value
            await pilot.press("enter")  # the focused switch
            await pilot.pause(0.3)
            assert not row.switch.value and "disabled" in str(row.line.render())
            await pilot.press("escape")
            await pilot.pause(0.1)
            assert "0 tools" in str(app.chat.status.render())
            app.chat.prompt.text = "Second?"
            await pilot.press("enter")
            await finish(pilot)
            assert "get_weather" not in app.chat.inspector.prompt_text
    finally:
        app.release()


async def test_history_reads_and_searches_off_the_ui_thread(tmp_path: Path) -> None:
    from tests.tui.harness import make_app, send

    store = HistoryStore(tmp_path / "history.sqlite3")
    threads: list[str] = []
    for name in ("list_conversations", "search"):
        method = getattr(store, name)

        def spy(*args: Any, _method: Any = method) -> Any:
            threads.append(threading.current_thread().name)
            return _method(*args)

        setattr(store, name, spy)
    app = make_app(history=store)
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, "How do I reverse a linked list in Python?")
        await pilot.press("ctrl+o")
        await settle(pilot)
        history = app.screen
        assert isinstance(history, HistoryScreen) and len(history.ids) == 1
        history.query_one("#history-search", Input).value = "reverse"
        await settle(pilot)
        assert len(history.ids) == 1
        history.query_one("#history-search", Input).value = "nothing like this"
        await settle(pilot)
        assert history.ids == []
    assert len(threads) >= 3 and threading.main_thread().name not in threads
