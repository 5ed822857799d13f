"""The chat screen: conversation, prompt, status bar, token inspector; owns the worker threads."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget

from harmony_chat.backends.base import ModelBackend
from harmony_chat.errors import HarmonyChatError
from harmony_chat.harmony.effort import Effort, next_effort, parse_effort
from harmony_chat.harmony.turn import PromptReady, TurnOptions, TurnStats, prefill_next_turn
from harmony_chat.pocket import POCKET_DATE
from harmony_chat.tui.bindings import SCREEN_KEYS
from harmony_chat.tui.messages import ModelReady, TurnDone, TurnEvents
from harmony_chat.tui.render_caches import release_removed_widgets
from harmony_chat.tui.screens.edits import ConversationEdits
from harmony_chat.tui.screens.loading import ModelLoader
from harmony_chat.tui.slash import SlashError, parse_slash
from harmony_chat.tui.widgets.inspector import TokenInspector
from harmony_chat.tui.widgets.prompt import PromptInput
from harmony_chat.tui.widgets.status_bar import StatusBar
from harmony_chat.tui.widgets.transcript import Transcript
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage
from harmony_chat.tui.widgets.welcome import WelcomePanel

if TYPE_CHECKING:  # openai-harmony loads in the workers, after the first paint
    from openai_harmony import HarmonyEncoding

    from harmony_chat.harmony.session import ChatSession
    from harmony_chat.history.link import ConversationLink
    from harmony_chat.history.recording import TurnRecorder


class ChatScreen(ModelLoader, ConversationEdits):
    """Where the conversation happens."""

    BINDINGS = [key.binding() for key in SCREEN_KEYS]
    DEFAULT_CSS = """
    ChatScreen #chat-log { height: 1fr; padding: 0 1; }
    ChatScreen #main { height: 1fr; }
    ChatScreen.-debug .analysis { display: block; }
    ChatScreen.-debug #inspector { display: block; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.session: ChatSession | None = None
        self.backend: ModelBackend | None = None
        self.generating = False
        self.turn_id = 0
        self.current_turn: AssistantTurn | None = None
        self.exchanges: list[list[Widget]] = []
        self._stop = threading.Event()
        self.batch_lags: deque[float] = deque(maxlen=10000)
        """Seconds between a batch's posting and its rendering (the TUI benchmark reads them)."""
        self.link: ConversationLink | None = None
        """The stored conversation this chat writes to (None when history is off)."""
        self.turn_done_at = 0.0
        """``time.monotonic()`` when the last turn finished rendering."""
        self.load_id = 0
        """Counts model loads; what an earlier load or its welcome panel reports late is ignored."""

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
    def effort_shown(self) -> Effort:
        """The effort the status bar shows: the one the next turn runs at."""
        return parse_effort(self.status.effort)

    @property
    def inspector(self) -> TokenInspector:
        """The debug token inspector."""
        return self.query_one(TokenInspector)

    @property
    def prompt(self) -> PromptInput:
        """The prompt."""
        return self.query_one(PromptInput)

    def on_mount(self) -> None:
        """Start loading after the first paint, or show the welcome panel."""
        launch = self.chat_app.launch
        self.status.effort = launch.effort
        self.status.history_off = self.chat_app.history_off is not None
        self.set_interval(0.25, self._tick)
        self.prompt.focus()
        if self.chat_app.start_in_debug:
            self.action_toggle_debug()
        self.call_after_refresh(self.load)

    # -- a model is ready ----------------------------------------------------------------

    async def on_model_ready(self, message: ModelReady) -> None:
        """Start a chat on the new model."""
        from harmony_chat.harmony.vocab import load_encoding

        info = message.info
        pocket = self.chat_app.launch.uses_pocket
        self.status.model = f"{info.name} (pocket demo model)" if pocket else info.name
        self.status.device, self.status.context_size = info.device, info.context_size
        self.status.state = "idle"
        if not pocket:
            for panel in self.query(WelcomePanel):
                await panel.remove()
        if self.session is None:
            self.session = self._new_session(load_encoding(), info.context_size)
        else:
            self.session.context_size = info.context_size
        self.prompt.focus()
        resume, self.chat_app.resume = self.chat_app.resume, None
        if resume == "pick":
            self.action_history()
        elif isinstance(resume, int):
            await self.open_conversation(resume)

    def _new_session(self, encoding: HarmonyEncoding, context_size: int | None) -> ChatSession:
        from harmony_chat.harmony.session import ChatSession

        launch = self.chat_app.launch
        date = POCKET_DATE if launch.uses_pocket else launch.start_date
        return ChatSession(
            encoding,
            effort=parse_effort(launch.effort),
            instructions=launch.instructions,
            context_size=context_size,
            start_date=date,
        )

    # -- sending and generating ---------------------------------------------------------------

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        """Send a message, or run a slash command; what cannot be sent goes back into the prompt."""
        try:
            command = parse_slash(message.text)
        except SlashError as error:
            self.prompt.give_back(message.text)
            self.notify(str(error), severity="error")
            return
        if command is not None:
            await self.chat_app.run_slash(command)
            return
        if self.generating:
            self.prompt.give_back(message.text)
            self.notify("Still answering: press escape to stop first.", severity="warning")
            return
        if self.session is None or self.backend is None:
            self.prompt.give_back(message.text)
            self.notify("No model is loaded yet.", severity="warning")
            return
        self.session.add_user(message.text)
        if self.link is None and self.chat_app.history is not None:
            from harmony_chat.history.link import ConversationLink

            self.link = ConversationLink(self.chat_app.history)
        if self.link is not None:
            try:
                self.link.record_user(self.session, message.text, self.status.model)
            except (HarmonyChatError, OSError, sqlite3.Error) as error:
                self.notify(f"Not saved to the history: {error}", severity="warning")
        user = UserMessage(message.text)
        await self.log_view.mount(user)
        self.exchanges.append([user])
        await self.start_turn()

    async def start_turn(self, effort: Effort | None = None) -> None:
        """Start generating the assistant's answer to the conversation as it stands."""
        assert self.session is not None and self.backend is not None
        self.turn_id += 1
        effort = effort or self.session.effort
        turn = AssistantTurn(self.turn_id, effort)
        self.current_turn = turn
        await self.log_view.mount(turn)
        self.exchanges[-1].append(turn)
        self.log_view.anchor()
        self._stop.clear()
        self.generating = True
        self.status.state = "thinking"
        self.refresh_bindings()
        options = TurnOptions(sampling=self.chat_app.launch.sampling, effort=effort)
        recorder = None
        if self.link is not None:
            try:
                recorder = self.link.recorder(self.status.model, effort)
            except (HarmonyChatError, OSError, sqlite3.Error) as error:
                self.notify(f"Not saved to the history: {error}", severity="warning")
        self._generate(self.session, self.backend, options, self.turn_id, recorder)

    @work(thread=True, exclusive=True, exit_on_error=False, group="generation", description="Generating")
    def _generate(
        self,
        session: ChatSession,
        backend: ModelBackend,
        options: TurnOptions,
        turn_id: int,
        recorder: TurnRecorder | None,
    ) -> None:
        from textual.worker import get_current_worker

        from harmony_chat.tui.generation import run_generation

        worker = get_current_worker()

        def should_stop() -> bool:
            # Textual cancels every worker when the app exits (ctrl+q): stop within a token, so the
            # process ends at once and the history records the partial answer as stopped.
            return self._stop.is_set() or worker.is_cancelled

        run_generation(session, backend, options, turn_id, should_stop, self.post_message, recorder)

    async def on_turn_events(self, message: TurnEvents) -> None:
        """Render a batch of events of the current turn, then let the worker send the next one."""
        try:
            await self._render_events(message)
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
            if isinstance(event, PromptReady) and self.session is not None:
                self.inspector.set_prompt(self.session.encoding.decode(event.prompt.tokens))
                self.status.context_used = len(event.prompt.tokens)
            elif isinstance(event, TurnStats):
                figures = event.stats
                self.status.ttft, self.status.speed = figures.ttft_s, figures.decode_tokens_per_s
                self.status.context_used = figures.prompt_tokens + figures.generated_tokens
        if turn.stop_reason is None:
            self.status.state = "thinking" if turn.thinking else "answering"

    async def on_turn_done(self, message: TurnDone) -> None:
        """Close the turn; show an error, giving the user's words back if nothing was generated."""
        self.generating = False
        self.turn_done_at = time.monotonic()
        if message.history_error:
            self.notify(message.history_error, severity="warning")
        self.status.state = "idle"
        self.refresh_bindings()
        turn = self.current_turn
        if message.error and turn is not None and message.turn_id == turn.turn_id:
            if message.no_output and self.session is not None and self.exchanges:
                text = self._drop_last_exchange(keep_user=False)
                if text is not None:
                    self.prompt.give_back(text)
                self.notify(message.error, title="Not sent", severity="error", timeout=8)
            else:
                await turn.show_error(message.error)
                self.status.state = "error"
        elif not message.error and self.session is not None and self.backend is not None:
            self._prefill(self.session, self.backend)

    @work(thread=True, exclusive=True, exit_on_error=False, group="prefill", description="Preparing the next turn")
    def _prefill(self, session: ChatSession, backend: ModelBackend) -> None:
        """Evaluate the history the next prompt will show, while the user reads (see ``prefill_next_turn``)."""
        prefill_next_turn(session, backend)

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
        """Stop generating; the partial answer stays, marked as stopped."""
        self._stop.set()
        self.status.state = "stopping"

    def action_cycle_effort(self) -> None:
        """Cycle the reasoning effort of the next turn."""
        self.set_effort(next_effort(self.session.effort if self.session else parse_effort(self.status.effort)))

    def set_effort(self, effort: Effort) -> None:
        """Set the reasoning effort of the next turn."""
        if self.session is not None:
            self.session.effort = effort
        self.chat_app.launch.effort = effort
        self.status.effort = effort
        self.notify(f"Reasoning effort: {effort} (from the next turn on)")

    def action_toggle_debug(self) -> None:
        """Show or hide analysis and the token inspector."""
        debug = not self.has_class("-debug")
        self.set_class(debug, "-debug")
        self.status.debug = debug
        if debug:
            for turn in self.query(AssistantTurn):
                turn.show_analysis()
            self.inspector.shown()

    async def action_new_chat(self) -> None:
        """Start a new conversation (stopping any generation first)."""
        if self.generating:
            self._stop.set()
            await self.workers.wait_for_complete()
        await self.log_view.remove_children()
        release_removed_widgets(self.log_view)
        self.exchanges.clear()
        self.current_turn = None
        self.inspector.clear()
        if self.session is not None:
            self.session = self._new_session(self.session.encoding, self.session.context_size)
        self.link = None
        self.status.context_used = 0
        self.prompt.focus()
