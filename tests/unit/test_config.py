"""The config file: defaults, overrides, and one clear error naming the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harmony_chat.config import ConfigError, load_settings, parse_settings, save_ui_value
from harmony_chat.launch import LaunchOptions

GOOD = """
[model]
path = "~/models/gpt-oss-20b.gguf"
context = 8192
gpu_layers = -1
temperature = 0.7

[chat]
effort = "high"
instructions = "Be concise."

[ui]
theme = "harmony-light"

[keymap]
cycle-effort = "ctrl+e"
"""


def test_missing_file_means_defaults(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "none.toml")
    assert settings.chat.effort == "medium" and settings.model.path is None and settings.ui.theme == "harmony-dark"


def test_good_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(GOOD)
    settings = load_settings(path)
    assert settings.model.context == 8192 and settings.model.gpu_layers == -1 and settings.model.temperature == 0.7
    assert settings.chat.instructions == "Be concise." and settings.keymap == {"cycle-effort": "ctrl+e"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[model]\ncontext = "big"\n', "line 2: model.context must be int"),
        ('[chat]\n\neffort = "extreme"\n', "line 3: chat.effort must be low, medium or high"),
        ("[ui]\ncolour = 1\n", "line 2: unknown setting 'colour' in [ui]"),
        ("[model]\npath = 1\n[wat]\nx = 1\n", "line 2: model.path must be str"),
        ("[wat]\nx = 1\n", "line 1: unknown section [wat]"),
        ("[model\npath = 1\n", "at line 1"),
        ("[keymap]\nquit = 5\n", "line 1: [keymap] maps binding ids to key strings"),
    ],
)
def test_bad_config_names_the_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match="config file /c.toml") as raised:
        parse_settings(text, Path("/c.toml"))
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_cli_options_override_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(GOOD)
    settings = load_settings(path)
    options = LaunchOptions.from_settings(settings, effort="low", context=None, demo=None)
    assert options.effort == "low" and options.context == 8192
    assert options.model == Path.home() / "models" / "gpt-oss-20b.gguf"
    demo = LaunchOptions.from_settings(settings, demo=True)
    assert demo.demo and demo.model is None and demo.uses_pocket
    assert not options.uses_pocket and LaunchOptions().uses_pocket


def test_saving_the_theme_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(GOOD)
    save_ui_value(path, "theme", "harmony-solarized")
    assert load_settings(path).ui.theme == "harmony-solarized"
    assert "Be concise." in path.read_text() and load_settings(path).model.context == 8192
    fresh = tmp_path / "new" / "config.toml"
    save_ui_value(fresh, "theme", "harmony-light")
    assert load_settings(fresh).ui.theme == "harmony-light"
    no_ui = tmp_path / "no-ui.toml"
    no_ui.write_text('[chat]\neffort = "low"\n')
    save_ui_value(no_ui, "theme", "harmony-light")
    assert load_settings(no_ui).ui.theme == "harmony-light" and load_settings(no_ui).chat.effort == "low"


def test_bad_config_on_the_command_line_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harmony_chat.cli import main

    path = tmp_path / "config.toml"
    path.write_text("[chat]\neffort = 3\n")
    assert main(["--config", str(path)]) == 1
    assert capsys.readouterr().err == f"error: config file {path}, line 2: chat.effort must be str\n"
