"""The turn controller without an app: a fake conversation, a recording ``post`` and a worker runner."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any, cast

from textual.message import Message

from harmony_chat.chat.approval import STOPPED, Decision, ToolReview
from harmony_chat.chat.events import ApprovalRequested, ChatEvent, Notice
from harmony_chat.errors import HarmonyChatError
from harmony_chat.tui.messages import ConversationFailed, ConversationOpened, LastMessageTaken, TurnDone, TurnEvents
from harmony_chat.tui.turn_controller import TurnController

REVIEW = ToolReview("weather.get_weather", "weather", "get_weather", "functions.get_weather", "{}")


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


def controller(recorder: Recorder) -> TurnController:
    return TurnController(recorder.post, recorder.run)


def test_a_turn_runs_in_the_generation_worker_and_posts_its_events_then_its_end() -> None:
    recorder = Recorder()
    turns = controller(recorder)
    chat = FakeConversation()
    turn_id = turns.begin()
    turns.start(cast(Any, chat), lambda should_stop: chat.send("hello", should_stop), turn_id)
    assert recorder.groups == ["generation"] and turns.generating
    events, done = recorder.posted
    assert isinstance(events, TurnEvents) and events.turn_id == turn_id and events.events == [Notice("hello")]
    assert isinstance(done, TurnDone) and done.turn_id == turn_id and done.error is None
    assert turns.finish(turn_id) and not turns.generating and turns.turn_done_at > 0


def _asking(answers: list[Decision], before: Callable[[], object] = lambda: None) -> Callable[..., Iterator[ChatEvent]]:
    """A turn that shows a notice, asks about one call and keeps the answer it waited for."""

    def operation(should_stop: Callable[[], bool]) -> Iterator[ChatEvent]:
        yield Notice("before")
        before()
        answer: Future[Decision] = Future()
        yield ApprovalRequested(1, "functions.get_weather", REVIEW, answer)
        answers.append(answer.result(timeout=5))

    return operation


def test_a_question_is_posted_at_once_and_a_stop_answers_it_with_a_denial() -> None:
    recorder = Recorder(threaded=True)
    turns = controller(recorder)
    answers: list[Decision] = []
    turns.start(cast(Any, FakeConversation()), _asking(answers), turns.begin())
    for _ in range(500):  # the notice's batch is never marked rendered: the question must not wait behind it
        if len(recorder.posted) == 2:
            break
        threading.Event().wait(0.01)
    notice, question = recorder.posted
    assert isinstance(notice, TurnEvents) and notice.events == [Notice("before")] and not notice.handled.is_set()
    assert isinstance(question, TurnEvents) and isinstance(question.events[0], ApprovalRequested)
    assert answers == []  # the turn waits for the answer
    turns.stop()
    recorder.threads[0].join(5)
    assert answers == [STOPPED] and isinstance(recorder.posted[-1], TurnDone)


def test_a_question_asked_as_the_turn_is_stopped_is_denied_at_once() -> None:
    recorder = Recorder(threaded=True)
    turns = controller(recorder)
    answers: list[Decision] = []
    turns.start(cast(Any, FakeConversation()), _asking(answers, before=turns.stop), turns.begin())
    recorder.threads[0].join(5)
    assert answers == [STOPPED]


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
    turns = TurnController(recorder.post, lambda work, group, description: None)  # never runs
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
