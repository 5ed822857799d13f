"""The conversation's scroll view keeps messages in chapters, so a growing answer lays out one chapter."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from harmony_chat.tui.widgets.chat_log import Chapter, ChatLog


class Log(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatLog()


async def test_messages_go_into_chapters_in_order() -> None:
    app = Log()
    async with app.run_test(size=(40, 20)) as pilot:
        log = app.query_one(ChatLog)
        messages = [Static(f"m{n}") for n in range(30)]
        for message in messages:
            await log.mount(message)
        await log.mount(Static("welcome"), before=0)
        await pilot.pause()
        chapters = log.chapters
        assert list(log.children) == chapters  # the scroll view lays out chapters only
        assert all(len(chapter.children) <= ChatLog.CHAPTER_SIZE for chapter in chapters[1:])
        shown = [str(widget.render()) for chapter in chapters for widget in chapter.children]
        assert shown == ["welcome", *(f"m{n}" for n in range(30))]
        assert [widget.region.y for widget in messages] == sorted(widget.region.y for widget in messages)


async def test_a_growing_last_message_leaves_earlier_chapters_laid_out() -> None:
    app = Log()
    async with app.run_test(size=(40, 20)) as pilot:
        log = app.query_one(ChatLog)
        for n in range(ChatLog.CHAPTER_SIZE * 2):
            await log.mount(Static(f"m{n}"))
        last = Static("x")
        await log.mount(last)
        first, current = log.chapters[0], last.parent
        assert isinstance(current, Chapter) and current is log.chapters[-1] and current is not first
        for _ in range(50):  # on a loaded machine the mounts' layouts take a few frames to settle
            seen = first._layout_updates
            await pilot.pause(0.05)
            if first._layout_updates == seen:
                break
        before = first._layout_updates, current._layout_updates
        for n in range(5):
            last.update("x\n" * (n + 2))
            await pilot.pause()
        assert first._layout_updates == before[0]  # a finished chapter is not laid out again
        assert current._layout_updates > before[1]  # the one holding the growing message is


async def test_clearing_the_chat_log_removes_every_chapter() -> None:
    app = Log()
    async with app.run_test(size=(40, 20)) as pilot:
        log = app.query_one(ChatLog)
        for n in range(20):
            await log.mount(Static(f"m{n}"))
        await log.remove_children()
        await pilot.pause()
        assert list(log.children) == [] and list(log.query(Static)) == []
