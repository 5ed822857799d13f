"""``[keymap]`` values are checked when the config file is read: a key Textual cannot bind is one error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harmony_chat.config import ConfigError, load_settings


@pytest.mark.parametrize("keys", ["[/]", "", "ctrl+", "hello", "ctrl+[", "ctrl+q,,f2", "hyperdrive+q", "<any>"])
def test_a_key_textual_cannot_bind_is_one_error_naming_the_line(tmp_path: Path, keys: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[ui]\ndebug = false\n\n[keymap]\nhelp = 'f2'\nquit = {keys!r}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_settings(config)
    message = str(raised.value)
    assert message == f"config file {config}, line 6: keymap.quit: {keys!r} is not a key or a list of keys " + (
        "(e.g. 'ctrl+e' or 'f5,ctrl+e')"
    )
    assert "\n" not in message


@pytest.mark.parametrize(
    "keys", ["ctrl+q", "f5,ctrl+e", "ctrl+shift+up", "question_mark", "?", "[", "alt+enter", "ctrl+@", "plus", "space"]
)
def test_keys_textual_binds_are_accepted(tmp_path: Path, keys: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[keymap]\nquit = {keys!r}\n", encoding="utf-8")
    assert load_settings(config).keymap == {"quit": keys}
