"""Text from users, models, tools and files reaches the screen as text: never markup, never an action."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Collapsible, Static
from textual.widgets._toast import Toast

from harmony_chat.config import Settings
from harmony_chat.history.store import HistoryStore
from harmony_chat.tui.screenshots import replay_factory
from harmony_chat.tui.widgets.turn import Answer, AssistantTurn, UserMessage
from harmony_chat.tui.widgets.welcome import WelcomePanel
from tests.tui.harness import make_app, send, settle
from tests.tui.screen_text import actions, shown, shown_all, squeezed

TRICKY = "What is arr[i] in [b]bold[/b] and [red]red? close this [/] tag, list[int], [x] done"
CLICK = "[@click=app.quit]Click here for details[/]"


def _recording(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "turn.txt"
    path.write_text(text, encoding="utf-8")
    return path


def toasts(app: object) -> list[str]:
    """The text of every notification on screen (without its border), whitespace removed."""
    from textual.app import App

    assert isinstance(app, App)
    return [squeezed(shown(toast).replace("▌", "")) for toast in app.screen.query(Toast)]


async def test_user_text_with_brackets_is_shown_exactly() -> None:
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await send(pilot, TRICKY)
        assert squeezed(shown(app.chat.query_one(UserMessage))) == squeezed(TRICKY)


async def test_preamble_analysis_and_tool_rows_are_text(tmp_path: Path) -> None:
    recording = _recording(
        tmp_path,
        "<|channel|>analysis<|message|>Look in [/usr/local] and [b]x[/b].<|end|>"
        f"<|start|>assistant<|channel|>commentary<|message|>{CLICK}<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "[/]Oslo[red]"}<|call|>',
    )
    app = make_app(factory=replay_factory(recording))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "q")
        turn = app.chat.query_one(AssistantTurn)
        preamble = turn.query_one(".preamble", Static)
        assert shown(preamble) == CLICK
        assert actions(preamble) == []
        await pilot.click(preamble)
        await pilot.pause(0.1)
        assert app.is_running
        row = turn.query_one(Collapsible)
        assert squeezed("▶ Tool call → functions.get_weather") in squeezed(shown_all(row))
        row.collapsed = False
        await pilot.pause(0.1)
        assert '"city": "[/]Oslo[red]"' in shown_all(row)  # as formatted JSON
        await pilot.press("f12")
        await pilot.pause(0.2)
        assert "Look in [/usr/local] and [b]x[/b]." in shown(turn.query_one(".analysis", Static))


async def test_markdown_answer_carries_no_app_action(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recording = _recording(
        tmp_path,
        f"<|channel|>final<|message|>{CLICK} and [quit](app.quit) and [web](https://example.com/a).<|return|>",
    )
    app = make_app(factory=replay_factory(recording))
    opened: list[str] = []
    monkeypatch.setattr(app, "open_url", lambda url, **_: opened.append(url))
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await settle(pilot)
        await send(pilot, "q")
        answer = app.chat.query_one(Answer)
        paragraph = next(child for child in answer.children if child.display)  # hidden ones lend styles
        assert CLICK in shown(paragraph)
        links = actions(paragraph)
        assert links and all(action.startswith("link(") for action in links)
        offset = shown(paragraph).index("quit and")
        await pilot.click(paragraph, offset=(offset + 1, 0))
        await pilot.pause(0.2)
        assert app.is_running and opened == []
        assert any("app.quit" in toast for toast in toasts(app))
        offset = shown(paragraph).index("web")
        await pilot.click(paragraph, offset=(offset + 1, 0))
        await pilot.pause(0.2)
        assert opened == ["https://example.com/a"]


async def test_notifications_and_theme_errors_are_text() -> None:
    app = make_app()
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await settle(pilot)
        app.chat.prompt.text = "/theme [/]"
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert app.is_running
        assert any(toast.startswith(squeezed("Unknown theme '[/]'")) for toast in toasts(app))
        app.chat.prompt.text = "/frob[/]"
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert any(squeezed("unknown command /frob[/]") in toast for toast in toasts(app))


async def test_status_bar_and_inspector_show_names_and_repairs_as_text(tmp_path: Path) -> None:
    recording = _recording(tmp_path, "<|channel|>analysis<|message|>[/]<|channel|>final<|message|>ok<|return|>")
    app = make_app(factory=replay_factory(recording, name="[b]model[/b] [/]"))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        assert shown(app.chat.status).startswith("[b]model[/b] [/]")
        await pilot.press("f12")
        await send(pilot, "q")
        notice = app.chat.query_one(AssistantTurn).query_one(".notice", Static)
        assert "implicit-end" in shown(notice)
        facts = app.chat.inspector.query_one("#inspector-facts", Static)
        assert "recoveries: implicit-end" in shown(facts)


async def test_model_error_with_brackets_and_markdown_in_its_path(tmp_path: Path) -> None:
    from harmony_chat.chat.factory import create_backend

    path = tmp_path / "[/]*not* `here`.gguf"
    app = make_app(factory=create_backend, replay_demo=False, values={"model.path": str(path)})
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        panel = app.chat.query_one(WelcomePanel)
        assert squeezed(str(path)) in squeezed(shown_all(panel))


async def test_resumed_titles_and_messages_with_markup(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    first = make_app(history=store)
    async with first.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "close this [/] tag")
    conversation = store.latest()
    assert conversation is not None
    app = make_app(history=store, resume=conversation)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await settle(pilot)
        assert app.is_running
        assert shown(app.chat.query_one(UserMessage)) == "close this [/] tag"
        assert any(squeezed("Continuing conversation") in toast and "[/]" in toast for toast in toasts(app))


async def test_palette_shows_theme_and_model_names_as_text(tmp_path: Path) -> None:
    from harmony_chat.gguf.discovery import FoundModel

    themes = tmp_path / "themes"
    themes.mkdir()
    (themes / "odd.toml").write_text('name = "odd[/]"\nprimary = "#336699"\n')
    app = make_app(theme_dir=themes)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        app.found_models = [FoundModel(tmp_path / "[b]x[red].gguf", "~/models", 10**9)]
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"odd")
        await pilot.pause(0.5)
        from textual.command import CommandList

        options = app.screen.query_one(CommandList)
        text = "\n".join(str(options.get_option_at_index(i).prompt) for i in range(options.option_count))
        assert "theme: odd[/]" in text
        for _ in range(3):
            await pilot.press("backspace")
        await pilot.press(*"[b]x")
        await pilot.pause(0.5)
        options = app.screen.query_one(CommandList)
        text = "\n".join(str(options.get_option_at_index(i).prompt) for i in range(options.option_count))
        assert "model: [b]x[red].gguf" in text
        assert app.is_running


async def test_welcome_buttons_show_file_names_as_text(tmp_path: Path) -> None:
    from harmony_chat.gguf.discovery import FoundModel

    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        panel = WelcomePanel([FoundModel(tmp_path / "[@click=app.quit]x[red].gguf", "~/models", 10**9)], "failed: [/]")
        await app.chat.log_view.mount(panel)
        await pilot.pause(0.1)
        assert "[@click=app.quit]x[red].gguf" in shown(panel.query_one(Button))
        assert actions(panel.query_one(Button)) == []
        assert "failed: [/]" in shown_all(panel)


def test_help_keeps_odd_keys_inside_their_cells() -> None:
    from markdown_it import MarkdownIt

    from harmony_chat.tui.screens.help import help_markdown

    tokens = MarkdownIt("gfm-like").parse(help_markdown(Settings(keymap={"cycle-effort": "ctrl+e,`,|"}).keymap))
    cells = [child for token in tokens if token.type == "inline" for child in token.children or []]
    assert "ctrl+e,`,|" in [cell.content for cell in cells if cell.type == "code_inline"]
