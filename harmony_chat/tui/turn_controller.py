"""The chat's turn lifecycle, off the widget tree: start and stop a turn, and every worker on the conversation.

:class:`TurnController` is the chat screen's collaborator for what runs on the conversation: a
turn's generation, the prefill after it, opening a stored conversation and taking the last
message back. Each runs in a worker thread (``run_worker``), one at a time (``serial``), and
reports with ``post`` only. Turns are numbered, as :class:`~harmony_chat.tui.screens.loading.ModelLoader`
numbers loads: what a superseded turn reports is ignored (:meth:`TurnController.is_current`).
The screen shows the turn (mounts its widgets, renders its events, closes it) from the messages.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.message import Message

from harmony_chat.errors import HarmonyChatError
from harmony_chat.tui.messages import ConversationFailed, ConversationOpened, LastMessageTaken

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.events import ChatEvent
    from harmony_chat.tui.generation import GenerationRun

Operation = Callable[[Callable[[], bool]], Iterator["ChatEvent"]]
"""A generating method of the conversation, given the turn's stop flag."""
RunWorker = Callable[[Callable[[], None], str, str], object]
"""Runs ``work`` in a worker thread of a group (a new one cancels the group's running one), with a description."""
Post = Callable[[Message], object]


def _cancelled() -> Callable[[], bool]:
    """Whether the current worker was cancelled (never, outside a Textual worker)."""
    from textual.worker import NoActiveWorker, get_current_worker

    try:
        worker = get_current_worker()
    except NoActiveWorker:
        return lambda: False
    return lambda: worker.is_cancelled


class TurnController:
    """Starts, stops and numbers the chat's turns, and runs the conversation's workers one at a time.

    Args:
        post: the screen's thread-safe ``post_message`` (every result goes through it).
        run_worker: runs a function in a worker thread (the screen's ``run_worker``, exclusive per group).
        serial: held by every worker that uses the conversation (a model load shares it).
    """

    def __init__(self, post: Post, run_worker: RunWorker, serial: threading.Lock | None = None) -> None:
        self.post = post
        self.run_worker = run_worker
        self.serial = serial or threading.Lock()
        """Held by every worker that uses the conversation, so they run one at a time."""
        self.turn_id = 0
        """Counts turns; what an earlier turn reports late is ignored."""
        self.generating = False
        """Whether a turn is under way (from :meth:`start` until its :class:`TurnDone` is taken)."""
        self.turn_done_at = 0.0
        """``time.monotonic()`` when the last turn finished."""
        self._stop = threading.Event()
        self._run: GenerationRun | None = None
        """The running turn's event stream (its open approvals are denied when it is stopped)."""

    # -- turns ------------------------------------------------------------------------------------

    def begin(self) -> int:
        """Number a new turn (the earlier ones are superseded) and return its number."""
        self.turn_id += 1
        return self.turn_id

    def is_current(self, turn_id: int) -> bool:
        """Whether ``turn_id`` is the latest turn."""
        return turn_id == self.turn_id

    def start(self, conversation: ChatConversation, operation: Operation, turn_id: int) -> None:
        """Run ``operation`` on ``conversation`` as turn ``turn_id``, in the generation worker."""
        self._stop.clear()
        self.generating = True
        self.run_worker(partial(self._generate, conversation, operation, turn_id), "generation", "Generating")

    def stop(self) -> None:
        """Ask the running turn to stop (within a token; a running tool is cancelled, a question denied)."""
        self._stop.set()
        run = self._run
        if run is not None:
            run.withdraw()

    @property
    def stopping(self) -> bool:
        """Whether the user stopped the current turn."""
        return self._stop.is_set()

    def finish(self, turn_id: int) -> bool:
        """Take the end of turn ``turn_id`` (its ``TurnDone``); False, and nothing changes, if it was superseded."""
        if not self.is_current(turn_id):
            return False
        self.generating = False
        self.turn_done_at = time.monotonic()
        return True

    def _generate(self, conversation: ChatConversation, operation: Operation, turn_id: int) -> None:
        from harmony_chat.tui.generation import GenerationRun

        cancelled = _cancelled()

        def should_stop() -> bool:
            # Textual cancels every worker when the app exits (ctrl+q): stop within a token, so the
            # process ends at once and the history records the partial answer as stopped.
            return self._stop.is_set() or cancelled()

        run = GenerationRun(turn_id, self.post)
        with self.serial:
            self._run = run
            if self._stop.is_set():  # stopped before its stream was known here
                run.withdraw()
            try:
                run.run(operation(should_stop), conversation)
            finally:
                self._run = None

    # -- the conversation's other workers ---------------------------------------------------------

    def prefill(self, conversation: ChatConversation) -> None:
        """Evaluate the history the next prompt will show, while the user reads (see ``prefill_next_turn``)."""
        self.run_worker(partial(self._prefill, conversation), "prefill", "Preparing the next turn")

    def _prefill(self, conversation: ChatConversation) -> None:
        with self.serial:
            conversation.prefill()

    def resume(self, chat: ChatConversation, conversation_id: int) -> None:
        """Continue stored conversation ``conversation_id`` on ``chat``; posts :class:`ConversationOpened`.

        A failure posts :class:`ConversationFailed`.
        """
        self.run_worker(partial(self._resume, chat, conversation_id), "conversation", "Opening")

    def _resume(self, chat: ChatConversation, conversation_id: int) -> None:
        with self.serial:
            effort = chat.effort  # the effort shown is the effort used, not the one stored
            try:
                stored = chat.resume(conversation_id)
            except HarmonyChatError as error:
                self.post(ConversationFailed(str(error)))
                return
            chat.effort = effort
        self.post(ConversationOpened(chat, stored))

    def take_last(self, chat: ChatConversation) -> None:
        """Take the last user message back out of ``chat`` (its answer too); posts :class:`LastMessageTaken`."""
        self.run_worker(partial(self._take_last, chat), "conversation", "Editing")

    def _take_last(self, chat: ChatConversation) -> None:
        with self.serial:
            text = chat.edit_last()
        self.post(LastMessageTaken(text))
