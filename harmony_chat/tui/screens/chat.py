"""The chat screen: conversation, prompt, status bar, token inspector; renders a conversation and asks.

The conversation itself (session, model, effort, history, tools) is a
:class:`~harmony_chat.chat.conversation.ChatConversation`. The screen composes the widgets,
routes the messages and renders the events the conversation yields; nothing here edits the
session or writes the history. What runs on the conversation is a collaborator's, built with
what it needs: :class:`~harmony_chat.tui.turn_controller.TurnController` (a turn's start, stop
and end, and every worker on the conversation, one at a time),
:class:`~harmony_chat.tui.screens.loading.ModelLoader` (loads, the message waiting for one, a
failed one), :class:`~harmony_chat.tui.screens.history_flow.HistoryFlow` (the history picker,
continuing a stored conversation, edit and regenerate),
:class:`~harmony_chat.tui.screens.tooling.ChatTools` (tools, and what the status bar says of them),
:class:`~harmony_chat.tui.screens.approving.ApprovalFlow` (the approval modal) and
:class:`~harmony_chat.preferences.Preferences` (what a choice saves to the config file). What
exchanges the view shows is the :class:`~harmony_chat.tui.widgets.chat_log.ChatLog`'s.

What the status bar shows is one value, :class:`~harmony_chat.tui.status.StatusState`, held in
``status_state``, changed with ``replace`` and bound to the bar (``data_bind``). The reasoning
mode, debug mode and state the screen exposes are that value's; the effort has one home, the
conversation's (the screen reads it, the status value follows it).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual import getters, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import var
from textual.screen import Screen
from textual.widget import MountError

from harmony_chat.chat.events import ApprovalRequested, Notice, ToolFinished
from harmony_chat.chat.model_source import DemoReplay
from harmony_chat.collector import release, settle
from harmony_chat.generation.turn import PromptReady
from harmony_chat.harmony.effort import Effort, next_effort, parse_effort
from harmony_chat.harmony.visibility import ReasoningMode
from harmony_chat.preferences import NotSaved, Preferences
from harmony_chat.tui.bindings import SCREEN_KEYS
from harmony_chat.tui.messages import (
    ConversationFailed,
    ConversationOpened,
    LastMessageTaken,
    ModelFailed,
    ModelLoading,
    ModelReady,
    ModelsFound,
    ToolNotice,
    ToolsReady,
    TurnDone,
    TurnEvents,
)
from harmony_chat.tui.screens.approving import ApprovalFlow, decline
from harmony_chat.tui.screens.history_flow import HistoryFlow
from harmony_chat.tui.screens.loading import ModelLoader
from harmony_chat.tui.screens.reasoning import MODE_HELP, known_mode, next_mode, switch_summarizer
from harmony_chat.tui.screens.tooling import SERVERS_REFRESH_S, ChatTools, serving_status
from harmony_chat.tui.slash import SlashCommand, SlashError, parse_slash
from harmony_chat.tui.status import StatusState, with_figures
from harmony_chat.tui.themes import choose_theme
from harmony_chat.tui.turn_controller import Operation, TurnController
from harmony_chat.tui.widgets.chat_log import ChatLog
from harmony_chat.tui.widgets.inspector import TokenInspector
from harmony_chat.tui.widgets.prompt import PromptInput
from harmony_chat.tui.widgets.status_bar import StatusBar
from harmony_chat.tui.widgets.turn import AssistantTurn, UserMessage, code_blocks
from harmony_chat.tui.widgets.welcome import WelcomePanel, replay_hint

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.factory import BackendFactory, LoadedModel
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.history.store import HistoryStore


class ChatScreen(Screen[None]):
    """Where the conversation happens.

    Args:
        options: the model, chat and tool settings (the model switch changes its model source).
        preferences: what the user's choices save to the config file.
        backend_factory: builds the backend from the options.
        history: where conversations are stored (None: nothing is stored).
        history_off: why there is no history although one was wanted (the status bar says so).
        resume: a conversation to continue once the model is ready (``"pick"``: ask which).
        debug: start in debug mode.
        cursor_blink: blink the prompt's cursor.
        approval_clock: the clock of the approval modal's typing guard (tests pass one they move).
    """

    BINDINGS = [key.binding() for key in SCREEN_KEYS]
    DEFAULT_CSS = """
    ChatScreen #chat-log { height: 1fr; padding: 0 1; }
    ChatScreen #main { height: 1fr; }
    ChatScreen.-debug .analysis, ChatScreen.-reasoning-raw .analysis { display: block; }
    ChatScreen.-reasoning-summary .reasoning-summary { display: block; }
    ChatScreen.-debug #inspector { display: block; }
    """

    status_state: var[StatusState] = var(StatusState())
    """What the status bar shows (bound to it); the reasoning mode, debug mode and state are its."""

    log_view = getters.query_one("#chat-log", ChatLog)
    """The scrolling conversation: the exchanges it shows."""
    status = getters.query_one(StatusBar)
    """The status bar."""
    inspector = getters.query_one(TokenInspector)
    """The debug token inspector."""
    prompt = getters.query_one(PromptInput)
    """The prompt."""

    def __init__(
        self,
        options: ChatOptions,
        preferences: Preferences,
        *,
        backend_factory: BackendFactory,
        history: HistoryStore | None = None,
        history_off: str | None = None,
        resume: int | str | None = None,
        debug: bool = False,
        cursor_blink: bool = True,
        approval_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.options = options
        self.preferences = preferences
        self.history_off = history_off
        self.start_debug = debug
        self.cursor_blink = cursor_blink
        self.conversation: ChatConversation | None = None
        """The conversation shown (None until a model is loaded)."""
        self.loaded_model: LoadedModel | None = None
        """The model the conversation runs on (a summarizer is made for it)."""
        self.tools = ChatTools(options, preferences, self.post_message)
        self.turns = TurnController(self.post_message, self._run_worker)
        self.loader = ModelLoader(options, backend_factory, history, self.post_message, self.turns.serial)
        self.history_flow = HistoryFlow(
            history,
            history_off,
            resume,
            self.turns,
            conversation=lambda: self.conversation,
            log=lambda: self.log_view,
            notify=self.notify,
            push_picker=lambda picker, chosen: self.app.push_screen(picker, chosen),
            start_turn=self.start_turn,
        )
        self.approvals = ApprovalFlow(
            lambda modal, answered: self.app.push_screen(modal, answered),
            approval_clock,
            lambda key: self.prompt.type_ahead(key),  # keys typed as the modal opens go on into the prompt
            self.action_stop,
            self.tools.save_always,
        )
        self.batch_lags: deque[float] = deque(maxlen=10000)
        """Seconds between a batch's posting and its rendering (the TUI benchmark reads them)."""
        self.visits_before = 0
        """How many searches and pages the browser had made before the current turn."""

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        with Horizontal(id="main"):
            yield ChatLog(id="chat-log")
            yield TokenInspector()
        yield PromptInput(cursor_blink=self.cursor_blink)
        yield StatusBar(id="status").data_bind(ChatScreen.status_state)

    def _run_worker(self, work: Callable[[], None], group: str, description: str) -> None:
        """Run ``work`` in a worker thread of ``group`` (exclusive: it cancels the group's running one)."""
        self.run_worker(work, thread=True, exclusive=True, exit_on_error=False, group=group, description=description)

    def on_mount(self) -> None:
        """Start loading (and the tools) after the first paint."""
        self.status_state = replace(
            self.status_state,
            effort=self.effort,  # the configured effort, until a conversation exists and says
            history_off=self.history_off is not None,
            reasoning=self.options.settings.ui.reasoning,
            debug=self.start_debug,
        )
        self.set_interval(0.25, self._tick)
        self.set_interval(1.0, self.refresh_tool_count)
        self.refresh_servers()
        self.set_interval(SERVERS_REFRESH_S, self.refresh_servers)
        self.prompt.focus()
        for notice in self.options.settings.notices:  # how the config was written (a key read at its old place)
            self.notify(notice, title="Config", severity="warning", timeout=15, markup=False)
        self.call_after_refresh(self.load)
        self.call_after_refresh(self.start_tools)
        self.call_after_refresh(settle, collect=False)  # the first paint: freeze startup's objects, quickly

    def on_unmount(self) -> None:
        """Stop a running turn (a question it waits on is denied); hand everything frozen back (``collector.py``)."""
        self.turns.stop()
        release()

    # -- what the screen shows ---------------------------------------------------------------------

    @property
    def effort(self) -> Effort:
        """The reasoning effort of the next turn: the conversation's (the configured one until a model is loaded)."""
        return self.conversation.effort if self.conversation is not None else self.options.settings.chat.effort

    @effort.setter
    def effort(self, effort: Effort) -> None:
        if self.conversation is not None:
            self.conversation.effort = effort
        self.show_effort()

    def show_effort(self) -> None:
        """Show the conversation's effort (after it may have changed: a new conversation, a resumed one)."""
        self.status_state = replace(self.status_state, effort=self.effort)

    @property
    def reasoning(self) -> ReasoningMode:
        """What the chat shows of the reasoning: ``hidden``, ``summary`` or ``raw``."""
        return self.status_state.reasoning

    @reasoning.setter
    def reasoning(self, mode: ReasoningMode) -> None:
        self.status_state = replace(self.status_state, reasoning=mode)

    @property
    def debug(self) -> bool:
        """Debug mode: the raw analysis and the token inspector shown, whatever the reasoning mode."""
        return self.status_state.debug

    @debug.setter
    def debug(self, debug: bool) -> None:
        self.status_state = replace(self.status_state, debug=debug)

    @property
    def state(self) -> str:
        """What the chat is doing (``idle``, ``loading``, ``thinking``, ``answering``, ``error``, ...)."""
        return self.status_state.state

    @state.setter
    def state(self, state: str) -> None:
        self.status_state = replace(self.status_state, state=state)

    @property
    def generating(self) -> bool:
        """Whether a turn is under way."""
        return self.turns.generating

    @property
    def current_turn(self) -> AssistantTurn | None:
        """The answer being generated, or the last one generated (None once it is removed or the view cleared)."""
        return self.log_view.current_turn

    @property
    def turn_done_at(self) -> float:
        """``time.monotonic()`` when the last turn finished rendering (the TUI benchmark reads it)."""
        return self.turns.turn_done_at

    def watch_status_state(self, old: StatusState, new: StatusState) -> None:
        """Show the reasoning and the debug view as the status value says, when they change."""
        if new.reasoning != old.reasoning:
            self._show_reasoning(new.reasoning)
        if new.debug != old.debug:
            self._show_debug(new.debug)

    def _show_reasoning(self, mode: ReasoningMode) -> None:
        """Show the reasoning as ``mode`` says, in every turn; summaries are written from the next turn on."""
        self.set_class(mode == "summary", "-reasoning-summary")
        self.set_class(mode == "raw", "-reasoning-raw")
        if mode == "raw":
            for turn in self.query(AssistantTurn):
                turn.show_analysis()
        self.attach_summarizer()

    def _show_debug(self, debug: bool) -> None:
        """Show or hide the raw analysis and the token inspector."""
        self.set_class(debug, "-debug")
        if debug:
            for turn in self.query(AssistantTurn):
                turn.show_analysis()
            self.inspector.shown()

    # -- loading a model ---------------------------------------------------------------------------

    def load(self) -> None:
        """Load the configured model in a worker thread (beside the welcome panel for the pocket model).

        The conversation on the previous model, if any, is let go: its model is closed, and the
        new conversation keeps its effort.
        """
        load_id = self.loader.begin()
        self.status_state = replace(self.status_state, state="loading", model="loading model…")
        previous, self.conversation = self.conversation, None
        self._load_worker(load_id, previous)
        if self.options.uses_pocket:
            self._find_models(None, load_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="load", description="Loading the model")
    def _load_worker(self, load_id: int, previous: ChatConversation | None) -> None:
        self.loader.load(load_id, previous)

    @work(thread=True, exclusive=True, exit_on_error=False, group="discover", description="Finding models")
    def _find_models(self, notice: str | None, load_id: int) -> None:
        self.loader.find_models(notice, load_id)

    async def on_model_ready(self, message: ModelReady) -> None:
        """Show the new model and chat on it (a load the user has moved on from since is closed instead)."""
        if not self.loader.is_current(message.load_id):
            stale = message.conversation
            self.run_worker(stale.close if stale else message.model.backend.close, thread=True, group="close-stale")
            return
        info = message.model.info
        pocket = self.options.uses_pocket
        self.status_state = replace(
            self.status_state,
            model=f"{info.name} (pocket demo model)" if pocket else info.name,
            device=info.device,
            context_size=info.context_size,
            state="idle",
        )
        if not pocket:
            for panel in self.query(WelcomePanel):
                await panel.remove()
        if isinstance(self.options.valid_source, DemoReplay) and not self.query("#replay-hint"):
            await self.log_view.mount(replay_hint(), before=0)
        if message.conversation is not None:
            self.conversation = message.conversation
            self.loaded_model = message.model
            self.show_effort()
            self.attach_tools()
            self.attach_summarizer()
        self.prompt.focus()
        waiting = self.loader.ready()
        if waiting is not None and self.conversation is not None:
            await self._send(waiting)
        elif waiting is not None:
            self._give_back_waiting(waiting)
        self.history_flow.model_ready()

    async def on_models_found(self, message: ModelsFound) -> None:
        """Show the welcome panel with what was found (unless another model was chosen since)."""
        if not self.loader.is_current(message.load_id):
            return
        for old in self.query(WelcomePanel):
            await old.remove()
        pocket = self.options.uses_pocket and message.notice is None
        await self.log_view.mount(WelcomePanel(message.models, message.notice, pocket=pocket), before=0)
        if message.notice:
            self.state = "model failed to load"

    def on_model_loading(self, message: ModelLoading) -> None:
        """Show load progress."""
        self.state = f"loading {message.step}/{message.total}: {message.label}"

    def on_model_failed(self, message: ModelFailed) -> None:
        """Show why the model did not load, with the way forward (a waiting message goes back to the prompt)."""
        waiting = self.loader.fail()
        self.status_state = replace(self.status_state, model="no model", state="error")
        self._find_models(message.error, self.loader.load_id)
        if waiting is not None:
            self._give_back_waiting(waiting)
            self.notify("The model did not load, so your message was not sent.", severity="warning")

    async def hold_until_loaded(self, text: str) -> bool:
        """Show a message sent while the model loads; it is sent once the model is ready (False: none loads)."""
        if not self.loader.hold(text, resuming=self.history_flow.resuming):
            return False
        await self.log_view.add_exchange(UserMessage(text))
        self.notify("The model is still loading: your message is sent as soon as it is ready.")
        return True

    def _give_back_waiting(self, text: str) -> None:
        """Take the message that waited for the model out of the view, back into the prompt."""
        self.log_view.remove_last_exchange(keep_user=False)
        self.prompt.give_back(text)

    def switch_model(self, path: Path | None = None, demo: bool = False, replay_demo: bool = False) -> None:
        """Load another model (the pocket model with ``demo``, recordings with ``replay_demo``); new chat."""
        if self.generating:
            self.notify("Stop the answer first (escape).", severity="warning")
            return
        self.loader.choose(path=path, demo=demo, replay_demo=replay_demo)

        async def restart() -> None:
            await self.clear_view()  # clears the old chat and any error panel first
            self.load()  # a new conversation on the new model, at the same effort

        self.app.call_later(restart)

    @on(WelcomePanel.StartDemo)
    def start_demo(self, message: WelcomePanel.StartDemo) -> None:
        """Switch to the pocket model or to the replayed conversations."""
        self.switch_model(demo=not message.replay, replay_demo=message.replay)

    @on(WelcomePanel.LoadModel)
    def load_found(self, message: WelcomePanel.LoadModel) -> None:
        """Load a model the welcome panel found."""
        self.switch_model(path=message.path)

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
            if not await self.run_slash(command):  # it said why; the command stays, to fix or replace
                self.prompt.give_back(message.text, select=True)
            return
        if self.generating:
            self.prompt.give_back(message.text)
            self.notify("Still answering: press escape to stop first.", severity="warning")
            return
        if self.conversation is None:
            if not await self.hold_until_loaded(message.text):
                self.prompt.give_back(message.text)
                notice, severity = self.loader.not_sent_notice()
                self.notify(notice, severity=severity)
            return
        await self.log_view.add_exchange(UserMessage(message.text))
        await self._send(message.text)

    async def run_slash(self, command: SlashCommand) -> bool:
        """Carry out a slash command typed in the prompt; False when it could not (a notice said why)."""
        name, args = command.name, command.args
        if name == "effort":
            return self.set_effort(parse_effort(args[0]))
        if name == "regen":
            return await self.regenerate(parse_effort(args[0]) if args else None)
        if name == "edit":
            return self.edit_last()
        if name == "copy":
            return self.copy_answer(int(args[1]) if len(args) == 2 else (0 if args else None))
        if name == "reasoning":
            return self.set_reasoning(args[0])
        if name == "theme":
            return choose_theme(self.app, self.preferences, args[0])
        if name == "history":
            return self.action_history()
        if name == "tools":
            return self.action_tools()
        if name == "debug":
            self.action_toggle_debug()
        elif name == "new":
            await self.action_new_chat()
        elif name == "help":
            await self.run_action("app.help")
        return True

    async def _send(self, text: str) -> None:
        """Send ``text``, shown as the last exchange's message, on the conversation."""
        conversation = self.conversation
        assert conversation is not None
        await self.start_turn(lambda should_stop: conversation.send(text, should_stop))

    async def start_turn(self, operation: Operation, effort: Effort | None = None) -> None:
        """Show a new assistant turn and have the turn controller run ``operation`` for it."""
        from harmony_chat.tui.browsing import visits

        conversation = self.conversation
        assert conversation is not None
        self.attach_tools()
        self.attach_summarizer()
        turn_id = self.turns.begin()
        self.visits_before = len(visits(conversation))
        self.status_state = replace(self.status_state, summary_tokens=0, summary_seconds=0.0)
        turn = AssistantTurn(turn_id, effort or conversation.effort, conversation.citation_sources)
        await self.log_view.add_answer(turn)
        self.turns.start(conversation, operation, turn_id)
        self.state = "thinking"
        self.refresh_bindings()

    @property
    def exiting(self) -> bool:
        """Whether the app is exiting: turns still streaming are recorded, no longer drawn."""
        return self.app.return_code is not None

    async def on_turn_events(self, message: TurnEvents) -> None:
        """Render a batch of events of the current turn, then let the worker send the next one.

        Once the app is exiting nothing more is drawn (the worker still records the turn): the
        screen's widgets are being removed, and drawing into them failed.
        """
        try:
            if not self.exiting:
                await self._render_events(message)
        except MountError:
            if not self.exiting:  # the app began exiting while this batch was drawn
                raise
        finally:
            message.handled.set()
            if self.exiting:
                decline(message.events)

    async def _render_events(self, message: TurnEvents) -> None:
        turn = self.current_turn
        if turn is None or message.turn_id != turn.turn_id:
            decline(message.events)  # a superseded turn's question is not shown: nobody could answer it
            return
        self.batch_lags.append(time.monotonic() - message.posted_at)
        await turn.apply(message.events)
        self.inspector.record(message.events)
        for event in message.events:
            self.status_state = with_figures(self.status_state, event)
            if isinstance(event, PromptReady) and self.conversation is not None:
                self.inspector.set_prompt(self.conversation.session.encoding.decode(event.prompt.tokens))
            elif isinstance(event, Notice):
                self.notify(event.text, severity="warning" if event.severity == "warning" else "information")
            elif isinstance(event, ToolFinished) and event.name.startswith("browser.") and self.conversation:
                from harmony_chat.tui.browsing import visits

                await turn.show_visits(visits(self.conversation)[self.visits_before :])
            elif isinstance(event, ApprovalRequested):
                self.approvals.ask(event)
        if self.turns.stopping:
            return
        if self.approvals.open is not None:
            self.state = "waiting for approval"
        elif turn.tool_running:
            self.state = "running a tool"
        elif turn.summarising:
            self.state = "summarising the reasoning"
        elif turn.stop_reason is None:
            self.state = "thinking" if turn.thinking else "answering"

    async def on_turn_done(self, message: TurnDone) -> None:
        """Close the turn; once its end is on screen, collect and freeze for the collector (``collector.py``)."""
        await self._close_turn(message)
        self.call_after_refresh(settle)

    async def _close_turn(self, message: TurnDone) -> None:
        """Close the turn; show an error, giving the user's words back if nothing was generated."""
        if not self.turns.finish(message.turn_id):
            return  # a superseded turn: the current one goes on
        self.approvals.close()
        self.state = "idle"
        self.refresh_bindings()
        turn = self.current_turn
        if turn is None or message.turn_id != turn.turn_id:
            return
        if message.error and message.no_output:
            self.log_view.remove_last_exchange(keep_user=False)
            if message.given_back is not None:
                self.prompt.give_back(message.given_back)
            self.notify(message.error, title="Not sent", severity="error", timeout=8)
            return
        await turn.close(stopped=self.turns.stopping)
        if message.error:
            await turn.show_error(message.error)
            self.state = "error"
        elif self.conversation is not None:
            self.turns.prefill(self.conversation)

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
        self.turns.stop()
        self.approvals.close()
        self.state = "stopping"

    def action_cycle_effort(self) -> None:
        """Cycle the reasoning effort of the next turn."""
        if self.conversation is not None:
            self.set_effort(next_effort(self.effort))
        else:
            self.notify("No model is loaded yet: the effort can be set once it is.", severity="warning")

    def set_effort(self, effort: Effort) -> bool:
        """Set the reasoning effort of the next turn (False: no model yet)."""
        if self.conversation is None:
            self.notify("No model is loaded yet: the effort can be set once it is.", severity="warning")
            return False
        self.effort = effort
        self.notify(f"Reasoning effort: {effort} (from the next turn on)")
        return True

    def action_toggle_debug(self) -> None:
        """Show or hide the raw analysis and the token inspector (whatever the reasoning mode)."""
        self.debug = not self.debug

    def set_reasoning(self, name: str) -> bool:
        """Switch the reasoning mode (``hidden``, ``summary`` or ``raw``) and save it (``[ui] reasoning``).

        Returns False for an unknown mode (a notice says so); a mode that could not be saved still switched.
        """
        mode = known_mode(name)
        if mode is None:
            self.notify(f"Unknown reasoning mode {name!r}: use hidden, summary or raw.", severity="error")
            return False
        self.reasoning = mode
        when = " from the next turn on" if mode == "summary" and self.generating else ""
        self.notify(f"Reasoning: {mode}: {MODE_HELP[mode]}{when}.")
        try:
            self.preferences.choose_reasoning(mode)
        except NotSaved as error:
            self.notify(f"Reasoning mode not saved: {error}", severity="warning")
        return True

    def action_cycle_reasoning(self) -> None:
        """Switch to the next reasoning mode: hidden → summary → raw (saved)."""
        self.set_reasoning(next_mode(self.reasoning))

    def attach_summarizer(self) -> None:
        """Give the conversation a summarizer in summary mode, none otherwise (between turns only)."""
        if self.conversation is not None and not self.generating:
            switch_summarizer(self.conversation, self.reasoning, self.options, self.loaded_model)

    async def clear_view(self) -> None:
        """Stop any generation and empty the conversation view (the conversation itself stays)."""
        if self.generating:
            self.action_stop()
            await self.workers.wait_for_complete([w for w in self.workers if w.group == "generation"])
        await self.log_view.clear()
        waiting = self.loader.take_waiting()
        if waiting is not None:  # a message waiting for the model goes back to the prompt
            self.prompt.give_back(waiting)
        self.inspector.clear()
        self.status_state = replace(self.status_state, context_used=0)

    async def action_new_chat(self) -> None:
        """Start a new conversation (stopping any generation first), at the configured effort.

        The effort chosen with ``ctrl+r`` or ``/effort`` is the current chat's; a new chat starts
        at ``[chat] effort`` (or ``--effort``), as the first one did.
        """
        await self.clear_view()
        if self.conversation is not None:
            self.conversation.new_chat()
            self.effort = self.options.settings.chat.effort
        self.prompt.focus()

    # -- the conversation after the fact: history, regenerate, edit, copy -------------------------

    def action_history(self) -> bool:
        """Open the history to continue, search, rename or delete a past conversation (False: it cannot now)."""
        return self.history_flow.pick()

    def on_conversation_failed(self, message: ConversationFailed) -> None:
        """Say why a conversation could not be opened or changed."""
        self.history_flow.failed(message)

    async def on_conversation_opened(self, message: ConversationOpened) -> None:
        """Show the stored conversation the chat now continues."""
        stored, chat = message.stored, message.conversation
        if chat is not self.conversation:
            return
        await self.clear_view()
        await self.log_view.show_stored(stored, chat.effort)
        self.show_effort()
        self.notify(f"Continuing conversation #{stored.id} at effort {chat.effort}: {stored.title}", markup=False)

    async def regenerate(self, effort: Effort | None = None) -> bool:
        """Generate the last answer again, optionally at another effort (False: nothing to regenerate)."""
        return await self.history_flow.regenerate(effort)

    def edit_last(self) -> bool:
        """Put the last user message back into the prompt (its answer is removed); False: nothing to edit."""
        return self.history_flow.edit_last()

    def on_last_message_taken(self, message: LastMessageTaken) -> None:
        """Put the taken-back message into the prompt."""
        if message.text is not None:
            self.prompt.give_back(message.text)
            self.prompt.focus()

    def last_answer(self) -> str:
        """The last turn's final answer ('' if it has none, as when it was stopped before answering)."""
        turn = self.log_view.last_turn
        return turn.final_text if turn is not None else ""

    def copy_answer(self, code_block: int | None = None) -> bool:
        """Copy the last answer (its citations as footnotes), or one of its code blocks (1-based; 0: the last).

        Returns False when there is nothing to copy (a notice says so).
        """
        turn = self.log_view.last_turn
        answer = turn.copy_text() if turn is not None else ""
        if code_block is not None:
            answer = self.last_answer()
            blocks = code_blocks(answer)
            if not blocks or code_block > len(blocks):
                self.notify("The last answer has no such code block.", severity="warning")
                return False
            answer = blocks[code_block - 1 if code_block else -1]
        if not answer:
            self.notify("The last turn has no answer to copy.", severity="warning")
            return False
        self.app.copy_to_clipboard(answer)
        self.notify("Copied to the clipboard.")
        return True

    # -- tools ----------------------------------------------------------------------------------

    def start_tools(self) -> None:
        """Start the configured tools in a worker (nothing to do when none is configured)."""
        if self.tools.configured:
            self.status_state = self.tools.status_starting(self.status_state)
            self._start_tools_worker()

    @work(thread=True, exclusive=True, exit_on_error=False, group="tools", description="Starting the tools")
    def _start_tools_worker(self) -> None:
        self.tools.start()

    def on_tools_ready(self, message: ToolsReady) -> None:
        """Offer the tools to the model from the next turn on."""
        warning = self.tools.take(message)
        if self.tools.closed:
            return
        if warning:
            self.notify(warning, title="Tools", severity="warning", timeout=10)
        self.attach_tools()
        self.refresh_tool_count()

    def attach_tools(self) -> None:
        """Hand the tool runner to the conversation (between turns only)."""
        if self.conversation is not None and not self.generating:
            self.tools.attach(self.conversation)

    def on_tool_notice(self, message: ToolNotice) -> None:
        """A server failed to start or stopped: say so once, naming it."""
        self.notify(message.text, title="Tools", severity="warning", timeout=10, markup=False)
        self.refresh_tool_count()

    def refresh_tool_count(self) -> None:
        """Show how many tools the model has, and how many servers failed."""
        self.status_state = self.tools.status(self.status_state)

    def refresh_servers(self) -> None:
        """Show the ``harmony-chat serve`` processes running on this machine (a folder of small files)."""
        from harmony_chat.server.registry import running_servers

        self.status_state = serving_status(self.status_state, running_servers())

    def action_tools(self) -> bool:
        """Open the list of tool servers and their tools (switch a server off or on); False: none configured."""
        from harmony_chat.tui.screens.tools import ToolsScreen

        if not self.tools.configured:
            self.notify("No tools are configured: add [mcp.servers.NAME] to the config file.", severity="warning")
            return False
        self.app.push_screen(ToolsScreen(self.tools.providers), lambda _: self.refresh_tool_count())
        return True
