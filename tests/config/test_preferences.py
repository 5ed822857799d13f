"""What the user's choices save to the config file: theme, reasoning mode, always-approved tools."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harmony_chat.config import load_settings
from harmony_chat.preferences import NotSaved, Preferences


def test_choices_are_saved_keeping_the_rest_of_the_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('# mine\n[ui]\ntheme = "harmony-dark"\n\n[tools]\nalways = ["a.b"]\n', encoding="utf-8")
    preferences = Preferences.from_settings(load_settings(config))
    preferences.choose_theme("harmony-light")
    preferences.choose_reasoning("raw")
    preferences.always_approve("weather.get_weather")
    preferences.always_approve("weather.get_weather")  # once only
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# mine\n")
    saved = tomllib.loads(text)
    assert saved["ui"] == {"theme": "harmony-light", "reasoning": "raw"}
    assert saved["tools"]["always"] == ["a.b", "weather.get_weather"]
    assert (preferences.theme, preferences.reasoning) == ("harmony-light", "raw")


def test_without_a_config_file_theme_and_reasoning_last_the_session_and_always_says_why() -> None:
    preferences = Preferences(None, "harmony-dark")
    preferences.choose_theme("harmony-light")
    preferences.choose_reasoning("summary")
    assert (preferences.theme, preferences.reasoning) == ("harmony-light", "summary")
    with pytest.raises(NotSaved, match="there is no config file"):
        preferences.always_approve("weather.get_weather")


def test_a_broken_config_file_is_not_saved_to_and_the_choice_still_applies(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[ui\n", encoding="utf-8")
    preferences = Preferences(config, "harmony-dark")
    with pytest.raises(NotSaved, match="config.toml"):
        preferences.choose_theme("harmony-light")
    assert preferences.theme == "harmony-light"
    with pytest.raises(NotSaved, match="config.toml"):
        preferences.always_approve("weather.get_weather")
    assert config.read_text(encoding="utf-8") == "[ui\n"
