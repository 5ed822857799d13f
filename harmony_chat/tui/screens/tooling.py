"""Tools from the chat screen: starting them, asking the user before a call, their state, ``/tools``.

The tool providers start in a worker after the first paint (importing the MCP SDK takes about a
second); their notices arrive on the toolbox's own thread and are handed to the UI as messages.
The conversation core asks for approval on the generation worker: :meth:`ToolControl.approve`
posts the question to the screen and blocks that worker until the modal answers, while it keeps
polling the turn's stop flag, so stopping the turn also closes the modal (as a denial). Keys the
user types as the modal opens go on into the prompt (:meth:`ToolControl.type_ahead`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import events, work
from textual.screen import Screen

from harmony_chat.chat.approval import Choice, Decision, ToolReview
from harmony_chat.config import ConfigError, save_config_value
from harmony_chat.tui.messages import (
    ApprovalAnswer,
    ApprovalNeeded,
    ApprovalWithdrawn,
    ToolNotice,
    ToolsReady,
)
from harmony_chat.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.tools.base import ToolProvider
    from harmony_chat.tui.app import HarmonyChatApp
    from harmony_chat.tui.generation import GenerationRun
    from harmony_chat.tui.screens.approval import ApprovalScreen
    from harmony_chat.tui.widgets.prompt import PromptInput
    from harmony_chat.tui.widgets.turn import AssistantTurn

WAIT_POLL_S = 0.05
"""How often a worker waiting for the user's answer checks whether the turn was stopped."""
STOPPED_REASON = "the user stopped the turn"


SERVERS_REFRESH_S = 3.0
"""How often the status bar looks for running ``harmony-chat serve`` processes."""


def server_label(host: str, port: int) -> str:
    """How the status bar names a server: ``:8000`` on loopback, ``HOST:PORT`` when others can reach it."""
    return f":{port}" if host in ("127.0.0.1", "localhost", "::1") else f"{host}:{port}"


def remember_always(path: Path, key: str) -> None:
    """Add ``key`` to ``[tools] always`` in the config file, keeping the keys already there.

    Raises:
        ConfigError: when the file is not valid TOML.
        OSError: when it cannot be read or written.
    """
    existing: list[str] = []
    if path.exists():
        try:
            tools = tomllib.loads(path.read_text(encoding="utf-8")).get("tools")
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"config file {path}: {error}") from error
        value = tools.get("always") if isinstance(tools, dict) else None
        existing = [str(item) for item in value] if isinstance(value, list) else []
    if key not in existing:
        save_config_value(path, "tools", "always", [*existing, key])


class TurnContext:
    """What the approver needs from the running turn: its id, its event stream and its stop flag."""

    def __init__(self, turn_id: int, run: GenerationRun, should_stop: Callable[[], bool]) -> None:
        self.turn_id = turn_id
        self.run = run
        self.should_stop = should_stop


class ToolControl(Screen[None]):
    """Tools and their approval (mixed into the chat screen)."""

    conversation: ChatConversation | None
    generating: bool
    current_turn: AssistantTurn | None

    def __init__(self) -> None:
        super().__init__()
        self.tool_runner: ToolRunner | None = None
        """Runs the model's calls (None until the tools have started, or with none configured)."""
        self.tool_providers: list[ToolProvider] = []
        self.turn_context: TurnContext | None = None
        """The running turn (set and read on its worker thread only)."""
        self._approval: tuple[ApprovalScreen, ApprovalAnswer] | None = None

    @property
    def chat_app(self) -> HarmonyChatApp:
        """The app, typed."""
        return cast("HarmonyChatApp", self.app)

    @property
    def status(self) -> StatusBar:
        """The status bar (provided by the chat screen)."""
        raise NotImplementedError

    @property
    def prompt(self) -> PromptInput:
        """The prompt (provided by the chat screen)."""
        raise NotImplementedError

    def action_stop(self) -> None:
        """Stop generating (provided by the chat screen)."""
        raise NotImplementedError

    # -- starting -------------------------------------------------------------------------

    def start_tools(self) -> None:
        """Start the configured tools in a worker (nothing to do when none is configured)."""
        if self.chat_app.options.has_tools:
            self.status.tools_state = "starting"
            self._start_tools_worker()

    @work(thread=True, exclusive=True, exit_on_error=False, group="tools", description="Starting the tools")
    def _start_tools_worker(self) -> None:
        from harmony_chat.chat.factory import start_tools, tool_runner

        options = self.chat_app.options

        def notice(text: str) -> None:  # called on the toolbox's thread: hand it to the UI's
            self.post_message(ToolNotice(text))

        try:
            providers = start_tools(options, notice)
        except Exception as error:  # a bad MCP file, a broken SDK: one notice, the chat goes on
            self.post_message(ToolNotice(f"The tools did not start: {error}"))
            providers = []
        self.post_message(ToolsReady(providers, tool_runner(options, providers, self.approve)))

    def on_tools_ready(self, message: ToolsReady) -> None:
        """Offer the tools to the model from the next turn on."""
        if self.chat_app.shutting_down:
            for provider in message.providers:
                provider.close()
            return
        self.tool_providers = message.providers
        self.tool_runner = message.runner if message.providers or message.runner.tools.builtins else None
        ignored = message.runner.policy.ignored_always()
        if ignored:
            self.notify(
                f"[tools] always: {', '.join(ignored)} ignored: a built-in tool is approved per conversation only.",
                title="Tools",
                severity="warning",
                timeout=10,
            )
        self.attach_tools()
        self.refresh_tool_count()

    def attach_tools(self) -> None:
        """Hand the tool runner to the conversation (between turns only)."""
        if self.conversation is not None and not self.generating and self.conversation.tools is not self.tool_runner:
            self.conversation.tools = self.tool_runner

    def on_tool_notice(self, message: ToolNotice) -> None:
        """A server failed to start or stopped: say so once, naming it."""
        self.notify(message.text, title="Tools", severity="warning", timeout=10, markup=False)
        self.refresh_tool_count()

    def refresh_tool_count(self) -> None:
        """Show how many tools the model has, and how many servers failed."""
        if self.tool_runner is None:
            return
        count, failed, starting = len(self.tool_runner.tools.builtins), 0, 0
        for provider in self.tool_providers:
            servers = getattr(provider, "servers_status", None)
            if servers is None:
                count += len(provider.specs())
                continue
            for server in servers():
                count += server.tool_count if server.state == "ready" else 0
                failed += server.state == "failed"
                starting += server.state == "starting"
        self.status.tool_count, self.status.servers_failed = count, failed
        self.status.tools_state = "starting" if starting else "ready"

    def refresh_servers(self) -> None:
        """Show the ``harmony-chat serve`` processes running on this machine (a folder of small files)."""
        from harmony_chat.server.registry import running_servers

        self.status.serving = " ".join(server_label(server.host, server.port) for server in running_servers())

    def action_tools(self) -> bool:
        """Open the list of tool servers and their tools (switch a server off or on); False: none configured."""
        from harmony_chat.tui.screens.tools import ToolsScreen

        if not self.chat_app.options.has_tools:
            self.notify("No tools are configured: add [mcp.servers.NAME] to the config file.", severity="warning")
            return False
        self.app.push_screen(ToolsScreen(self.tool_providers), lambda _: self.refresh_tool_count())
        return True

    # -- asking ---------------------------------------------------------------------------

    def approve(self, review: ToolReview) -> Decision:
        """(Generation worker) ask the user about a call; block until the answer or a stop."""
        context = self.turn_context
        if context is None:
            return Decision(Choice.DENY, "nobody could be asked")
        context.run.flush()  # the call's row is on screen before the question
        answer = ApprovalAnswer()
        self.post_message(ApprovalNeeded(context.turn_id, review, answer))
        while not answer.wait(WAIT_POLL_S):
            if context.should_stop():
                answer.withdrawn = True
                self.post_message(ApprovalWithdrawn(answer))
                return Decision(Choice.DENY, STOPPED_REASON)
        decision = answer.decision or Decision(Choice.DENY)
        if decision.choice is Choice.ALWAYS_SAVE and review.savable:
            self._save_always(review.key)
        return decision

    def _save_always(self, key: str) -> None:
        path = self.chat_app.settings.path
        if path is None:
            self.post_message(ToolNotice(f"Not saved ({key} is allowed for this session): there is no config file."))
            return
        try:
            remember_always(path, key)
        except (OSError, ConfigError) as error:
            self.post_message(ToolNotice(f"Not saved ({key} is allowed for this session): {error}"))

    def on_approval_needed(self, message: ApprovalNeeded) -> None:
        """Show the approval modal for a call (unless the turn was stopped meanwhile)."""
        from harmony_chat.tui.screens.approval import GUARD_S, ApprovalScreen, TypingGuard

        if message.answer.withdrawn:
            return
        turn = self.current_turn
        if turn is not None and turn.turn_id == message.turn_id:
            turn.tool_asking()
        self.status.state = "waiting for approval"
        guard = TypingGuard(GUARD_S, self.chat_app.approval_clock)
        screen = ApprovalScreen(message.review, guard, self.type_ahead)
        self._approval = (screen, message.answer)

        def answered(decision: Decision | None) -> None:
            self._approval = None
            message.answer.give(decision or Decision(Choice.DENY))
            if screen.stop_requested:
                self.action_stop()

        self.app.push_screen(screen, answered)

    def type_ahead(self, key: events.Key | events.Paste) -> bool:
        """Put a key typed as the approval modal opened (a character, or backspace), or a paste, into the prompt."""
        if isinstance(key, events.Paste):
            self.prompt.insert_pasted(key.text)
            return True
        if key.key == "backspace":
            self.prompt.action_delete_left()
            return True
        if key.is_printable and key.character:
            self.prompt.insert(key.character)
            return True
        return False

    def on_approval_withdrawn(self, message: ApprovalWithdrawn) -> None:
        """The turn was stopped while asking: close the modal as a denial."""
        self.close_approval(message.answer)

    def close_approval(self, answer: ApprovalAnswer | None = None) -> None:
        """Dismiss the open approval modal (the one for ``answer``, if given) as a denial."""
        if self._approval is None or (answer is not None and self._approval[1] is not answer):
            return
        screen, _ = self._approval
        if screen.is_attached:
            screen.pop_until_active()
            screen.dismiss(Decision(Choice.DENY, STOPPED_REASON))

    def close_tools_now(self) -> None:
        """Stop every tool (blocks up to a few seconds; call off the UI thread or at exit)."""
        runner, self.tool_runner, self.tool_providers = self.tool_runner, None, []
        if runner is not None:
            runner.tools.close()
