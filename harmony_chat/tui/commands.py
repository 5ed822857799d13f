"""The command palette: every action, with context (efforts, reasoning modes, debug state, themes, models found).

Theme and model names come from files: entries are :class:`~textual.content.Content`, never markup.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content
from textual.screen import Screen
from textual.theme import Theme

from harmony_chat.gguf.discovery import FoundModel
from harmony_chat.harmony.effort import EFFORTS
from harmony_chat.harmony.visibility import REASONING_MODES
from harmony_chat.tui.literal import literal, visible
from harmony_chat.tui.screens.chat import ChatScreen
from harmony_chat.tui.screens.reasoning import MODE_HELP

Action = Callable[[], object] | Callable[[], Awaitable[object]]


class PaletteApp(Protocol):
    """What the palette needs of the app (the app module imports this one, not the other way round)."""

    user_themes: set[str]
    """The user's own themes (offered beside the bundled ones)."""
    found_models: list[FoundModel]
    """gpt-oss models found on this machine."""

    @property
    def available_themes(self) -> dict[str, Theme]:
        """Every registered theme."""
        ...

    @property
    def screen_stack(self) -> list[Screen[object]]:
        """The screens, the active one last."""
        ...

    def set_theme(self, name: str) -> bool:
        """Switch theme and save the choice."""
        ...

    def action_help(self) -> None:
        """Show keys and commands."""
        ...


class HarmonyCommands(Provider):
    """Chat, effort, view, copy, theme and model commands for the palette."""

    def _commands(self) -> list[tuple[str, Action, str]]:
        app = cast(PaletteApp, self.app)
        screen = self.screen if isinstance(self.screen, ChatScreen) else None
        commands: list[tuple[str, Action, str]] = []
        if screen is not None:
            current = screen.effort if screen.conversation else None
            debug = "Hide" if screen.debug else "Show"
            commands += [
                ("chat: New chat", screen.action_new_chat, "Start a new conversation at the configured effort"),
                ("chat: History", screen.action_history, "Open, search, rename or delete past conversations"),
                ("chat: Regenerate last answer", screen.regenerate, "Generate the last answer again"),
                ("chat: Edit and resend last message", screen.edit_last, "Put the last message back in the prompt"),
                ("copy: Last answer", screen.copy_answer, "Copy the last final answer"),
                ("tools: Servers and tools", screen.action_tools, "List tool servers and their tools; switch one off"),
                (
                    f"view: {debug} debug (analysis + token inspector)",
                    screen.action_toggle_debug,
                    "Raw chain of thought and every token",
                ),
            ]
            for mode in REASONING_MODES:
                marker = " (current)" if mode == screen.reasoning else ""
                commands.append(
                    (f"reasoning: {mode}{marker}", partial(screen.set_reasoning, mode), MODE_HELP[mode] + " (saved)")
                )
            for effort in EFFORTS:
                marker = " (current)" if effort == current else ""
                commands.append(
                    (
                        f"effort: {effort}{marker}",
                        partial(screen.set_effort, effort),
                        "Reasoning effort of the next turn",
                    )
                )
                commands.append(
                    (
                        f"chat: Regenerate at {effort} effort",
                        partial(screen.regenerate, effort),
                        "Generate the last answer again at this effort",
                    )
                )
            for number in range(1, len(_blocks(screen)) + 1):
                commands.append(
                    (
                        f"copy: Code block {number} of the last answer",
                        partial(screen.copy_answer, number),
                        "Copy one code block",
                    )
                )
        for name in sorted(app.available_themes):
            if name.startswith("harmony-") or name in app.user_themes:
                commands.append((f"theme: {name}", partial(app.set_theme, name), "Switch theme (saved)"))
        chat = next((shown for shown in app.screen_stack if isinstance(shown, ChatScreen)), None)
        if chat is not None:
            commands += _model_commands(chat, app.found_models)
        commands.append(("app: Help", app.action_help, "Keys and slash commands"))
        return commands

    async def discover(self) -> Hits:
        """Offer every command when the palette opens empty."""
        for title, action, help_text in self._commands():
            yield DiscoveryHit(literal(title), action, text=visible(title), help=help_text)

    async def search(self, query: str) -> Hits:
        """Fuzzy-match the commands."""
        matcher = self.matcher(query)
        for title, action, help_text in self._commands():
            shown = visible(title)
            if (score := matcher.match(shown)) > 0:
                yield Hit(score, highlight(matcher, shown), action, text=shown, help=help_text)


def highlight(matcher: Matcher, text: str) -> Content:
    """``text`` as content with the letters the query matched highlighted (``Matcher.highlight`` reads markup)."""
    content = Content(text)
    for offset in matcher.fuzzy_search.match(matcher.query, text)[1]:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def _model_commands(chat: ChatScreen, found: list[FoundModel]) -> list[tuple[str, Action, str]]:
    """Switch to a model found on this machine, the pocket model, or the replayed recordings."""
    commands: list[tuple[str, Action, str]] = [
        (
            f"model: {model.path.name}",
            partial(chat.switch_model, path=model.path),
            f"{model.size_gb:.1f} GB, {model.source}",
        )
        for model in found
    ]
    commands.append(
        (
            "model: Pocket gpt-oss (demo model)",
            partial(chat.switch_model, demo=True),
            "The tiny bundled model; it only knows what it was trained on",
        )
    )
    commands.append(
        (
            "model: Replayed demo conversations",
            partial(chat.switch_model, replay_demo=True),
            "Replays bundled recordings of gpt-oss",
        )
    )
    return commands


def _blocks(screen: ChatScreen) -> list[str]:
    from harmony_chat.tui.widgets.turn import code_blocks

    return code_blocks(screen.last_answer())
