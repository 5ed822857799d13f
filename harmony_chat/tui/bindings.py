"""Every key binding, with a stable id that the config file's ``[keymap]`` can remap."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class Key:
    """One remappable binding: its id, default keys, action and help text."""

    id: str
    keys: str
    action: str
    label: str
    help: str
    priority: bool = False
    show: bool = True

    def binding(self) -> Binding:
        """The Textual binding."""
        return Binding(
            self.keys, self.action, self.label, show=self.show, priority=self.priority, id=self.id, tooltip=self.help
        )


SEND = Key("send", "enter", "submit", "Send", "Send the message", priority=True, show=False)
NEWLINE = Key(
    "newline",
    "ctrl+j,alt+enter,shift+enter",
    "newline",
    "Newline",
    "Insert a newline (ctrl+j anywhere; alt+enter, shift+enter where the terminal reports them)",
    priority=True,
    show=False,
)
STOP = Key("stop", "escape", "stop", "Stop", "Stop generating; the partial answer is kept", priority=True)
CYCLE_EFFORT = Key(
    "cycle-effort",
    "ctrl+r",
    "cycle_effort",
    "Effort",
    "Cycle reasoning effort low → medium → high (this chat, from the next turn)",
    priority=True,
)
CYCLE_REASONING = Key(
    "cycle-reasoning",
    "ctrl+t",
    "cycle_reasoning",
    "Reasoning",
    "Cycle what you see of the reasoning: hidden → summary (written by the model) → raw (saved)",
    priority=True,
)
TOGGLE_DEBUG = Key(
    "toggle-debug",
    "f12",
    "toggle_debug",
    "Debug",
    "Show or hide the raw chain of thought and the token inspector (in any reasoning mode)",
    priority=True,
)
NEW_CHAT = Key(
    "new-chat", "ctrl+n", "new_chat", "New chat", "Start a new conversation (at the configured effort)", priority=True
)
PALETTE = Key("command-palette", "ctrl+p", "app.command_palette", "Palette", "Open the command palette")
HELP = Key("help", "f1", "app.help", "Help", "Show keys and commands")
HISTORY = Key(
    "history", "ctrl+o", "history", "History", "Open, search, rename or delete past conversations", priority=True
)
QUIT = Key("quit", "ctrl+q", "app.quit", "Quit", "Quit harmony-chat", priority=True)

APP_KEYS = (PALETTE, HELP, QUIT)
SCREEN_KEYS = (STOP, CYCLE_EFFORT, CYCLE_REASONING, TOGGLE_DEBUG, NEW_CHAT, HISTORY)
PROMPT_KEYS = (SEND, NEWLINE)
ALL_KEYS = (SEND, NEWLINE, STOP, CYCLE_EFFORT, CYCLE_REASONING, TOGGLE_DEBUG, NEW_CHAT, HISTORY, PALETTE, HELP, QUIT)
"""In the order the help screen and the README list them."""

SLASH_COMMANDS = (
    ("/effort low|medium|high", "Set the reasoning effort of this chat, from the next turn"),
    ("/regen [low|medium|high]", "Regenerate the last answer, optionally at another effort"),
    ("/edit", "Put the last message back in the prompt to edit and resend it"),
    ("/copy", "Copy the last answer"),
    ("/copy code [N]", "Copy the last answer's code block N (default: the last one)"),
    ("/reasoning hidden|summary|raw", "Show the reasoning as a thinking line, a summary by the model, or raw (saved)"),
    ("/debug", "Toggle debug mode (raw chain of thought and the token inspector)"),
    ("/theme NAME", "Switch theme (the choice is saved)"),
    ("/new", "Start a new chat (at the configured effort, `[chat] effort`)"),
    ("/history", "Open past conversations"),
    ("/tools", "List tool servers and their tools; switch a server off or on"),
    ("/help", "Show this help"),
)
