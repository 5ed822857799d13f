"""The conversation core: one chat with a model, outside any UI.

A :class:`ChatConversation` owns the session (history, effort, tools declared), the backend, the
link to the stored history and the tool loop. ``ask``, the TUI, ``bench`` and ``serve`` drive it
and render the :mod:`~harmony_chat.chat.events` it yields; none of them edits the session or the
store directly. Generating methods are iterators meant for a worker thread: they block on the
model, on the user's approval of a tool call and on the tool, and they write the history as they
go, so no history write happens on a UI thread.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING

from harmony_chat.backends.base import ModelBackend, SamplingParams
from harmony_chat.backends.schema_grammar import unenforceable
from harmony_chat.chat.events import (
    ChatEvent,
    Notice,
    ReasoningSummary,
    StepStarted,
    SummaryStarted,
    ToolFinished,
    ToolLoopLimit,
)
from harmony_chat.config_tools import DEFAULT_MAX_STEPS
from harmony_chat.errors import HarmonyChatError
from harmony_chat.generation.turn import TurnEvent, TurnOptions, TurnStats, prefill_next_turn, run_turn
from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.events import NoAnswer, StopReason, ToolCall
from harmony_chat.harmony.messages import message_text
from harmony_chat.harmony.visibility import is_answer

if TYPE_CHECKING:
    from harmony_chat.chat.summary import ReasoningWatch, Summarizer
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.harmony.session import ChatSession
    from harmony_chat.history.link import ConversationLink
    from harmony_chat.history.recording import TurnRecorder
    from harmony_chat.history.store import HistoryStore, StoredConversation
    from harmony_chat.tools.browser import PageRecord

_HISTORY_ERRORS = (HarmonyChatError, OSError, sqlite3.Error)


def _never() -> bool:
    return False


def _record(recorder: TurnRecorder, event: TurnEvent | SummaryStarted | ReasoningSummary) -> None:
    """Hand ``event`` to the history: a summary as its text and figures, the turn's own events as they are."""
    if isinstance(event, ReasoningSummary):
        if event.text is not None:  # a failed summary is not user-facing text: nothing to keep
            recorder.add_summary(event.text, event.figures())
    elif not isinstance(event, SummaryStarted):
        recorder.on_event(event)


class ChatConversation:
    """A conversation: the session, the model, the history it is saved to, and its tools.

    Args:
        session: the harmony session (history, effort, instructions, date).
        backend: the loaded model.
        model_name: the name recorded in the history with each turn.
        store: where the conversation is saved (None: nowhere).
        tools: runs the model's tool calls after approval (None: a call ends the turn unanswered).
        sampling: sampling parameters of every generation call.
        max_steps: generation calls per turn at most.
        raw_tokens: emit a raw-token event per token (the debug inspector and ``--raw`` need them).
        summarizer: writes reasoning summaries (summary mode); None: none are written.
    """

    def __init__(
        self,
        session: ChatSession,
        backend: ModelBackend,
        *,
        model_name: str = "",
        store: HistoryStore | None = None,
        tools: ToolRunner | None = None,
        sampling: SamplingParams | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        raw_tokens: bool = True,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.session = session
        self.backend = backend
        self.model_name = model_name
        self.store = store
        self.tools = tools
        self.sampling = sampling or SamplingParams()
        self.max_steps = max(1, max_steps)
        self.raw_tokens = raw_tokens
        self.summarizer = summarizer
        """Writes a summary of each analysis for the user (set it to switch summary mode on; None: off)."""
        self.link: ConversationLink | None = None
        """The stored conversation this chat writes to (None until the first message, or with no store)."""
        self._calls = 0
        self._told_unenforced: set[str] = set()
        """Tools whose arguments' schema the grammar cannot enforce, already told about."""
        self._closed = False

    # -- state -------------------------------------------------------------------------------

    @property
    def effort(self) -> Effort:
        """The reasoning effort of the next turn (the one place it is kept)."""
        return self.session.effort

    @effort.setter
    def effort(self, effort: Effort) -> None:
        self.session.effort = effort

    @property
    def conversation_id(self) -> int | None:
        """The stored conversation's id, once it has one."""
        return self.link.conversation_id if self.link is not None else None

    def last_answer(self) -> str | None:
        """The last turn's final answer: None when the last turn gave none (stopped, failed, no turn)."""
        for message in reversed(self.session.history):
            role = message.author.role.value
            if role == "user":
                return None
            if is_answer(message):
                return message_text(message)
        return None

    def citation_sources(self) -> dict[int, PageRecord]:
        """Cursor → page for the citations ``【cursor†Lx-Ly】`` in answers (render them with ``find_citations``).

        The browser pages in the history (a resumed conversation's, rebuilt from the shown lines),
        then the live browser's, which win where cursors repeat.
        """
        from harmony_chat.tools.browser import sources_from_transcript

        texts = [
            message_text(message)
            for message in self.session.history
            if message.author.role.value == "tool" and (message.author.name or "").startswith("browser.")
        ]
        sources = sources_from_transcript(texts)
        if self.tools is not None:
            sources.update(self.tools.tools.citation_sources())
        return sources

    # -- generating --------------------------------------------------------------------------

    def send(self, text: str, should_stop: Callable[[], bool] = _never) -> Iterator[ChatEvent]:
        """Add the user's message, save it, and answer it (with any tool calls it takes)."""
        self.session.add_user(text)
        yield from self._history(lambda link: link.record_user(self.session, text, self.model_name))
        yield from self.run(should_stop=should_stop)

    def regenerate(self, effort: Effort | None = None, should_stop: Callable[[], bool] = _never) -> Iterator[ChatEvent]:
        """Drop the last answer and generate it again (optionally at another effort)."""
        self.drop_last_exchange(keep_user=True)
        yield from self.run(effort, should_stop)

    def run(self, effort: Effort | None = None, should_stop: Callable[[], bool] = _never) -> Iterator[ChatEvent]:
        """Answer the conversation as it stands: generate, run approved tool calls, generate again.

        Raises:
            HarmonyChatError: when the prompt does not fit, or the backend fails (after the
                partial turn is recorded in the session and the history).
        """
        effort = effort or self.session.effort
        options = TurnOptions(sampling=self.sampling, effort=effort, raw_tokens=self.raw_tokens)
        if self.tools is not None:
            self.session.functions = self.tools.tools.descriptions()
            self.session.tool_namespaces = self.tools.tools.namespaces()
            self.session.builtin = sorted(self.session.tool_namespaces)
            options.tool_schemas = self.tools.tools.schemas()
            for name, refusal in unenforceable(options.tool_schemas).items():  # the arguments go unconstrained
                if name not in self._told_unenforced:
                    self._told_unenforced.add(name)
                    yield Notice(f"{name}'s arguments are checked and repaired, not held to its schema: {refusal}")
        watch = self.summarizer.watch(self.backend, self.sampling, should_stop) if self.summarizer else None
        for step in range(1, self.max_steps + 1):
            yield StepStarted(step)
            call, stats = yield from self._generate(options, effort, should_stop, watch)
            if call is None or stats is None or stats.reason is not StopReason.CALL or self.tools is None:
                return
            if should_stop():
                return
            self._calls += 1
            if step == self.max_steps:
                from harmony_chat.tools.base import ToolResult

                text = f"Not run: the limit of {self.max_steps} steps per turn was reached. Answer with what you have."
                result = ToolResult(text, "failed", False, 0.0)
                yield from self._tool_result(call, ToolFinished(self._calls, call.name, "", result, "not-run"))
                yield ToolLoopLimit(self.max_steps)
                return
            for event in self.tools.run(call, self._calls, should_stop):
                if isinstance(event, ToolFinished):
                    yield from self._tool_result(call, event)
                else:
                    yield event
            if should_stop():
                return

    def _generate(
        self,
        options: TurnOptions,
        effort: Effort,
        should_stop: Callable[[], bool],
        watch: ReasoningWatch | None = None,
    ) -> Generator[ChatEvent, None, tuple[ToolCall | None, TurnStats | None]]:
        """One generation call and its reasoning summaries, recorded as it streams; returns (the call, the stats)."""
        recorder: TurnRecorder | None = None
        if self.link is not None:
            try:
                recorder = self.link.recorder(self.model_name, effort)
            except _HISTORY_ERRORS as trouble:
                yield Notice(f"Not saved to the history: {trouble}")
        call: ToolCall | None = None
        stats: TurnStats | None = None
        failed: str | None = None
        try:
            model = watch.model if watch else self.backend
            events = run_turn(self.session, model, options, should_stop, background=watch is None)  # a watch pauses it
            for event in watch.interleave(events) if watch else events:
                if recorder is not None:
                    try:
                        _record(recorder, event)
                    except _HISTORY_ERRORS as failure:
                        recorder = None
                        yield Notice(f"The history could not be saved: {failure}")
                if isinstance(event, ToolCall):
                    call = event
                elif isinstance(event, TurnStats):
                    stats = event
                elif isinstance(event, NoAnswer) and call is not None and self.tools is not None:
                    continue  # the malformed call gets an error result and the model answers in the next step
                yield event
        except Exception as failure:
            failed = str(failure) or type(failure).__name__
            raise
        finally:
            if recorder is not None:
                try:
                    recorder.finish(stats, failed)
                except _HISTORY_ERRORS:
                    pass  # the turn itself is in the session; the next write reports the trouble
        return call, stats

    def _tool_result(self, call: ToolCall, finished: ToolFinished) -> Iterator[ChatEvent]:
        """Give the model the result of ``call`` (also when it was denied or failed) and save it."""
        self.session.add_tool_result(call.name, finished.result.text, call.channel)
        message = self.session.history[-1]
        result = finished.result
        meta = {
            "status": result.status,
            "approval": finished.approval,
            "server": finished.server,
            "elapsed_s": round(result.elapsed_s, 3),
            "truncated": result.truncated,
        }
        yield from self._history(lambda link: link.record_message(message, meta))
        yield finished

    # -- editing -----------------------------------------------------------------------------

    def drop_last_exchange(self, keep_user: bool) -> str | None:
        """Remove the last answer (and the last user message unless ``keep_user``); return the user's text."""
        history = self.session.history
        last_user = max((i for i, m in enumerate(history) if m.author.role.value == "user"), default=None)
        if last_user is None:
            return None
        text = message_text(history[last_user])
        del history[last_user + (1 if keep_user else 0) :]
        if self.session.turns:
            self.session.turns.pop()
        if self.link is not None:
            try:
                self.link.drop_last_exchange(keep_user)
            except _HISTORY_ERRORS:
                pass  # the stored copy keeps the old exchange; resuming shows it, nothing is lost
        return text

    def edit_last(self) -> str | None:
        """Take back the last user message (and its answer) for editing; return its text."""
        return self.drop_last_exchange(keep_user=False)

    def new_chat(self) -> None:
        """Start over: an empty session with the same settings, not yet stored."""
        from harmony_chat.harmony.session import ChatSession

        old = self.session
        self.session = ChatSession(
            old.encoding,
            effort=old.effort,
            instructions=old.instructions,
            functions=old.functions,
            response_formats=old.response_formats,
            start_date=old.start_date,
            context_size=old.context_size,
            overflow=old.overflow,
            builtin=old.builtin,
        )
        self.session.tool_namespaces = old.tool_namespaces
        self.link = None
        if self.tools is not None:
            self.tools.new_conversation(uuid.uuid4().hex[:12])

    def resume(self, conversation_id: int) -> StoredConversation:
        """Continue a stored conversation (its date and effort, so the prompt prefix matches).

        Raises:
            HarmonyChatError: when there is no history or no such conversation.
        """
        from harmony_chat.history.link import ConversationLink
        from harmony_chat.history.recording import resume_session

        if self.store is None:
            raise HarmonyChatError("the history is off")
        stored = self.store.load(conversation_id)
        namespaces = self.session.tool_namespaces
        self.session = resume_session(self.session.encoding, stored, self.session.context_size)
        self.session.tool_namespaces = namespaces
        self.link = ConversationLink.for_stored(self.store, stored)
        if self.tools is not None:
            self.tools.new_conversation(f"c{conversation_id}")
        return stored

    def prefill(self) -> int:
        """Evaluate the next prompt's prefix while the user reads (see ``prefill_next_turn``)."""
        return prefill_next_turn(self.session, self.backend)

    def close(self) -> None:
        """Release what the conversation holds: its tools, a summary model of its own, and the model.

        Tools someone else keeps (the app's, shared by the conversations of one session) are
        detached (``tools = None``) before. Closing again does nothing.
        """
        if self._closed:
            return
        self._closed = True
        try:
            if self.tools is not None:
                self.tools.tools.close()
            if self.summarizer is not None:
                self.summarizer.close()
        finally:
            self.backend.close()

    def __enter__(self) -> ChatConversation:
        """The conversation, closed (:meth:`close`) when the ``with`` block ends, however it ends."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- history -----------------------------------------------------------------------------

    def _history(self, write: Callable[[ConversationLink], None]) -> Iterator[ChatEvent]:
        """Run one history write (creating the stored conversation first); trouble becomes a notice."""
        if self.store is None:
            return
        try:
            if self.link is None:
                from harmony_chat.history.link import ConversationLink

                self.link = ConversationLink(self.store)
            write(self.link)
        except _HISTORY_ERRORS as error:
            yield Notice(f"Not saved to the history: {error}")
