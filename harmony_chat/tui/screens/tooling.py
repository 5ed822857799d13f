"""The chat's tools: started off the UI thread, handed to the conversation between turns, asked about per call.

:class:`ChatTools` is the chat screen's collaborator for tools. The providers start in a worker
after the first paint (importing the MCP SDK takes about a second); their notices arrive on the
toolbox's own thread and are posted to the screen as messages. The conversation core asks for
approval on the generation worker: :meth:`ChatTools.approve` posts the question to the screen
and blocks that worker until the modal answers, while it keeps polling the turn's stop flag, so
stopping the turn also closes the modal (as a denial). An "always" answer the user wants saved
goes to :class:`~harmony_chat.preferences.Preferences`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from harmony_chat.chat.approval import Choice, Decision, ToolReview
from harmony_chat.preferences import NotSaved, Preferences
from harmony_chat.tui.messages import ApprovalAnswer, ApprovalNeeded, ApprovalWithdrawn, ToolNotice, ToolsReady

if TYPE_CHECKING:
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.tools.base import ToolProvider
    from harmony_chat.tui.generation import GenerationRun

WAIT_POLL_S = 0.05
"""How often a worker waiting for the user's answer checks whether the turn was stopped."""
STOPPED_REASON = "the user stopped the turn"
SERVERS_REFRESH_S = 3.0
"""How often the status bar looks for running ``harmony-chat serve`` processes."""


def server_label(host: str, port: int) -> str:
    """How the status bar names a server: ``:8000`` on loopback, ``HOST:PORT`` when others can reach it."""
    return f":{port}" if host in ("127.0.0.1", "localhost", "::1") else f"{host}:{port}"


class TurnContext:
    """What the approver needs from the running turn: its id, its event stream and its stop flag."""

    def __init__(self, turn_id: int, run: GenerationRun, should_stop: Callable[[], bool]) -> None:
        self.turn_id = turn_id
        self.run = run
        self.should_stop = should_stop


@dataclass(frozen=True, slots=True)
class ToolCount:
    """What the status bar says of the tools."""

    tools: int
    """Tools the model has now."""
    servers_failed: int
    starting: bool
    """Whether a server is still connecting."""


class ChatTools:
    """The chat's tool providers and runner, and the approval of each call.

    Args:
        options: the tool settings (which tools, which approval mode).
        preferences: where an "always, and save it" answer is remembered.
        post: the screen's thread-safe ``post_message`` (questions and notices go through it).
    """

    def __init__(self, options: ChatOptions, preferences: Preferences, post: Callable[[Message], object]) -> None:
        self.options = options
        self.preferences = preferences
        self.post = post
        self.runner: ToolRunner | None = None
        """Runs the model's calls (None until the tools have started, or with none configured)."""
        self.providers: list[ToolProvider] = []
        self.turn: TurnContext | None = None
        """The running turn (set and read on its worker thread only)."""
        self.closed = False
        """Set once the chat is being released: providers that start late are closed at once."""

    @property
    def configured(self) -> bool:
        """Whether any tool is configured."""
        return self.options.has_tools

    # -- starting and stopping ----------------------------------------------------------------

    def start(self) -> None:
        """(Worker) start the configured providers; post :class:`ToolsReady` (a failure is one notice)."""
        from harmony_chat.chat.factory import start_tools, tool_runner

        def notice(text: str) -> None:  # called on the toolbox's thread: hand it to the UI's
            self.post(ToolNotice(text))

        try:
            providers = start_tools(self.options, notice)
        except Exception as error:  # a bad MCP file, a broken SDK: one notice, the chat goes on
            self.post(ToolNotice(f"The tools did not start: {error}"))
            providers = []
        self.post(ToolsReady(providers, tool_runner(self.options, providers, self.approve)))

    def take(self, message: ToolsReady) -> str | None:
        """Keep the started tools (closed at once if the chat is being released); a warning to show, if any."""
        if self.closed:
            for provider in message.providers:
                provider.close()
            return None
        self.providers = message.providers
        self.runner = message.runner if message.providers or message.runner.tools.builtins else None
        ignored = message.runner.policy.ignored_always()
        if ignored:
            return f"[tools] always: {', '.join(ignored)} ignored: a built-in tool is approved per conversation only."
        return None

    def attach(self, conversation: ChatConversation) -> None:
        """Hand the runner to ``conversation`` (call between turns only)."""
        if conversation.tools is not self.runner:
            conversation.tools = self.runner

    def count(self) -> ToolCount | None:
        """How many tools the model has and how many servers failed (None: no tools started)."""
        if self.runner is None:
            return None
        count, failed, starting = len(self.runner.tools.builtins), 0, 0
        for provider in self.providers:
            servers = getattr(provider, "servers_status", None)
            if servers is None:
                count += len(provider.specs())
                continue
            for server in servers():
                count += server.tool_count if server.state == "ready" else 0
                failed += server.state == "failed"
                starting += server.state == "starting"
        return ToolCount(count, failed, bool(starting))

    def close(self) -> None:
        """Stop every tool (blocks up to a few seconds; call off the UI thread or at exit)."""
        self.closed = True
        runner, self.runner, self.providers = self.runner, None, []
        if runner is not None:
            runner.tools.close()

    # -- asking ---------------------------------------------------------------------------------

    def approve(self, review: ToolReview) -> Decision:
        """(Generation worker) ask the user about a call; block until the answer or a stop."""
        context = self.turn
        if context is None:
            return Decision(Choice.DENY, "nobody could be asked")
        context.run.flush()  # the call's row is on screen before the question
        answer = ApprovalAnswer()
        self.post(ApprovalNeeded(context.turn_id, review, answer))
        while not answer.wait(WAIT_POLL_S):
            if context.should_stop():
                answer.withdrawn = True
                self.post(ApprovalWithdrawn(answer))
                return Decision(Choice.DENY, STOPPED_REASON)
        decision = answer.decision or Decision(Choice.DENY)
        if decision.choice is Choice.ALWAYS_SAVE and review.savable:
            try:
                self.preferences.always_approve(review.key)
            except NotSaved as error:
                self.post(ToolNotice(f"Not saved ({review.key} is allowed for this session): {error}"))
        return decision
