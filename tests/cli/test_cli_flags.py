"""The command line's flags: one table over the settings, whose fields give each flag its type, values and help."""

from __future__ import annotations

import typing

import pytest
import typer

from harmony_chat.cli import app, main
from harmony_chat.cli.options import ASK, FLAGS, Flag, Overrides, chat_flags, setting_help
from harmony_chat.cli.settings_digest import SETTINGS
from harmony_chat.config import Settings, default_settings, get_setting
from tests.support.flags import parse_flags


def _field(path: str) -> typing.Any:
    section, key = path.split(".")
    return Settings.model_fields[section].annotation.model_fields[key]  # type: ignore[union-attr]


def _command(name: str) -> typer.core.TyperCommand | typer.core.TyperGroup:
    """The app (the root command), or one of its commands."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    command = group if name == "app" else group.get_command(typer.Context(group), name)
    assert isinstance(command, typer.core.TyperCommand | typer.core.TyperGroup)
    return command


@pytest.mark.parametrize("flag", [flag for flag in FLAGS if flag.setting], ids=lambda flag: flag.name)
def test_a_settings_flag_takes_its_help_from_the_fields_docstring(flag: Flag) -> None:
    assert flag.setting is not None
    get_setting(default_settings(), flag.setting)  # names a setting
    docstring = " ".join((_field(flag.setting).description or "").split()).replace("``", "")
    assert setting_help(flag.setting) == docstring
    for name in sorted(flag.commands):
        (param,) = [param for param in _command(name).params if flag.name in param.opts]
        assert isinstance(param, typer.core.TyperOption) and (param.help or "").startswith(docstring), (name, flag.name)


def test_the_allowed_values_are_the_settings_literal_types() -> None:
    for path in ("model.engine", "chat.effort", "tools.approve", "ui.reasoning", "tools.builtin"):
        annotation = _field(path).annotation
        literal = next(
            arg for arg in (annotation, *typing.get_args(annotation)) if typing.get_origin(arg) is typing.Literal
        )
        assert SETTINGS[path][1] == typing.get_args(literal), path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "tgi"], "--engine takes llama-server, vllm, sglang, not 'tgi'"),
        (["--approve", "some"], "--approve takes ask, all, none, not 'some'"),
        (["--tool", "shell"], "--tool takes python, browser, not 'shell'"),
        (["--yes", "--approve", "none"], "--yes is --approve all; it does not go with --approve none"),
    ],
)
def test_a_value_the_setting_does_not_allow_is_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code = main(["ask", "--demo", "hi", *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1


def test_a_new_flag_is_one_row_of_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flag for a boolean or a checked string setting needs nothing but its row."""
    rows = (Flag("--debug", "ui.debug", commands=frozenset({ASK})), Flag("--theme", "ui.theme"))
    monkeypatch.setattr("harmony_chat.cli.options.FLAGS", FLAGS + rows)
    assert parse_flags("--debug", "--theme", "harmony-light").settings == {
        "ui.debug": True,
        "ui.theme": "harmony-light",
    }
    assert parse_flags("--no-debug").chat_options().settings.ui.debug is False
    assert parse_flags().settings == {}
    with pytest.raises(typer.BadParameter, match="unknown theme 'nope'"):
        parse_flags("--theme", "nope")


def test_a_command_gets_the_flags_in_place_of_its_overrides_parameter() -> None:
    def no_overrides(prompt: str) -> None:
        pass

    def own_flag(ctx: typer.Context, *, overrides: Overrides) -> None:
        pass

    with pytest.raises(TypeError, match="overrides"):
        chat_flags(ASK)(no_overrides)
    with pytest.raises(TypeError, match="'ctx'"):
        chat_flags(ASK)(own_flag)  # --ctx is the table's


def test_ask_help_does_not_promise_a_model_ask_refuses_to_pick() -> None:
    """``ask`` never falls back to the pocket model silently, and its ``--model`` help says so."""
    help_text = SETTINGS["model.path"][2]
    assert "ask needs one (or --demo)" in help_text and "Without a model the pocket gpt-oss runs" not in help_text


def test_no_flag_shows_a_python_type_as_its_metavar(capsys: pytest.CaptureFixture[str]) -> None:
    """``--mcp-config <list[Path]>`` read like a bug; every flag names what it takes in words."""
    from harmony_chat.cli import main

    for command in (["ask", "--help"], ["--help"], ["serve", "--help"]):
        assert main(command) == 0
        shown = capsys.readouterr().out
        assert "list[" not in shown and "Path]" not in shown, command
    assert main(["ask", "--help"]) == 0 and "--mcp-config FILE" in capsys.readouterr().out
