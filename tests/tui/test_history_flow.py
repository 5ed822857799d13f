"""The history flow without an app: a fake conversation and log, recorded notices, screens and turns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

from textual.message import Message
from textual.notifications import SeverityLevel

from harmony_chat.chat.events import ChatEvent, Notice
from harmony_chat.errors import HarmonyChatError
from harmony_chat.harmony.effort import Effort
from harmony_chat.tui.messages import ConversationFailed, ConversationOpened, LastMessageTaken
from harmony_chat.tui.screens.history import HistoryScreen
from harmony_chat.tui.screens.history_flow import STOP_FIRST, HistoryFlow
from harmony_chat.tui.turn_controller import Operation, TurnController


class FakeConversation:
    """What the flow and the turn controller's workers call on a conversation."""

    def __init__(self) -> None:
        self.effort = "medium"
        self.regenerated: list[Effort | None] = []

    def regenerate(self, effort: Effort | None, should_stop: Callable[[], bool]) -> Iterator[ChatEvent]:
        self.regenerated.append(effort)
        yield Notice("again")

    def resume(self, conversation: int) -> object:
        if conversation < 0:
            raise HarmonyChatError("no such conversation")
        return f"stored {conversation}"

    def edit_last(self) -> str:
        return "the last message"


class FakeLog:
    """The chat log's exchanges, and which removals were asked for (True: the message stays)."""

    def __init__(self, exchanges: int) -> None:
        self.exchanges = [object()] * exchanges
        self.removed: list[bool] = []

    def remove_last_exchange(self, keep_user: bool) -> None:
        self.removed.append(keep_user)


class Screen:
    """What the flow asks of the chat screen, recorded; its workers run at once."""

    def __init__(self, chat: FakeConversation | None = None, exchanges: int = 1) -> None:
        self.chat = chat
        self.log = FakeLog(exchanges)
        self.notices: list[tuple[str, SeverityLevel, bool]] = []
        self.pickers: list[tuple[HistoryScreen, Callable[[int | None], None]]] = []
        self.turns_started: list[tuple[Operation, Effort | None]] = []
        self.posted: list[Message] = []
        self.turns = TurnController(self.posted.append, lambda work, group, description: work())

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        self.notices.append((message, severity, markup))

    async def start_turn(self, operation: Operation, effort: Effort | None) -> None:
        self.turns_started.append((operation, effort))

    def flow(self, store: object = None, off_reason: str | None = None, resume: int | str | None = None) -> HistoryFlow:
        return HistoryFlow(
            cast(Any, store),
            off_reason,
            resume,
            self.turns,
            conversation=lambda: cast(Any, self.chat),
            log=lambda: cast(Any, self.log),
            notify=self.notify,
            push_picker=lambda picker, chosen: self.pickers.append((picker, chosen)),
            start_turn=self.start_turn,
        )


def test_with_the_history_off_the_picker_says_why_and_does_not_open() -> None:
    screen = Screen(FakeConversation())
    assert not screen.flow(off_reason="the database is locked").pick()
    assert not screen.flow().pick()
    assert screen.notices == [
        ("The history is off (the database is locked).", "warning", False),
        ("The history is off (started with --no-history).", "warning", False),
    ]
    assert screen.pickers == []


def test_the_picker_continues_the_conversation_chosen_on_the_conversation_shown() -> None:
    screen = Screen(FakeConversation())
    store = object()
    flow = screen.flow(store)
    assert flow.pick()
    ((picker, chosen),) = screen.pickers
    assert picker.store is store
    chosen(None)  # the picker closed with nothing chosen
    assert screen.posted == []
    chosen(7)
    (opened,) = screen.posted
    assert isinstance(opened, ConversationOpened) and cast(object, opened.conversation) is screen.chat
    assert cast(object, opened.stored) == "stored 7"
    flow.open(-1)
    failure = screen.posted[-1]
    assert isinstance(failure, ConversationFailed)
    flow.failed(failure)
    assert screen.notices == [("no such conversation", "error", False)]


def test_nothing_opens_without_a_model_or_while_a_turn_runs() -> None:
    screen = Screen(None)
    flow = screen.flow(object())
    flow.open(7)
    screen.chat = FakeConversation()
    screen.turns.generating = True
    flow.open(7)
    assert not flow.pick()
    assert screen.posted == [] and screen.pickers == []
    assert [notice for notice, _, _ in screen.notices] == ["Load a model first.", STOP_FIRST, STOP_FIRST]


async def test_regenerate_drops_the_answer_only_and_runs_the_conversation_s_regenerate() -> None:
    chat = FakeConversation()
    screen = Screen(chat)
    assert await screen.flow().regenerate("high")
    assert screen.log.removed == [True]
    ((operation, effort),) = screen.turns_started
    assert effort == "high"
    assert list(operation(lambda: False)) == [Notice("again")] and chat.regenerated == ["high"]
    assert screen.notices == []


async def test_regenerate_needs_a_model_an_exchange_and_no_turn_running() -> None:
    for screen in (Screen(None), Screen(FakeConversation(), exchanges=0), Screen(FakeConversation())):
        screen.turns.generating = screen.chat is not None and bool(screen.log.exchanges)
        assert not await screen.flow().regenerate()
        assert screen.log.removed == [] and screen.turns_started == []
        assert screen.notices == [("Nothing to regenerate right now.", "warning", True)]


def test_edit_drops_the_whole_exchange_and_takes_the_message_back_from_the_conversation() -> None:
    screen = Screen(FakeConversation())
    assert screen.flow().edit_last()
    assert screen.log.removed == [False]
    (taken,) = screen.posted
    assert isinstance(taken, LastMessageTaken) and taken.text == "the last message"


def test_edit_needs_a_model_an_exchange_and_no_turn_running() -> None:
    for screen in (Screen(None), Screen(FakeConversation(), exchanges=0), Screen(FakeConversation())):
        screen.turns.generating = screen.chat is not None and bool(screen.log.exchanges)
        assert not screen.flow().edit_last()
        assert screen.log.removed == [] and screen.posted == []
        assert screen.notices == [("Nothing to edit right now.", "warning", True)]


def test_the_conversation_asked_for_at_startup_is_continued_once_the_model_is_ready() -> None:
    screen = Screen(FakeConversation())
    flow = screen.flow(object(), resume=7)
    assert flow.resuming  # a message sent meanwhile does not wait for the model
    flow.model_ready()
    flow.model_ready()
    assert not flow.resuming
    assert [cast(object, cast(ConversationOpened, message).stored) for message in screen.posted] == ["stored 7"]
    picking = screen.flow(object(), resume="pick")
    picking.model_ready()
    picking.model_ready()
    assert len(screen.pickers) == 1 and not picking.resuming
