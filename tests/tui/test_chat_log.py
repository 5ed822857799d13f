"""The conversation's scroll view keeps messages in chapters, so a growing answer lays out one chapter.

It also owns what exchanges the view shows: each message and its answer, the last one removed for
edit and regenerate, a stored conversation shown, everything cleared.
"""

from __future__ import annotations

from openai_harmony import Author, Message, Role, TextContent
from textual.app import App, ComposeResult
from textual.widgets import Static

from harmony_chat.history.store import StoredConversation, TurnRow
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.widgets.chat_log import Chapter, ChatLog, Exchange
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage


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


class Exchanges(App[None]):
    """A chat log on its own, with the chat's theme variables (the turns' styles use them)."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return HarmonyChatApp.get_theme_variable_defaults(self)  # type: ignore[arg-type]

    def compose(self) -> ComposeResult:
        yield ChatLog()


def _message(role: Role, text: str, channel: str | None = None) -> Message:
    return Message(author=Author(role=role), content=[TextContent(text=text)], channel=channel)


async def test_the_log_keeps_each_exchange_s_message_and_answer() -> None:
    app = Exchanges()
    async with app.run_test(size=(60, 30)) as pilot:
        log = app.query_one(ChatLog)
        first, answer = UserMessage("one"), AssistantTurn(1, "low")
        await log.add_exchange(first)
        assert log.current_turn is None and log.last_turn is None
        await log.add_answer(answer)
        waiting = UserMessage("two")
        await log.add_exchange(waiting)  # a message with no answer yet (sent while the model loads)
        assert log.exchanges == [Exchange(first, answer), Exchange(waiting)]
        assert log.current_turn is answer and log.last_turn is answer
        log.remove_last_exchange(keep_user=False)
        await pilot.pause()
        assert log.exchanges == [Exchange(first, answer)] and not waiting.is_attached
        assert log.current_turn is None and log.last_turn is answer  # the answer shown is still the last one
        log.remove_last_exchange(keep_user=True)  # regenerate: the message stays, its answer goes
        await pilot.pause()
        assert log.exchanges == [Exchange(first)] and first.is_attached and not answer.is_attached
        assert log.last_turn is None
        again = AssistantTurn(2, "high")
        await log.add_answer(again)
        assert log.exchanges == [Exchange(first, again)] and log.current_turn is again
        assert list(log.query(AssistantTurn)) == [again] and list(log.query(UserMessage)) == [first]


async def test_removing_from_an_empty_log_only_forgets_the_turn() -> None:
    app = Exchanges()
    async with app.run_test(size=(60, 30)):
        log = app.query_one(ChatLog)
        log.current_turn = AssistantTurn(1, "low")
        log.remove_last_exchange(keep_user=False)
        assert log.exchanges == [] and log.current_turn is None


async def test_a_stored_conversation_is_shown_as_exchanges_and_cleared_with_everything_else() -> None:
    stored = StoredConversation(3, "t", "m", 0.0, {})
    stored.messages = [
        _message(Role.USER, "q1"),
        _message(Role.ASSISTANT, "a1", channel="final"),
        _message(Role.USER, "q2"),
        _message(Role.ASSISTANT, "a2", channel="final"),
        _message(Role.USER, "q3"),  # stored before its answer came
    ]
    stored.message_turns = [None, 7, None, None, None]
    stored.turns = [TurnRow(7, "m", "high", "stopped", None, {}, "", 0.0, None)]
    app = Exchanges()
    async with app.run_test(size=(60, 40)) as pilot:
        log = app.query_one(ChatLog)
        await log.mount(Static("welcome"), before=0)
        await log.show_stored(stored, "low")
        users = [exchange.user.text for exchange in log.exchanges]
        answers = [exchange.answer for exchange in log.exchanges]
        assert users == ["q1", "q2", "q3"] and answers[2] is None
        first, second = answers[0], answers[1]
        assert first is not None and second is not None
        assert (first.turn_id, first.effort, first.final_text) == (-1, "high", "a1")  # the stored turn's effort
        assert (second.turn_id, second.effort, second.final_text) == (-2, "low", "a2")  # no turn stored: the chat's
        assert log.last_turn is second and log.current_turn is None
        await log.clear()
        await pilot.pause()
        assert log.exchanges == [] and log.last_turn is None and list(log.children) == []
