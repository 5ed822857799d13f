"""The harmony-chat Textual app: themes, keymap, palette, help, and the chat screen."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App, InvalidThemeError
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import Screen

from harmony_chat.chat.factory import BackendFactory, create_backend
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import DEFAULT_THEME
from harmony_chat.gguf.discovery import FoundModel
from harmony_chat.history.store import HistoryStore
from harmony_chat.preferences import Preferences
from harmony_chat.tui.bindings import APP_KEYS
from harmony_chat.tui.commands import HarmonyCommands
from harmony_chat.tui.hangup import CHECK_S, hung_up
from harmony_chat.tui.literal import visible
from harmony_chat.tui.screens.chat import ChatScreen
from harmony_chat.tui.screens.help import HelpScreen
from harmony_chat.tui.themes import choose_theme, load_themes

SWITCH_INTERVAL_S = 0.0005
"""How often Python hands the GIL between the UI and the generation thread."""


class HarmonyChatApp(App[None]):
    """Chat with gpt-oss in the terminal.

    Args:
        options: the model, chat and tool settings to start with.
        settings: the config file's settings (theme, keymap, where to save the theme).
        theme_dir: the user theme dir (default: inside the config dir).
        backend_factory: builds the backend from the options (tests and screenshots pass their own).
        history: the conversation history (None keeps nothing).
        history_off: why there is no history although one was wanted (shown at start and in the status bar).
        resume: a conversation id to continue, or ``"pick"`` to open the history first.
    """

    TITLE = "harmony-chat"
    BINDINGS = [key.binding() for key in APP_KEYS]
    COMMANDS = App.COMMANDS | {HarmonyCommands}
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        options: ChatOptions,
        theme_dir: Path | None = None,
        backend_factory: BackendFactory | None = None,
        history: HistoryStore | None = None,
        resume: int | str | None = None,
        history_off: str | None = None,
    ) -> None:
        super().__init__()
        self.history = history
        """Where conversations are stored (None: nothing is stored)."""
        self.history_off = history_off
        """Why the history is off although one was wanted (a place that cannot hold it)."""
        self.resume = resume
        """A conversation to continue once the model is ready (``"pick"``: ask which)."""
        self.options = options
        """What the chat runs with (the model switch changes its model source)."""
        self.backend_factory: BackendFactory = backend_factory or create_backend
        self.settings = options.settings
        """The config file's settings (with the command line's on top): the one place options are kept."""
        self.preferences = Preferences.from_settings(self.settings)
        """What the user's choices (theme, reasoning mode, always-approved tools) save to the config file."""
        self.found_models: list[FoundModel] = []
        self.user_themes: set[str] = set()
        self._theme_dir = theme_dir
        self.approval_clock: Callable[[], float] = time.monotonic
        """The clock of the approval modal's typing guard (tests pass one they move)."""
        self._chat_screen: ChatScreen | None = None
        """The chat screen, made on mount (from this app's settings as they are then)."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Defaults for the app's own theme variables, so every theme works."""
        return {
            "channel-final": "#7bd88f",
            "channel-analysis": "#b48ead",
            "channel-commentary": "#5eb1ff",
            "special-token": "#ffb454",
            "user-message": "#2a3140",
        }

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Show a notification as plain text, whatever ``markup`` says.

        Notifications name themes, files, titles and errors; read as markup, ``[/]`` in any of
        them ended the app. Every ``notify`` (a widget's or a screen's too) lands here. Tabs become
        spaces: Textual sizes a toast counting a tab as one column but draws it up to eight wide,
        which cut the toast's last lines off.
        """
        shown, heading = visible(message).expandtabs(), visible(title).expandtabs()
        super().notify(shown, title=heading, severity=severity, timeout=timeout, markup=False)

    def action_help_quit(self) -> None:
        """Ctrl+c does not quit: say which key does (its name as text: Textual's own notice is markup)."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit the app", title="Do you want to quit?")
                return

    def on_mount(self) -> None:
        """Register themes and keys, then show the chat."""
        # The generation thread needs the GIL back after every token; with Python's default 5 ms
        # switch interval a busy UI thread throttles it to ~200 tokens/s. 0.5 ms lets tokens flow
        # and keeps key presses prompt while answers stream (measured in harmony_chat/tui/bench.py).
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        loaded = load_themes(self._theme_dir)
        for theme in loaded.themes:
            self.register_theme(theme)
            if not theme.name.startswith("harmony-"):
                self.user_themes.add(theme.name)
        if loaded.failures:
            self.notify("\n".join(loaded.failures), title="Some themes did not load", severity="warning")
        try:
            self.theme = self.preferences.theme
        except InvalidThemeError:
            self.notify(f"Unknown theme {self.preferences.theme!r}; using {DEFAULT_THEME}.", severity="warning")
            self.theme = DEFAULT_THEME
        self.set_keymap(self.settings.keymap)
        self._chat_screen = ChatScreen(
            self.options,
            self.preferences,
            backend_factory=self.backend_factory,
            history=self.history,
            history_off=self.history_off,
            resume=self.resume,
            debug=self.settings.ui.debug,
            cursor_blink=self.settings.ui.cursor_blink,
            approval_clock=self.approval_clock,
        )
        self.push_screen(self._chat_screen)
        self._watch_terminal()
        if self.history_off:
            self.notify(f"History is off: {self.history_off}", severity="warning", markup=False)
        self._discover_models()

    def _watch_terminal(self) -> None:
        """Quit normally when the terminal goes away (``hangup.py``); headless runs have none to watch."""
        if self.is_headless or sys.__stdin__ is None or not sys.__stdin__.isatty():
            return
        fd = sys.__stdin__.fileno()

        def check() -> None:
            if hung_up(fd):
                self.exit()

        self.set_interval(CHECK_S, check)
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no SIGHUP on Windows
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.exit)

    def _discover_models(self) -> None:
        from harmony_chat.gguf.discovery import find_models

        def work() -> None:
            self.found_models = find_models()

        self.run_worker(work, thread=True, group="discover-palette", exit_on_error=False)

    @property
    def chat(self) -> ChatScreen:
        """The chat screen."""
        for screen in self.screen_stack:
            if isinstance(screen, ChatScreen):
                return screen
        raise RuntimeError("the chat screen is not open")

    def action_help(self) -> None:
        """Show keys and commands."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.settings.keymap))

    def set_theme(self, name: str) -> bool:
        """Switch theme and remember the choice in the config file (False: no such theme)."""
        return choose_theme(self, self.preferences, name)

    def get_default_screen(self) -> Screen[None]:
        """A blank base screen; the chat screen is pushed on mount."""
        return Screen()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver; on POSIX one whose output survives the terminal going away (``terminal_driver.py``)."""
        driver = super().get_driver_class()
        if driver.__module__ != "textual.drivers.linux_driver":  # Windows, or a driver named in TEXTUAL_DRIVER
            return driver
        from harmony_chat.tui.terminal_driver import TerminalDriver

        return TerminalDriver

    def release(self) -> None:
        """Stop the tools and close the model (blocks a few seconds at most; after the app has exited)."""
        screen = self._chat_screen
        if screen is None:
            return
        screen.tools.close()
        if screen.conversation is not None:
            screen.conversation.tools = None  # closed just above
            screen.conversation.close()


def run_tui(
    options: ChatOptions,
    history: HistoryStore | None = None,
    resume: int | str | None = None,
    history_off: str | None = None,
) -> None:
    """Run the app until the user quits, then stop its tools and model."""
    app = HarmonyChatApp(options, history=history, resume=resume, history_off=history_off)
    try:
        app.run()
    finally:
        app.release()
