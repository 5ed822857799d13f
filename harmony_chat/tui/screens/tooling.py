"""The chat's tools: started off the UI thread, handed to the conversation between turns, asked about per call.

:class:`ChatTools` is the chat screen's collaborator for tools. The providers start in a worker
after the first paint (importing the MCP SDK takes about a second); their notices arrive on the
toolbox's own thread and are posted to the screen as messages. The runner asks for approval in
the turn's events (:class:`~harmony_chat.chat.events.ApprovalRequested`), which the screen
answers from its modal (:class:`~harmony_chat.tui.screens.approving.ApprovalFlow`); an "always"
answer the user wants saved goes to :class:`~harmony_chat.preferences.Preferences` here.

What the status bar says of the tools, and of the ``harmony-chat serve`` processes running here,
is made here as a changed :class:`~harmony_chat.tui.status.StatusState`; the screen applies it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from textual.message import Message

from harmony_chat.preferences import NotSaved, Preferences
from harmony_chat.tui.messages import ToolNotice, ToolsReady
from harmony_chat.tui.status import StatusState

if TYPE_CHECKING:
    from harmony_chat.chat.approval import ToolReview
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.server.registry import RegisteredServer
    from harmony_chat.tools.base import ToolProvider

SERVERS_REFRESH_S = 3.0
"""How often the status bar looks for running ``harmony-chat serve`` processes."""


def server_label(host: str, port: int) -> str:
    """How the status bar names a server: ``:8000`` on loopback, ``HOST:PORT`` when others can reach it."""
    return f":{port}" if host in ("127.0.0.1", "localhost", "::1") else f"{host}:{port}"


def serving_status(shown: StatusState, servers: Sequence[RegisteredServer]) -> StatusState:
    """``shown`` naming the ``harmony-chat serve`` processes running on this machine (``servers``)."""
    return replace(shown, serving=" ".join(server_label(server.host, server.port) for server in servers))


class ChatTools:
    """The chat's tool providers and runner, the "always" answers saved, and what the status bar says of them.

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
        self.post(ToolsReady(providers, tool_runner(self.options, providers, asks=True)))

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

    # -- what the status bar says of them ----------------------------------------------------------

    def status_starting(self, shown: StatusState) -> StatusState:
        """``shown`` saying the tools are starting (call when they are configured)."""
        return replace(shown, tools_state="starting")

    def status(self, shown: StatusState) -> StatusState:
        """``shown`` with how many tools the model has and how many servers failed (unchanged: none started)."""
        if self.runner is None:
            return shown
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
        return replace(shown, tool_count=count, servers_failed=failed, tools_state="starting" if starting else "ready")

    def close(self) -> None:
        """Stop every tool (blocks up to a few seconds; call off the UI thread or at exit)."""
        self.closed = True
        runner, self.runner, self.providers = self.runner, None, []
        if runner is not None:
            runner.tools.close()

    def save_always(self, review: ToolReview) -> None:
        """Remember "always" for ``review``'s tool in the config file (a notice says when it could not be)."""
        try:
            self.preferences.always_approve(review.key)
        except NotSaved as error:
            self.post(ToolNotice(f"Not saved ({review.key} is allowed for this session): {error}"))
