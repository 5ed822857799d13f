"""Reasoning modes in the app: hidden, summary (a block written by the model), raw; the switch is saved.

A replay plays one recorded completion per generation call, so a summarised turn is recorded in
three pieces: the turn up to the end of its analysis, the summary's own completion (after the
prefilled ``<|channel|>final<|message|>``), then the rest of the turn.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.command import CommandList

from harmony_chat.backends.base import GenerationStats
from harmony_chat.chat.events import ReasoningSummary, SummaryStarted
from harmony_chat.chat.factory import create_backend
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import load_settings
from harmony_chat.harmony.events import ContentDelta, MessageStarted
from harmony_chat.history.store import HistoryStore
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.screenshots import PINNED_DATE
from harmony_chat.tui.widgets.answer import Answer
from harmony_chat.tui.widgets.reasoning import LIVE_TITLE, SUMMARY_TITLE, SummaryBlock
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.tui.harness import send, settle
from tests.tui.screen_text import shown_all

THOUGHT = "The user wants the weather; Tokyo is sunny today."
ANALYSIS = f"<|channel|>analysis<|message|>{THOUGHT}<|end|>"
REST = "<|start|>assistant<|channel|>final<|message|>Sunny in Tokyo.<|return|>"
SUMMARY_TEXT = "I looked up what the weather in Tokyo is like [b]today[/b]."
SUMMARY = f"{SUMMARY_TEXT}<|return|>"
WHOLE = ANALYSIS + REST


def reasoning_app(
    tmp_path: Path,
    completions: list[str],
    mode: str | None = None,
    history: HistoryStore | None = None,
    resume: int | None = None,
) -> tuple[HarmonyChatApp, Path]:
    """The app on a config file (``[ui] reasoning = mode``) and a multi-completion recording."""
    config = tmp_path / "config.toml"
    config.write_text(f'[ui]\nreasoning = "{mode}"\n' if mode else "# my settings\n", encoding="utf-8")
    recording = tmp_path / "turn.txt"
    recording.write_text("\n=====\n".join(completions) + "\n", encoding="utf-8")
    settings = load_settings(config)
    settings.ui.cursor_blink = False
    options = ChatOptions(settings, replay=recording, start_date=PINNED_DATE)
    app = HarmonyChatApp(options, backend_factory=create_backend, history=history, resume=resume)
    return app, config


def mode_of(app: HarmonyChatApp) -> str:
    return app.chat.reasoning


def blocks(app: HarmonyChatApp) -> list[SummaryBlock]:
    return list(app.chat.query(SummaryBlock))


def screen(app: HarmonyChatApp) -> str:
    return shown_all(app.chat.log_view)


async def test_summary_mode_shows_the_models_summary_above_the_answer_and_its_cost(tmp_path: Path) -> None:
    app, _ = reasoning_app(tmp_path, [ANALYSIS, SUMMARY, REST], "summary")
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        assert app.chat.conversation is not None and app.chat.conversation.summarizer is not None
        await send(pilot, "Weather in Tokyo?")
        turn = app.chat.query_one(AssistantTurn)
        (block,) = blocks(app)
        assert block.display and block.text == SUMMARY_TEXT and not block.collapsed
        assert str(block.title) == SUMMARY_TITLE and "written by the model" in SUMMARY_TITLE
        answer = turn.query_one(Answer)
        assert turn.children.index(block) < turn.children.index(answer)
        shown = screen(app)
        assert SUMMARY_TEXT in shown  # as text: the brackets are not markup
        assert THOUGHT not in shown and "Sunny in Tokyo." in shown
        (summary,) = turn.summaries
        assert summary.stats.generated_tokens > 0
        status = str(app.chat.status.render())
        assert f"summary {summary.stats.generated_tokens} tok {summary.seconds:.2f}s" in status, status
        assert "reasoning summary" in status
        footer = str(turn.query_one(".footer").render())
        assert f"summary {summary.stats.generated_tokens} tokens" in footer


async def test_hidden_mode_writes_no_summary_and_shows_no_reasoning(tmp_path: Path) -> None:
    app, _ = reasoning_app(tmp_path, [WHOLE], "hidden")
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        assert app.chat.conversation is not None and app.chat.conversation.summarizer is None
        await send(pilot, "Weather in Tokyo?")
        assert blocks(app) == []
        shown = screen(app)
        assert "Sunny in Tokyo." in shown and THOUGHT not in shown and "Analysis" not in shown
        assert "summary" not in str(app.chat.status.render())


async def test_raw_mode_shows_the_analysis_and_no_summary(tmp_path: Path) -> None:
    app, _ = reasoning_app(tmp_path, [WHOLE], "raw")
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        assert app.chat.conversation is not None and app.chat.conversation.summarizer is None
        await send(pilot, "Weather in Tokyo?")
        assert blocks(app) == []
        shown = screen(app)
        assert THOUGHT in shown and "raw chain of thought, not reviewed for safety" in shown
        assert not app.chat.inspector.display  # raw mode is not debug mode: no token inspector


@pytest.mark.parametrize(
    "summary", ["<|return|>", "<|channel|>analysis<|message|>hmm<|end|><|return|>"], ids=["empty", "markup"]
)
async def test_a_failed_summary_shows_nothing(tmp_path: Path, summary: str) -> None:
    app, _ = reasoning_app(tmp_path, [ANALYSIS, summary, REST], "summary")
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, "Weather in Tokyo?")
        turn = app.chat.query_one(AssistantTurn)
        (failed,) = turn.summaries
        assert failed.text is None and blocks(app) == []
        shown = screen(app)
        assert "hmm" not in shown and THOUGHT not in shown and "Sunny in Tokyo." in shown


async def test_the_key_cycles_the_modes_saves_each_and_summaries_follow(tmp_path: Path) -> None:
    app, config = reasoning_app(tmp_path, [WHOLE, ANALYSIS, SUMMARY, REST, WHOLE])
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        conversation = app.chat.conversation
        assert conversation is not None and mode_of(app) == "hidden"
        await send(pilot, "Weather in Tokyo?")  # hidden: no summary
        await pilot.press("ctrl+t")
        assert mode_of(app) == "summary" and conversation.summarizer is not None
        assert tomllib.loads(config.read_text(encoding="utf-8"))["ui"]["reasoning"] == "summary"
        assert config.read_text(encoding="utf-8").startswith("# my settings")  # the rest of the file is kept
        await send(pilot, "And tomorrow?")
        (block,) = blocks(app)
        assert block.display and block.text == SUMMARY_TEXT
        await pilot.press("ctrl+t")
        assert mode_of(app) == "raw" and conversation.summarizer is None
        assert tomllib.loads(config.read_text(encoding="utf-8"))["ui"]["reasoning"] == "raw"
        await pilot.pause(0.1)
        assert not block.display and THOUGHT in screen(app)  # the turns already shown follow the mode
        await send(pilot, "And the day after?")
        assert len(blocks(app)) == 1  # raw: no summary written
        await pilot.press("ctrl+t")
        await pilot.pause(0.1)
        assert mode_of(app) == "hidden" and THOUGHT not in screen(app)
        assert tomllib.loads(config.read_text(encoding="utf-8"))["ui"]["reasoning"] == "hidden"
    assert load_settings(config).ui.reasoning == "hidden"


async def test_the_palette_and_the_slash_command_switch_the_mode(tmp_path: Path) -> None:
    app, config = reasoning_app(tmp_path, [WHOLE])
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"reasoning: summary")
        await pilot.pause(0.5)
        options = app.screen.query_one(CommandList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert prompts[0].startswith("reasoning: summary"), prompts
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert mode_of(app) == "summary"
        assert load_settings(config).ui.reasoning == "summary"
        app.chat.prompt.text = "/reasoning raw"
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert mode_of(app) == "raw" and load_settings(config).ui.reasoning == "raw"


async def test_a_resumed_conversation_shows_its_stored_summaries(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    first, _ = reasoning_app(tmp_path, [ANALYSIS, SUMMARY, REST], "summary", history=store)
    async with first.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await send(pilot, "Weather in Tokyo?")
    stored = store.latest()
    assert stored is not None
    again, _ = reasoning_app(tmp_path, [WHOLE], "summary", history=store, resume=stored)
    async with again.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        await pilot.pause(0.2)
        (block,) = blocks(again)
        turn = again.chat.query_one(AssistantTurn)
        assert block.display and block.text == SUMMARY_TEXT
        assert turn.children.index(block) < turn.children.index(turn.query_one(Answer))
        assert SUMMARY_TEXT in screen(again) and THOUGHT not in screen(again)


class OneTurn(App[None]):
    """A turn on its own, fed events by hand."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return HarmonyChatApp.get_theme_variable_defaults(self)  # type: ignore[arg-type]

    def compose(self) -> ComposeResult:
        yield AssistantTurn(1, "medium")


def summary_event(text: str | None, live: bool, part: int) -> ReasoningSummary:
    return ReasoningSummary(text, part, live, 300 * part, GenerationStats(generated_tokens=9), 0.5)


async def test_while_the_model_thinks_the_thinking_line_stays_and_a_live_summary_is_replaced() -> None:
    app = OneTurn()
    async with app.run_test(size=(100, 30)) as pilot:
        turn = app.query_one(AssistantTurn)
        thinking = turn.query_one(".thinking")
        await turn.apply([MessageStarted("analysis", None, None), ContentDelta("analysis", "x" * 10)])
        await turn.apply([SummaryStarted(1, True, 300)])
        assert turn.summarising and "writing a summary" in str(thinking.render())
        await turn.apply([summary_event("So far: I compared two routes.", True, 1)])
        await pilot.pause()
        (block,) = turn.query(SummaryBlock)
        assert thinking.display and not turn.summarising  # still thinking: the line stays
        assert block.live and str(block.title) == LIVE_TITLE
        final = "I compared two routes and chose one."
        await turn.apply([SummaryStarted(2, False, 600), summary_event(final, False, 2)])
        await pilot.pause()
        (same,) = turn.query(SummaryBlock)
        assert same is block and block.text == final and not block.live
        await turn.apply([summary_event(None, False, 3)])  # a failed one shows nothing, changes nothing
        assert len(turn.query(SummaryBlock)) == 1 and block.text == final
        assert len(turn.summaries) == 3
