"""The chat screen: conversation, prompt, status bar, token inspector; renders a conversation and asks.

The conversation itself (session, model, effort, history, tools) is a
:class:`~harmony_chat.chat.conversation.ChatConversation`; the screen drives it from worker
threads (one at a time, in order) and renders the events it yields. Nothing here edits the
session or writes the history.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widget import MountError, Widget

from harmony_chat.chat.events import ChatEvent, Notice, ReasoningSummary, ToolFinished
from harmony_chat.collector import release, settle
from harmony_chat.harmony.effort import Effort, next_effort
from harmony_chat.harmony.turn import PromptReady, TurnStats
from harmony_chat.tui.bindings import SCREEN_KEYS
from harmony_chat.tui.messages import ModelReady, TurnDone, TurnEvents
from harmony_chat.tui.render_caches import release_removed_widgets
from harmony_chat.tui.screens.edits import ConversationEdits
from harmony_chat.tui.screens.loading import ModelLoader
from harmony_chat.tui.screens.reasoning import ReasoningView
from harmony_chat.tui.screens.tooling import SERVERS_REFRESH_S, ToolControl, TurnContext
from harmony_chat.tui.slash import SlashError, parse_slash
from harmony_chat.tui.widgets.inspector import TokenInspector
from harmony_chat.tui.widgets.prompt import PromptInput
from harmony_chat.tui.widgets.status_bar import StatusBar
from harmony_chat.tui.widgets.transcript import Transcript
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage
from harmony_chat.tui.widgets.welcome import WelcomePanel

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation

Operation = Callable[[Callable[[], bool]], Iterator[ChatEvent]]
"""A generating method of the conversation, given the turn's stop flag."""


class ChatScreen(ModelLoader, ConversationEdits, ToolControl, ReasoningView):
    """Where the conversation happens."""

    BINDINGS = [key.binding() for key in SCREEN_KEYS]
    DEFAULT_CSS = """
    ChatScreen #chat-log { height: 1fr; padding: 0 1; }
    ChatScreen #main { height: 1fr; }
    ChatScreen.-debug .analysis, ChatScreen.-reasoning-raw .analysis { display: block; }
    ChatScreen.-reasoning-summary .reasoning-summary { display: block; }
    ChatScreen.-debug #inspector { display: block; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.conversation: ChatConversation | None = None
        """The conversation shown (None until a model is loaded)."""
        self.generating = False
        self.turn_id = 0
        self.current_turn: AssistantTurn | None = None
        self.exchanges: list[list[Widget]] = []
        self._stop = threading.Event()
        self.serial = threading.Lock()
        """Held by every worker that uses the conversation, so they run one at a time."""
        self.batch_lags: deque[float] = deque(maxlen=10000)
        """Seconds between a batch's posting and its rendering (the TUI benchmark reads them)."""
        self.turn_done_at = 0.0
        """``time.monotonic()`` when the last turn finished rendering."""
        self.load_id = 0
        """Counts model loads; what an earlier load or its welcome panel reports late is ignored."""
        self.visits_before = 0
        """How many searches and pages the browser had made before the current turn."""

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        with Horizontal(id="main"):
            yield Transcript(id="chat-log")
            yield TokenInspector()
        yield PromptInput(cursor_blink=self.chat_app.settings.ui.cursor_blink)
        yield StatusBar(id="status")

    @property
    def log_view(self) -> VerticalScroll:
        """The scrolling conversation."""
        return self.query_one("#chat-log", VerticalScroll)

    @property
    def status(self) -> StatusBar:
        """The status bar."""
        return self.query_one(StatusBar)

    @property
    def inspector(self) -> TokenInspector:
        """The debug token inspector."""
        return self.query_one(TokenInspector)

    @property
    def prompt(self) -> PromptInput:
        """The prompt."""
        return self.query_one(PromptInput)

    def on_mount(self) -> None:
        """Start loading (and the tools) after the first paint."""
        self.status.effort = self.chat_app.settings.chat.effort  # until a conversation exists and says
        self.status.history_off = self.chat_app.history_off is not None
        self.set_interval(0.25, self._tick)
        self.set_interval(1.0, self.refresh_tool_count)
        self.refresh_servers()
        self.set_interval(SERVERS_REFRESH_S, self.refresh_servers)
        self.prompt.focus()
        self.show_reasoning(self.chat_app.settings.ui.reasoning)
        if self.chat_app.start_in_debug:
            self.action_toggle_debug()
        self.call_after_refresh(self.load)
        self.call_after_refresh(self.start_tools)
        self.call_after_refresh(settle, collect=False)  # the first paint: freeze startup's objects, quickly

    def on_unmount(self) -> None:
        """Hand everything frozen back to the collector (``collector.py``)."""
        release()

    # -- a model is ready ----------------------------------------------------------------

    async def on_model_ready(self, message: ModelReady) -> None:
        """Show the new model and chat on it."""
        info = message.model.info
        pocket = self.chat_app.options.uses_pocket
        self.status.model = f"{info.name} (pocket demo model)" if pocket else info.name
        self.status.device, self.status.context_size = info.device, info.context_size
        self.status.state = "idle"
        if not pocket:
            for panel in self.query(WelcomePanel):
                await panel.remove()
        if message.conversation is not None:
            self.conversation = message.conversation
            self.loaded_model = message.model
            self.status.effort = self.conversation.effort
            self.attach_tools()
            self.attach_summarizer()
        self.prompt.focus()
        waiting = self.take_waiting()
        if waiting is not None and self.conversation is not None:
            await self._send(*waiting)
        elif waiting is not None:
            waiting[1].remove()
            self.prompt.give_back(waiting[0])
        resume, self.chat_app.resume = self.chat_app.resume, None
        if resume == "pick":
            self.action_history()
        elif isinstance(resume, int):
            self.open_conversation(resume)

    # -- sending and generating ---------------------------------------------------------------

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        """Send a message, or run a slash command; what cannot be sent goes back into the prompt.

        A slash command that is wrong or cannot run now goes back selected, so typing replaces it.
        """
        try:
            command = parse_slash(message.text)
        except SlashError as error:
            self.prompt.give_back(message.text, select=True)
            self.notify(str(error), severity="error")
            return
        if command is not None:
            if not await self.chat_app.run_slash(command):  # it said why; the command stays, to fix or replace
                self.prompt.give_back(message.text, select=True)
            return
        if self.generating:
            self.prompt.give_back(message.text)
            self.notify("Still answering: press escape to stop first.", severity="warning")
            return
        if self.conversation is None:
            if not await self.hold_until_loaded(message.text):
                self.prompt.give_back(message.text)
                self.notify("No model is loaded yet.", severity="warning")
            return
        user = UserMessage(message.text)
        await self.log_view.mount(user)
        await self._send(message.text, user)

    async def _send(self, text: str, user: UserMessage) -> None:
        """Send ``text``, shown as ``user``, on the conversation."""
        conversation = self.conversation
        assert conversation is not None
        self.exchanges.append([user])
        await self.start_turn(lambda should_stop: conversation.send(text, should_stop))

    async def start_turn(self, operation: Operation, effort: Effort | None = None) -> None:
        """Show a new assistant turn and run ``operation`` for it in the generation worker."""
        from harmony_chat.tui.browsing import visits

        conversation = self.conversation
        assert conversation is not None
        self.attach_tools()
        self.attach_summarizer()
        self.turn_id += 1
        self.visits_before = len(visits(conversation))
        self.status.summary_tokens, self.status.summary_seconds = 0, 0.0
        turn = AssistantTurn(self.turn_id, effort or conversation.effort, conversation.citation_sources)
        self.current_turn = turn
        await self.log_view.mount(turn)
        self.exchanges[-1].append(turn)
        self.log_view.anchor()
        self._stop.clear()
        self.generating = True
        self.status.state = "thinking"
        self.refresh_bindings()
        self._generate(conversation, operation, self.turn_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="generation", description="Generating")
    def _generate(self, conversation: ChatConversation, operation: Operation, turn_id: int) -> None:
        from textual.worker import get_current_worker

        from harmony_chat.tui.generation import GenerationRun

        worker = get_current_worker()

        def should_stop() -> bool:
            # Textual cancels every worker when the app exits (ctrl+q): stop within a token, so the
            # process ends at once and the history records the partial answer as stopped.
            return self._stop.is_set() or worker.is_cancelled

        run = GenerationRun(turn_id, self.post_message)
        with self.serial:
            self.turn_context = TurnContext(turn_id, run, should_stop)
            try:
                run.run(operation(should_stop), conversation)
            finally:
                self.turn_context = None

    async def on_turn_events(self, message: TurnEvents) -> None:
        """Render a batch of events of the current turn, then let the worker send the next one.

        Once the app is exiting nothing more is drawn (the worker still records the turn): the
        screen's widgets are being removed, and drawing into them failed.
        """
        try:
            if not self.chat_app.exiting:
                await self._render_events(message)
        except MountError:
            if not self.chat_app.exiting:  # the app began exiting while this batch was drawn
                raise
        finally:
            message.handled.set()

    async def _render_events(self, message: TurnEvents) -> None:
        turn = self.current_turn
        if turn is None or message.turn_id != turn.turn_id:
            return
        self.batch_lags.append(time.monotonic() - message.posted_at)
        await turn.apply(message.events)
        self.inspector.record(message.events)
        for event in message.events:
            if isinstance(event, PromptReady) and self.conversation is not None:
                self.inspector.set_prompt(self.conversation.session.encoding.decode(event.prompt.tokens))
                self.status.context_used = len(event.prompt.tokens)
            elif isinstance(event, TurnStats):
                figures = event.stats
                self.status.ttft, self.status.speed = figures.ttft_s, figures.decode_tokens_per_s
                self.status.cached = figures.prompt_tokens_cached
                self.status.context_used = figures.prompt_tokens + figures.generated_tokens
            elif isinstance(event, Notice):
                self.notify(event.text, severity="warning" if event.severity == "warning" else "information")
            elif isinstance(event, ReasoningSummary):
                self.status.summary_tokens += event.stats.generated_tokens
                self.status.summary_seconds += event.seconds
            elif isinstance(event, ToolFinished) and event.name.startswith("browser.") and self.conversation:
                from harmony_chat.tui.browsing import visits

                await turn.show_visits(visits(self.conversation)[self.visits_before :])
        if self._stop.is_set():
            return
        if turn.tool_running:
            self.status.state = "running a tool"
        elif turn.summarising:
            self.status.state = "summarising the reasoning"
        elif turn.stop_reason is None:
            self.status.state = "thinking" if turn.thinking else "answering"

    async def on_turn_done(self, message: TurnDone) -> None:
        """Close the turn; once its end is on screen, collect and freeze for the collector (``collector.py``)."""
        await self._close_turn(message)
        self.call_after_refresh(settle)

    async def _close_turn(self, message: TurnDone) -> None:
        """Close the turn; show an error, giving the user's words back if nothing was generated."""
        self.generating = False
        self.turn_done_at = time.monotonic()
        self.close_approval()
        self.status.state = "idle"
        self.refresh_bindings()
        turn = self.current_turn
        if turn is None or message.turn_id != turn.turn_id:
            return
        if message.error and message.no_output:
            self._remove_last_exchange(keep_user=False)
            if message.given_back is not None:
                self.prompt.give_back(message.given_back)
            self.notify(message.error, title="Not sent", severity="error", timeout=8)
            return
        await turn.close(stopped=self._stop.is_set())
        if message.error:
            await turn.show_error(message.error)
            self.status.state = "error"
        elif self.conversation is not None:
            self._prefill(self.conversation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="prefill", description="Preparing the next turn")
    def _prefill(self, conversation: ChatConversation) -> None:
        """Evaluate the history the next prompt will show, while the user reads (see ``prefill_next_turn``)."""
        with self.serial:
            conversation.prefill()

    def _tick(self) -> None:
        if self.generating and self.current_turn is not None:
            self.current_turn.tick()

    # -- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape only stops while generating; otherwise it falls through to other widgets."""
        if action == "stop":
            return self.generating
        return True

    def action_stop(self) -> None:
        """Stop generating (and a running tool); the partial answer stays, marked as stopped."""
        self._stop.set()
        self.close_approval()
        self.status.state = "stopping"

    def action_cycle_effort(self) -> None:
        """Cycle the reasoning effort of the next turn."""
        if self.conversation is not None:
            self.set_effort(next_effort(self.conversation.effort))
        else:
            self.notify("No model is loaded yet: the effort can be set once it is.", severity="warning")

    def set_effort(self, effort: Effort) -> bool:
        """Set the reasoning effort of the next turn (False: no model yet)."""
        if self.conversation is None:
            self.notify("No model is loaded yet: the effort can be set once it is.", severity="warning")
            return False
        self.conversation.effort = effort
        self.status.effort = self.conversation.effort
        self.notify(f"Reasoning effort: {effort} (from the next turn on)")
        return True

    def action_toggle_debug(self) -> None:
        """Show or hide the raw analysis and the token inspector (whatever the reasoning mode)."""
        debug = not self.has_class("-debug")
        self.set_class(debug, "-debug")
        self.status.debug = debug
        if debug:
            for turn in self.query(AssistantTurn):
                turn.show_analysis()
            self.inspector.shown()

    async def clear_view(self) -> None:
        """Stop any generation and empty the conversation view (the conversation itself stays)."""
        if self.generating:
            self.action_stop()
            await self.workers.wait_for_complete([w for w in self.workers if w.group == "generation"])
        await self.log_view.remove_children()
        release_removed_widgets(self.log_view)
        release()
        if self.waiting is not None:  # a message waiting for the model goes back to the prompt
            (text, _), self.waiting = self.waiting, None
            self.prompt.give_back(text)
        self.exchanges.clear()
        self.current_turn = None
        self.inspector.clear()
        self.status.context_used = 0

    async def action_new_chat(self) -> None:
        """Start a new conversation (stopping any generation first), at the configured effort.

        The effort chosen with ``ctrl+r`` or ``/effort`` is the current chat's; a new chat starts
        at ``[chat] effort`` (or ``--effort``), as the first one did.
        """
        await self.clear_view()
        if self.conversation is not None:
            self.conversation.new_chat()
            self.conversation.effort = self.chat_app.settings.chat.effort
            self.status.effort = self.conversation.effort
        self.prompt.focus()
