"""Both built-in tools in the app, end to end: search → open → python → an answer with citations.

A real web on loopback (a SearXNG-shaped search and HTML pages), the real browser tool and the
real python kernel, a replayed recording with one completion per generation call, and the config
file that turns the tools on. What is checked is what the screen shows: the tool rows, the
searches and pages listed in the turn, the citations as numbered links with the pages' titles and
URLs, and never a raw ``【``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.syntax import Syntax
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from harmony_chat.chat.factory import create_backend
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import load_settings
from harmony_chat.history.store import HistoryStore
from harmony_chat.tools.browser import PageRecord
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.screenshots import PINNED_DATE
from harmony_chat.tui.widgets.answer import Answer
from harmony_chat.tui.widgets.reasoning import VisitList
from harmony_chat.tui.widgets.tool_row import CODE_LABEL, ToolCallRow
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.support.otter_story import ANSWER, COMPUTE, OPEN, QUESTION, SEARCH, SHOWN
from tests.tools.browser.web_server import WebServer
from tests.tools.python.helpers import needs_sandbox
from tests.tui.harness import settle
from tests.tui.screen_text import actions, shown_all, squeezed
from tests.tui.test_tools_tui import ask, finish, until


@pytest.fixture(scope="module")
def web() -> Iterator[WebServer]:
    server = WebServer().start()
    yield server
    server.stop()


def research_app(
    tmp_path: Path,
    web: WebServer,
    completions: list[str],
    approve: str = "all",
    history: HistoryStore | None = None,
    resume: int | None = None,
) -> HarmonyChatApp:
    """The app as ``harmony-chat --config CONFIG --replay REPLAY`` starts it, with python and browser on."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'[tools]\nbuiltin = ["python", "browser"]\napprove = "{approve}"\n\n'
        f'[tools.browser]\nprovider = "searxng"\nurl = "{web.url}"\nallow_private = true\n',
        encoding="utf-8",
    )
    recording = tmp_path / "research.txt"
    recording.write_text("\n=====\n".join(completions) + "\n", encoding="utf-8")
    settings = load_settings(config)
    settings.ui.cursor_blink = False
    options = ChatOptions(settings, replay=recording, start_date=PINNED_DATE)
    return HarmonyChatApp(options, backend_factory=create_backend, history=history, resume=resume)


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The python tool's working folders go to a temporary data dir."""
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))


async def tools_on(pilot: Any) -> None:
    app: Any = pilot.app
    await settle(pilot)
    await until(pilot, lambda: app.chat.conversation is not None and app.chat.tools.runner is not None, "the tools")


async def send_and_finish(pilot: Any, text: str) -> None:
    app: Any = pilot.app
    app.chat.prompt.text = text
    await pilot.press("enter")
    await until(pilot, lambda: not app.chat.generating and app.chat.current_turn is not None, "the turn")
    await finish(pilot)


def links(widget: Any) -> list[str]:
    return [action for part in [widget, *widget.query("*")] for action in actions(part) if action.startswith("link(")]


@needs_sandbox
async def test_search_open_python_and_an_answer_with_numbered_links(tmp_path: Path, web: WebServer) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    app = research_app(tmp_path, web, [SEARCH, OPEN, COMPUTE, ANSWER], history=store)
    try:
        async with app.run_test(size=(120, 60)) as pilot:
            await tools_on(pilot)
            await send_and_finish(pilot, QUESTION)
            turn = app.chat.query_one(AssistantTurn)
            rows = list(turn.query(ToolCallRow))
            assert [row.tool_name for row in rows] == ["browser.search", "browser.open", "python"]
            assert [row.state for row in rows] == ["done", "done", "done"]
            assert all("approve = all" in str(row.title) for row in rows)
            assert rows[2].result is not None and rows[2].result.text.strip() == "29.5"  # the real kernel ran it
            assert web.web.search_queries[-1] == "sea otter weight"
            (visited,) = turn.query(VisitList)
            assert visited.lines[0].startswith("searched “sea otter weight”")
            assert visited.lines[1].startswith(f"opened Sea otter facts · {web.url}/otters")
            assert turn.children.index(visited) > turn.children.index(rows[1])  # under the browser's rows
            answer = turn.query_one(Answer)
            text = shown_all(answer)
            assert squeezed(SHOWN) in squeezed(text)
            assert squeezed(f"1. Sea otter facts {web.url}/otters") in squeezed(text)
            assert squeezed(f"2. Kelp forests {web.url}/kelp") in squeezed(text)
            assert "【" not in shown_all(app.chat.log_view) and "】" not in shown_all(app.chat.log_view)
            found = links(answer)
            assert f"link('{web.url}/otters')" in found and f"link('{web.url}/kelp')" in found, found
            assert {action for action in found} == {f"link('{web.url}/otters')", f"link('{web.url}/kelp')"}
            assert turn.final_text == ANSWER.split("<|message|>", 1)[1].removesuffix("<|return|>")  # kept as written
            copied = turn.copy_text()
            assert "[^1]" in copied and f"[^1]: [Sea otter facts](<{web.url}/otters>)" in copied
            conversation = app.chat.conversation
            assert conversation is not None and conversation.conversation_id is not None
            stored_id = conversation.conversation_id
    finally:
        app.release()
    again = research_app(tmp_path, web, [ANSWER], history=store, resume=stored_id)
    try:
        async with again.run_test(size=(120, 60)) as pilot:
            await settle(pilot)
            await until(pilot, lambda: bool(again.chat.query(Answer)), "the restored answer")
            await pilot.pause(0.2)
            restored = again.chat.query_one(Answer)
            text = shown_all(restored)  # no live browser now: the pages come back from the stored views
            assert squeezed(SHOWN) in squeezed(text), text
            assert squeezed(f"1. Sea otter facts {web.url}/otters") in squeezed(text)
            assert "【" not in shown_all(again.chat.log_view)
    finally:
        again.release()


@needs_sandbox
async def test_python_approval_shows_the_code_labelled_and_highlighted_as_python(
    tmp_path: Path, web: WebServer
) -> None:
    answer = "<|channel|>final<|message|>It is 29.5.<|return|>"
    app = research_app(tmp_path, web, [COMPUTE, answer], approve="ask")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await tools_on(pilot)
            modal = await ask(pilot, QUESTION)
            title = str(modal.query_one("#approval-title").render())
            assert title == "Code the model wants to run (written in its hidden reasoning): python"
            code = modal.query_one("#approval-args", Static).visual
            assert code is not None
            syntax = getattr(code, "_renderable", code)
            assert isinstance(syntax, Syntax) and syntax.lexer is not None and syntax.lexer.name == "Python"
            assert syntax.code.startswith("low, high = 14, 45")
            warning = modal.review.warning
            assert str(modal.query_one("#approval-warning").render()) == warning  # the containment note, as text
            await pilot.press("y")
            await finish(pilot)
            (row,) = app.chat.query(ToolCallRow)
            labels = [str(label.render()) for label in row.query(".tool-label")]
            assert labels[0] == CODE_LABEL and row.state == "done"
    finally:
        app.release()


class TwoAnswers(App[None]):
    """Two answers citing the same pages: one streamed piece by piece, one written in one go."""

    def __init__(self, lookups: list[Callable[[], dict[int, PageRecord]]]) -> None:
        super().__init__()
        self.lookups = lookups

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Answer(self.lookups[0])
            yield Answer(self.lookups[1])


PAGES = {
    1: PageRecord("https://example.org/otters", "Sea otter facts"),
    0: PageRecord("https://example.org/kelp", "Kelp"),
}
RAW = ANSWER.split("<|message|>", 1)[1].removesuffix("<|return|>")


@pytest.mark.parametrize("cut", [1, 2, 5, 13])
async def test_a_streamed_answer_with_citations_ends_as_the_whole_one(cut: int) -> None:
    app = TwoAnswers([lambda: PAGES, lambda: PAGES])
    async with app.run_test(size=(100, 30)) as pilot:
        streamed, whole = app.query(Answer)
        for start in range(0, len(RAW), cut):
            await streamed.write(RAW[start : start + cut])
            await pilot.pause()
            assert "【" not in shown_all(streamed)  # never, not even half a citation
        await streamed.finish()
        await whole.write(RAW)
        await whole.finish()
        await pilot.pause()
        assert shown_all(streamed) == shown_all(whole)
        assert "[1]" in shown_all(whole) and "Sea otter facts" in shown_all(whole)


async def test_pages_that_come_late_still_give_the_finished_answer_its_links() -> None:
    asked: list[int] = []

    def late() -> dict[int, PageRecord]:  # nothing while it streams, the pages once it is finished
        asked.append(1)
        return PAGES if len(asked) > 1 else {}

    app = TwoAnswers([late, lambda: PAGES])
    async with app.run_test(size=(100, 30)) as pilot:
        streamed, whole = app.query(Answer)
        for start in range(0, len(RAW), 7):
            await streamed.write(RAW[start : start + 7])
        await streamed.finish()
        await whole.write(RAW)
        await whole.finish()
        await pilot.pause()
        assert len(asked) == 2 and shown_all(streamed) == shown_all(whole)
        assert "https://example.org/otters" in shown_all(streamed)
