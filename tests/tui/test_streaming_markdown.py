"""The live answer view shows what the finished answer shows, whatever blocks it streams through."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from harmony_chat.tui.screenshots import replay_factory
from harmony_chat.tui.widgets.turn import Answer, AssistantTurn
from tests.tui.harness import make_app, send, settle
from tests.tui.screen_text import shown_all, squeezed

HTML_AFTER = {
    "paragraph": "Para one.\n\n<div>raw html</div>\n\nPara two.",
    "table": "| a | b |\n|---|---|\n| 1 | 2 |\n\n<div>raw html</div>\n\nAfter.",
    "nested list": "- one\n  - inner\n- two\n\n<div>raw html</div>\n\nAfter.",
    "inline tags": "Use Vec<T> or <b>bold</b> here.\n\n<div>x</div>",
}


class Answers(App[None]):
    """Two answers side by side: one streamed piece by piece, one written in one go."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Answer()
            yield Answer()


@pytest.mark.parametrize("markdown", HTML_AFTER.values(), ids=HTML_AFTER.keys())
async def test_streamed_answer_shows_every_block(markdown: str) -> None:
    app = Answers()
    async with app.run_test(size=(100, 40)) as pilot:
        streamed, whole = app.query(Answer)
        for index in range(0, len(markdown), 3):
            await streamed.write(markdown[index : index + 3])
            await pilot.pause()
        await streamed.finish()
        await whole.write(markdown)
        await whole.finish()
        await pilot.pause()
        assert squeezed(shown_all(streamed)) == squeezed(shown_all(whole))
        text = squeezed(shown_all(streamed))
        assert squeezed("<div>") in text
        for line in markdown.splitlines():
            for word in line.replace("|", " ").replace("-", " ").split():
                assert word in text, word


async def test_streamed_html_through_the_app(tmp_path: Path) -> None:
    recording = tmp_path / "html.txt"
    recording.write_text(f"<|channel|>final<|message|>{HTML_AFTER['paragraph']}<|return|>", encoding="utf-8")
    app = make_app(factory=replay_factory(recording, delay=0.002))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, "q")
        shown = shown_all(app.chat.query_one(AssistantTurn).query_one(Answer))
        assert "Para one." in shown and "<div>raw html</div>" in shown and "Para two." in shown
