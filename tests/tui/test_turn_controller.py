"""The turn controller without an app: a fake conversation, a recording ``post`` and a worker runner."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, cast

from textual.message import Message

from harmony_chat.chat.events import ChatEvent, Notice
from harmony_chat.errors import HarmonyChatError
from harmony_chat.tui.messages import ConversationFailed, ConversationOpened, LastMessageTaken, TurnDone, TurnEvents
from harmony_chat.tui.screens.tooling import TurnContext
from harmony_chat.tui.turn_controller import TurnController


class FakeConversation:
    """What the controller's workers call on a conversation, recorded."""

    def __init__(self) -> None:
        self.effort = "medium"
        self.calls: list[str] = []

    def send(self, text: str, should_stop: Callable[[], bool]) -> Iterator[ChatEvent]:
        self.calls.append(f"send {text}")
        yield Notice(text)

    def drop_last_exchange(self, keep_user: bool) -> str | None:
        return None

    def prefill(self) -> None:
        self.calls.append("prefill")

    def resume(self, conversation: int) -> object:
        if conversation < 0:
            raise HarmonyChatError("no such conversation")
        self.effort = "low"  # the stored effort
        return f"stored {conversation}"

    def edit_last(self) -> str:
        return "the last message"


class Tools:
    turn: TurnContext | None = None


class Recorder:
    """A ``post`` and a worker runner that run the work at once (or on a thread, with ``threaded``)."""

    def __init__(self, threaded: bool = False) -> None:
        self.posted: list[Message] = []
        self.groups: list[str] = []
        self.threads: list[threading.Thread] = []
        self.threaded = threaded

    def post(self, message: Message) -> bool:
        self.posted.append(message)
        return True

    def run(self, work: Callable[[], None], group: str, description: str) -> None:
        self.groups.append(group)
        if self.threaded:
            thread = threading.Thread(target=work)
            self.threads.append(thread)
            thread.start()
        else:
            work()


def controller(recorder: Recorder, tools: Tools | None = None) -> TurnController:
    return TurnController(recorder.post, recorder.run, tools or Tools())


def test_a_turn_runs_in_the_generation_worker_and_posts_its_events_then_its_end() -> None:
    recorder, tools = Recorder(), Tools()
    seen: list[TurnContext | None] = []
    turns = controller(recorder, tools)
    chat = FakeConversation()

    def operation(should_stop: Callable[[], bool]) -> Iterator[ChatEvent]:
        seen.append(tools.turn)  # the approver finds the running turn
        return chat.send("hello", should_stop)

    turn_id = turns.begin()
    turns.start(cast(Any, chat), operation, turn_id)
    assert recorder.groups == ["generation"] and turns.generating
    events, done = recorder.posted
    assert isinstance(events, TurnEvents) and events.turn_id == turn_id and events.events == [Notice("hello")]
    assert isinstance(done, TurnDone) and done.turn_id == turn_id and done.error is None
    assert seen[0] is not None and seen[0].turn_id == turn_id and tools.turn is None
    assert turns.finish(turn_id) and not turns.generating and turns.turn_done_at > 0


def test_stop_stops_the_running_turn() -> None:
    recorder = Recorder(threaded=True)
    turns = controller(recorder)
    asked = threading.Event()

    def operation(should_stop: Callable[[], bool]) -> Iterator[ChatEvent]:
        asked.set()
        for _ in range(500):  # five seconds at most
            if should_stop():
                yield Notice("stopped")
                return
            threading.Event().wait(0.01)

    turns.start(cast(Any, FakeConversation()), operation, turns.begin())
    assert asked.wait(5)
    turns.stop()
    recorder.threads[0].join(5)
    assert turns.stopping
    assert [type(message) for message in recorder.posted] == [TurnEvents, TurnDone]
    assert cast(TurnEvents, recorder.posted[0]).events == [Notice("stopped")]
    turns.start(cast(Any, FakeConversation()), lambda _: iter([]), turns.begin())
    recorder.threads[1].join(5)
    assert not turns.stopping  # a new turn is not stopped


def test_a_superseded_turn_s_end_is_ignored() -> None:
    recorder = Recorder()
    turns = TurnController(recorder.post, lambda work, group, description: None, Tools())  # never runs
    first = turns.begin()
    turns.start(cast(Any, FakeConversation()), lambda _: iter([]), first)
    second = turns.begin()
    turns.start(cast(Any, FakeConversation()), lambda _: iter([]), second)
    assert not turns.is_current(first) and turns.is_current(second)
    assert not turns.finish(first) and turns.generating and turns.turn_done_at == 0  # the second goes on
    assert turns.finish(second) and not turns.generating


def test_the_conversation_s_other_workers_post_their_results() -> None:
    recorder = Recorder()
    turns = controller(recorder)
    chat = FakeConversation()
    turns.prefill(cast(Any, chat))
    turns.resume(cast(Any, chat), 7)
    turns.resume(cast(Any, chat), -1)
    turns.take_last(cast(Any, chat))
    assert recorder.groups == ["prefill", "conversation", "conversation", "conversation"]
    assert chat.calls == ["prefill"]
    opened, failed, taken = recorder.posted
    assert isinstance(opened, ConversationOpened) and cast(object, opened.stored) == "stored 7"
    assert chat.effort == "medium"  # the effort shown is the effort used, not the stored one
    assert isinstance(failed, ConversationFailed) and failed.error == "no such conversation"
    assert isinstance(taken, LastMessageTaken) and taken.text == "the last message"
