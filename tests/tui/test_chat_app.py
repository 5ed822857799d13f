"""The chat app driven headless through Pilot, on the replay backend."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from textual.widgets import Button, Collapsible, RichLog, Static

from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.config import Settings, load_settings
from harmony_chat.harmony.events import StopReason
from harmony_chat.tui.messages import ModelReady
from harmony_chat.tui.screens.help import HelpScreen
from harmony_chat.tui.screenshots import replay_factory
from harmony_chat.tui.widgets.turn import Answer, AssistantTurn, UserMessage
from harmony_chat.tui.widgets.welcome import WelcomePanel
from tests.tui.harness import make_app, send, settle

LINKED_LIST = "How do I reverse a linked list in Python?"


async def test_final_answer_streams_in_as_markdown() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        assert app.chat.status.model == "demo (replay)"
        await send(pilot, LINKED_LIST)
        turn = app.chat.query_one(AssistantTurn)
        assert turn.final_text.startswith("Walk the list once and flip each `next` pointer")
        assert "def reverse(head: Node | None)" in turn.final_text
        answer = turn.query_one(Answer)
        assert answer.source == turn.final_text
        assert turn.stop_reason is StopReason.RETURN
        assert app.chat.query_one(UserMessage).render().plain == LINKED_LIST  # type: ignore[union-attr]
        assert app.chat.status.state == "idle" and app.chat.status.speed > 0
        assert app.chat.conversation is not None and app.chat.conversation.session.turns[-1].effort == "medium"


async def test_analysis_hidden_by_default_and_shown_in_debug_mode() -> None:
    app = make_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(pilot)
        await send(pilot, LINKED_LIST)
        analysis = app.chat.query_one(".analysis")
        assert not analysis.display
        assert "Iterative approach" not in app.chat.query_one(AssistantTurn).final_text
        inspector = app.chat.inspector
        assert not inspector.display
        await pilot.press("f12")
        await pilot.pause(0.1)
        assert analysis.display and inspector.display
        assert "Iterative approach" in str(analysis.render())
        assert app.chat.status.debug
        await pilot.press("f12")
        await pilot.pause(0.1)
        assert not analysis.display


async def test_token_inspector_rows_appear_live() -> None:
    app = make_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(pilot)
        await pilot.press("f12")
        await send(pilot, LINKED_LIST)
        log = app.chat.inspector.query_one(RichLog)
        assert len(log.lines) == len(app.chat.inspector.buffer) > 100
        text = "\n".join(line.text for line in log.lines)
        assert "<|channel|>" in text and "<|return|>" in text and "analysis" in text and "final" in text
        assert "Reasoning: medium" in app.chat.inspector.prompt_text
        assert app.chat.inspector.prompt_text.startswith("<|start|>system<|message|>")


async def test_effort_cycling_changes_the_next_rendered_prompt() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+r")
        assert app.chat.status.effort == "high"
        await send(pilot, LINKED_LIST)
        assert "Reasoning: high" in app.chat.inspector.prompt_text
        assert app.chat.conversation is not None and app.chat.conversation.session.turns[-1].effort == "high"
        await pilot.press("ctrl+r")
        assert app.chat.status.effort == "low"
        await send(pilot, "Why is the sky blue? Keep it short.")
        assert "Reasoning: low" in app.chat.inspector.prompt_text
        efforts = [turn.effort for turn in app.chat.query(AssistantTurn)]
        assert efforts == ["high", "low"]


async def test_escape_stops_mid_stream_and_keeps_the_partial_answer() -> None:
    app = make_app(factory=replay_factory(delay=0.01))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        app.chat.prompt.text = LINKED_LIST
        await pilot.press("enter")
        for _ in range(200):
            await pilot.pause(0.02)
            if app.chat.current_turn is not None and len(app.chat.current_turn.final_text) > 20:
                break
        await pilot.press("escape")
        await settle(pilot)
        turn = app.chat.query_one(AssistantTurn)
        assert turn.stop_reason is StopReason.CANCELLED
        assert 20 <= len(turn.final_text) < 400
        assert "stopped" in str(turn.query_one(".footer").render())
        assert app.chat.conversation is not None
        assert app.chat.conversation.session.history[-1].channel == "final"
        assert app.chat.conversation.session.history[-1].content[0].text == turn.final_text


async def test_new_chat_clears_everything() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, LINKED_LIST)
        await pilot.press("ctrl+n")
        await pilot.pause(0.1)
        assert not app.chat.query(AssistantTurn) and not app.chat.query(UserMessage)
        assert app.chat.conversation is not None and app.chat.conversation.session.history == []


async def test_theme_switch_is_applied_and_saved(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[chat]\neffort = "low"\n')
    app = make_app(settings=load_settings(config))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        assert app.theme == "harmony-dark"
        app.chat.prompt.text = "/theme harmony-light"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.theme == "harmony-light"
        assert app.current_theme.variables["channel-final"] == "#1f7a35"
    assert load_settings(config).ui.theme == "harmony-light"
    assert load_settings(config).chat.effort == "low"


async def test_model_error_is_shown_not_raised(tmp_path: Path) -> None:
    from harmony_chat.chat.factory import create_backend

    app = make_app(factory=create_backend, replay_demo=False, values={"model.path": str(tmp_path / "missing.gguf")})
    async with app.run_test(size=(100, 32), notifications=True) as pilot:
        await settle(pilot)
        panel = app.chat.query_one(WelcomePanel)
        assert panel.notice is not None and "model file not found" in panel.notice
        assert app.chat.status.state == "model failed to load"
        await send(pilot, "hello?")  # after a failed load: say so, not "not loaded yet"
        shown = [str(notice.message) for notice in app._notifications]
        assert shown and shown[-1].startswith("The model did not load (the panel above says why)")
        assert "No model is loaded yet." not in shown and app.chat.prompt.text == "hello?"


async def test_a_config_key_read_at_its_old_place_is_told_in_the_app(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[model]\nseed = 7\n", encoding="utf-8")
    app = make_app(settings=load_settings(config))
    async with app.run_test(size=(100, 32), notifications=True) as pilot:
        await settle(pilot)
        shown = [str(notice.message) for notice in app._notifications]
        assert f"[model] seed moved to [sampling] (config file {config}, line 2)" in shown[0]
        assert app.options.sampling.seed == 7


async def test_a_model_ready_from_a_load_moved_on_from_is_closed_not_shown() -> None:
    class Stale:
        closed = threading.Event()

        def close(self) -> None:
            self.closed.set()

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        chat = app.chat
        shown, stale_load = chat.conversation, chat.loader.load_id
        chat.loader.begin()  # another model was chosen after that load had finished
        assert chat.loaded_model is not None
        chat.post_message(ModelReady(chat.loaded_model, cast(Any, Stale()), stale_load))
        await settle(pilot)
        assert Stale.closed.wait(5) and chat.conversation is shown


async def test_context_overflow_gives_the_message_back() -> None:
    app = make_app(values={"model.context": 300})
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        long_text = "word " * 400
        await send(pilot, long_text)
        assert app.chat.prompt.text == long_text
        assert not app.chat.query(AssistantTurn) and not app.chat.query(UserMessage)
        assert app.chat.conversation is not None and app.chat.conversation.session.history == []


@pytest.mark.llama
async def test_no_model_chats_on_the_pocket_model_with_welcome_beside_it() -> None:
    app = make_app(replay_demo=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        panel = app.chat.query_one(WelcomePanel)
        text = panel.query_one("Markdown").source  # type: ignore[attr-defined]
        assert "pocket gpt-oss" in text and "--hf-repo ggml-org/gpt-oss-20b-GGUF" in text
        assert app.chat.conversation is not None
        assert isinstance(app.chat.conversation.backend, LlamaCppBackend)
        assert app.chat.status.model == "pocket-gpt-oss (pocket demo model)"
        conversation = app.chat.conversation  # greedy: the options were read when the conversation began
        conversation.sampling = replace(conversation.sampling, temperature=0.0)
        await send(pilot, "What is the capital of France?")
        turn = app.chat.query_one(AssistantTurn)
        assert turn.final_text == "The capital of France is Paris."
        assert not turn.query_one(".analysis").display
        assert app.chat.query(WelcomePanel)
        await pilot.click("#demo")
        await settle(pilot)
        assert not app.chat.query(WelcomePanel)
        assert app.chat.status.model == "demo (replay)"


@pytest.mark.llama
async def test_welcome_lists_models_found_on_this_machine(isolated_home: Path, tiny_gguf: Path) -> None:
    models = isolated_home / "models"
    models.mkdir()
    (models / "gpt-oss-tiny.gguf").symlink_to(tiny_gguf)
    app = make_app(replay_demo=False)
    async with app.run_test(size=(100, 36)) as pilot:
        await settle(pilot)
        buttons = [str(b.label) for b in app.chat.query_one(WelcomePanel).query(Button)]
        assert any("gpt-oss-tiny.gguf" in label and "~/models" in label for label in buttons)


async def test_slash_commands_and_unknown_command_keeps_text() -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        app.chat.prompt.text = "/effort high"
        await pilot.press("enter")
        assert app.chat.status.effort == "high" and app.chat.prompt.text == ""
        app.chat.prompt.text = "/frobnicate now"
        await pilot.press("enter")
        await pilot.pause(0.05)
        assert app.chat.prompt.text == "/frobnicate now"


async def test_regenerate_at_another_effort_and_edit_last(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, LINKED_LIST)
        app.chat.prompt.text = "/regen low"
        await pilot.press("enter")
        await settle(pilot)
        turns = list(app.chat.query(AssistantTurn))
        assert len(turns) == 1 and turns[0].effort == "low"
        assert "Reasoning: low" in app.chat.inspector.prompt_text
        assert app.chat.conversation is not None
        assert [m.author.role.value for m in app.chat.conversation.session.history].count("user") == 1
        app.chat.prompt.text = "/edit"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.chat.prompt.text == LINKED_LIST
        assert not app.chat.query(AssistantTurn) and app.chat.conversation.session.history == []


async def test_copy_answer_and_code_block(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, LINKED_LIST)
        app.chat.prompt.text = "/copy"
        await pilot.press("enter")
        app.chat.prompt.text = "/copy code 1"
        await pilot.press("enter")
        await pilot.pause(0.05)
    assert copied[0].startswith("Walk the list once")
    assert copied[1].startswith("from dataclasses import dataclass") and not copied[1].startswith("```")


async def test_preamble_is_shown_as_its_own_quiet_line() -> None:
    app = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        for question in ("q1", "q2", "Plan a tiny CLI that counts words in a file."):
            await send(pilot, question)
        last = list(app.chat.query(AssistantTurn))[-1]
        assert str(last.query_one(".preamble").render()) == "Here is a plan first, then the code."
        assert "Here is a plan" not in last.final_text


async def test_tool_call_rows_render_from_engine_events(tmp_path: Path) -> None:
    recording = tmp_path / "tool.txt"
    recording.write_text(
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary"
        "<|message|>Checking the weather.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "Oslo"}<|call|>'
    )
    app = make_app(factory=replay_factory(recording))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, "Weather in Oslo?")
        row = app.chat.query_one(AssistantTurn).query_one(Collapsible)
        assert row.title == "Tool call → functions.get_weather" and row.collapsed
        assert app.chat.query_one(AssistantTurn).stop_reason is StopReason.CALL


async def test_help_screen_lists_keys_and_keymap_remaps(tmp_path: Path) -> None:
    settings = Settings(keymap={"cycle-effort": "ctrl+e"})
    app = make_app(settings=settings)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+e")
        assert app.chat.status.effort == "high"
        await pilot.press("f1")
        await pilot.pause(0.1)
        assert isinstance(app.screen, HelpScreen)
        markdown = app.screen.query_one("Markdown").source  # type: ignore[attr-defined]
        assert "`ctrl+e` | Cycle reasoning effort" in markdown and "`f12`" in markdown and "/effort" in markdown
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_generating_keeps_the_ui_responsive() -> None:
    app = make_app(factory=replay_factory(delay=0.01))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        app.chat.prompt.text = LINKED_LIST
        await pilot.press("enter")
        for _ in range(200):  # the turn starts once the messages are mounted: slower on a busy machine
            if app.chat.generating:
                break
            await pilot.pause(0.02)
        assert app.chat.generating
        await pilot.press("h", "i")
        assert app.chat.prompt.text == "hi" and app.chat.generating  # typed while the answer streams
        await settle(pilot)
        assert app.chat.query_one(AssistantTurn).stop_reason is StopReason.RETURN


async def test_repaired_model_output_is_shown_quietly(tmp_path: Path) -> None:
    recording = tmp_path / "broken.txt"
    recording.write_text("<|channel|>analysis<|message|>hmm<|channel|>final<|message|>Fine answer.<|return|>")
    app = make_app(factory=replay_factory(recording))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await send(pilot, "q")
        turn = app.chat.query_one(AssistantTurn)
        assert turn.final_text == "Fine answer."
        assert "implicit-end" in str(turn.query_one(".notice").render())
        assert "<|channel|>" not in turn.final_text


async def test_another_architecture_is_shown_not_raised(tmp_path: Path) -> None:
    from gguf import GGUFWriter

    from harmony_chat.chat.factory import create_backend

    path = tmp_path / "llama.gguf"
    writer = GGUFWriter(str(path), "llama")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    app = make_app(factory=create_backend, replay_demo=False, values={"model.path": str(path)})
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        notice = app.chat.query_one(WelcomePanel).notice
        assert notice is not None and "architecture 'llama', not gpt-oss" in notice


async def test_the_replayed_demo_says_what_to_ask() -> None:
    """``--replay-demo`` used to open on an empty chat with no hint of what to type."""
    from harmony_chat.demo import DEMO_QUESTIONS

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        hint = str(app.chat.query_one("#replay-hint", Static).render())
        assert hint.startswith("Replaying recorded gpt-oss-20b conversations (no model runs).")
        assert all(question in hint for question in DEMO_QUESTIONS)
