"""The config file: defaults, overrides, and one clear error naming the line."""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import ConfigError, load_settings, save_ui_value
from tests.support.flags import options_from

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
    assert settings.model.context == 8192 and settings.model.gpu_layers == -1 and settings.sampling.temperature == 0.7
    assert settings.chat.instructions == "Be concise." and settings.keymap == {"cycle-effort": "ctrl+e"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[model]\ncontext = "big"\n', "line 2: model.context must be an integer"),
        ('[chat]\n\neffort = "extreme"\n', "line 3: chat.effort must be low, medium or high"),
        ("[ui]\ncolour = 1\n", "line 2: unknown setting 'colour' in [ui]"),
        ("[model]\npath = 1\n[wat]\nx = 1\n", "line 2: model.path must be a string"),
        ("[wat]\nx = 1\n", "line 1: unknown section [wat]"),
        ("[model\npath = 1\n", "at line 1"),
        ("[keymap]\nquit = 5\n", "line 2: keymap.quit must be a string"),
        ("[ui]\ndebug = 'maybe'\n", "line 2: ui.debug must be true or false"),
        ("[sampling]\ntemperature = 'hot'\n", "line 2: sampling.temperature must be a number"),
        ("model = 5\n", "line 1: [model] must be a table"),
        # issue 17, item 24: values that passed silently or named the wrong line
        ("[keymap]\nquit = 'ctrl+q'\n# the help key\nhelpp = 'f2'\n", "line 4: unknown key binding id 'helpp'"),
        ("[model]\npath = 'm.gguf'\ncontext = 100\n", "line 3: model.context must be at least 256"),
        ("[ui]\ntheme = 'harmony-neon'\n", "line 2: ui.theme: unknown theme 'harmony-neon'"),
        ("model.context = 100\n", "line 1: model.context must be at least 256"),
        # issue 17, item 15: a negative answer limit cut every turn off at 0 tokens
        ("[sampling]\nmax_tokens = -5\n", "line 2: sampling.max_tokens must be at least 1"),
        ("[sampling]\nmax_tokens = 0\n", "line 2: sampling.max_tokens must be at least 1"),
        ("[model]\ngpu_layers = -2\n", "line 2: model.gpu_layers must be at least -1"),
        ("[model]\nthreads = 0\n", "line 2: model.threads must be at least 1"),
        ("[sampling]\ntemperature = -0.5\n", "line 2: sampling.temperature must be at least 0"),
        # true/false is no number (pydantic's lax mode made max_tokens = true a limit of 1 token)
        ("[sampling]\nmax_tokens = true\n", "line 2: sampling.max_tokens must be an integer"),
        ("[sampling]\nseed = false\n", "line 2: sampling.seed must be an integer"),
        ("[sampling]\ntemperature = false\n", "line 2: sampling.temperature must be a number"),
        ("[tools]\ntimeout = true\n", "line 2: tools.timeout must be a number"),
        ("theme = 'harmony-light'\n", "line 1: unknown setting 'theme' outside any [section]"),
    ],
)
def test_bad_config_names_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"config file {path}") as raised:
        load_settings(path)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_themes_from_the_user_theme_folder_and_textual_are_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARMONY_CHAT_CONFIG_DIR", str(tmp_path))
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "mine.toml").write_text('name = "my-theme"\nprimary = "#ff0000"\n')
    path = tmp_path / "config.toml"
    for theme in ("my-theme", "nord", "harmony-light"):
        path.write_text(f'[ui]\ntheme = "{theme}"\n')
        assert load_settings(path).ui.theme == theme


def test_environment_variables_set_values_and_name_themselves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text(GOOD)
    monkeypatch.setenv("HARMONY_CHAT_MODEL__CONTEXT", "4096")
    monkeypatch.setenv("harmony_chat_ui__debug", "true")
    settings = load_settings(path)
    assert settings.model.context == 4096 and settings.ui.debug  # the environment wins over the file
    assert settings.sampling.temperature == 0.7 and settings.chat.effort == "high"  # the rest of the file stays
    monkeypatch.setenv("HARMONY_CHAT_MODEL__MAX_TOKENS", "-5")
    with pytest.raises(ConfigError) as raised:
        load_settings(path)
    assert (
        str(raised.value) == "environment variable HARMONY_CHAT_MODEL__MAX_TOKENS: model.max_tokens must be at least 1"
    )


def test_unreadable_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a file"):
        load_settings(tmp_path)
    broken = tmp_path / "broken.toml"
    broken.write_bytes(b"\xff\xfe[ui]")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings(broken)


def test_binding_ids_match_the_app() -> None:
    from harmony_chat.config import BINDING_IDS
    from harmony_chat.tui.bindings import ALL_KEYS

    assert BINDING_IDS == tuple(key.id for key in ALL_KEYS)


def test_theme_names_match_the_app() -> None:
    from harmony_chat.config import theme_names
    from harmony_chat.tui.themes import load_themes

    assert theme_names() == {theme.name for theme in load_themes().themes}


def test_cli_options_override_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(GOOD)
    options = options_from("--config", str(path), "--effort", "low")
    assert options.settings.chat.effort == "low" and options.settings.model.context == 8192
    assert options.model_path == Path.home() / "models" / "gpt-oss-20b.gguf"
    demo = options_from("--config", str(path), "--demo")
    assert demo.demo and demo.model_path is None and demo.uses_pocket
    assert not options.uses_pocket and ChatOptions().uses_pocket


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


COMMENTED = """# my settings
[ui]  # how it looks
theme = "harmony-dark"  # the dark one, for now
debug = false

[keymap]
# remapped because of tmux
cycle-effort = "ctrl+e"
"""


def test_saving_the_theme_keeps_comments_and_layout(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    save_ui_value(path, "theme", "harmony-light")
    assert path.read_text() == COMMENTED.replace('theme = "harmony-dark"', 'theme = "harmony-light"')


def test_saved_values_are_escaped(tmp_path: Path) -> None:
    """The value used to be pasted into the file as text: a quote broke the file."""
    path = tmp_path / "config.toml"
    path.write_text('[ui]\ntheme = "harmony-dark"\n')
    save_ui_value(path, "theme", 'odd "name" \\ here')
    assert tomllib.loads(path.read_text())["ui"]["theme"] == 'odd "name" \\ here'


def test_saving_into_a_broken_file_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[ui\n")
    with pytest.raises(ConfigError, match=f"config file {path}"):
        save_ui_value(path, "theme", "harmony-light")
    assert path.read_text() == "[ui\n"


def test_bad_config_on_the_command_line_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harmony_chat.cli import main

    path = tmp_path / "config.toml"
    path.write_text("[chat]\neffort = 3\n")
    assert main(["--config", str(path)]) == 1
    assert capsys.readouterr().err == f"error: config file {path}, line 2: chat.effort must be low, medium or high\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # --threads 1000000 crashed llama.cpp (exit 139); a huge number aborted it (std::bad_alloc)
        ("[model]\nthreads = 513\n", "line 2: model.threads must be at most 512"),
        ("[model]\nthreads = 99999999999999999999\n", "line 2: model.threads must be at most 512"),
        ("[model]\ncontext = 1048577\n", "line 2: model.context must be at most 1048576"),
        ("[sampling]\nmax_tokens = 1048577\n", "line 2: sampling.max_tokens must be at most 1048576"),
        ("[model]\ngpu_layers = 2147483648\n", "line 2: model.gpu_layers must be at most 2147483647"),
        ("[sampling]\ntemperature = 2.5\n", "line 2: sampling.temperature must be at most 2"),
        ("[sampling]\ntemperature = inf\n", "line 2: sampling.temperature must be a finite number"),
        ("[sampling]\ntemperature = nan\n", "line 2: sampling.temperature must be a finite number"),
        ("[sampling]\nseed = -1\n", "line 2: sampling.seed must be at least 0"),
        ("[sampling]\nseed = 4294967295\n", "line 2: sampling.seed must be at most 4294967294"),
        ("[reasoning]\nlive_every = 1048577\n", "line 2: reasoning.live_every must be at most 1048576"),
        ("[tools]\nmax_steps = 1001\n", "line 2: tools.max_steps must be at most 1000"),
        ("[tools]\ntimeout = inf\n", "line 2: tools.timeout must be a finite number"),
        ("[tools]\ntimeout = 86401\n", "line 2: tools.timeout must be at most 86400"),
        ("[tools]\npython_timeout = -inf\n", "line 2: tools.python_timeout must be a finite number"),
    ],
)
def test_every_number_has_an_upper_bound(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_settings(path)
    assert str(raised.value) == f"config file {path}, {message}"


def test_the_bounds_themselves_are_allowed(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        "[model]\nthreads = 512\ncontext = 1048576\ngpu_layers = 2147483647\n"
        "[sampling]\nmax_tokens = 1048576\ntemperature = 2.0\nseed = 4294967294\n"
        "[tools]\nmax_steps = 1000\ntimeout = 86400\n"
    )
    settings = load_settings(path)
    model, sampling = settings.model, settings.sampling
    assert (model.threads, model.context, sampling.temperature, sampling.seed) == (512, 1048576, 2.0, 4294967294)


def test_an_infinite_number_from_the_environment_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HARMONY_CHAT_MODEL__TEMPERATURE", "inf")
    with pytest.raises(ConfigError) as raised:
        load_settings(tmp_path / "none.toml")
    assert (
        str(raised.value)
        == "environment variable HARMONY_CHAT_MODEL__TEMPERATURE: model.temperature must be a finite number"
    )


def _number_fields() -> list[tuple[str, str, object]]:
    """Every int or float setting, as (section, key, its field)."""
    from harmony_chat.config import Settings
    from harmony_chat.config_section import Section

    found: list[tuple[str, str, object]] = []
    sections = [(name, field.annotation) for name, field in Settings.model_fields.items()]
    while sections:
        name, model = sections.pop()
        if not (isinstance(model, type) and issubclass(model, Section)):
            continue
        for key, field in model.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, Section):
                sections.append((f"{name}.{key}", field.annotation))
            elif {int, float} & {field.annotation, *getattr(field.annotation, "__args__", ())}:
                found.append((name, key, field))
    return found


def test_every_number_setting_is_bounded_above() -> None:
    """A new number setting needs its upper bound too (a test keeps them in step)."""
    numbers = _number_fields()
    assert {(section, key) for section, key, _ in numbers} >= {("model", "threads"), ("tools", "timeout")}
    unbounded = [
        f"{section}.{key}"
        for section, key, field in numbers
        if not any(hasattr(rule, "le") or hasattr(rule, "lt") for rule in getattr(field, "metadata", []))
    ]
    assert unbounded == []


posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits, owners and links")


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The common umask (022): a file written plainly comes out 0644, readable by everyone."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@posix_only
@pytest.mark.parametrize("original", [0o600, 0o640, 0o400], ids=["0600", "0640", "0400"])
def test_saving_keeps_the_files_mode(tmp_path: Path, usual_umask: None, original: int) -> None:
    """A 0600 config holding an API key became 0644 when the app saved the theme."""
    path = tmp_path / "config.toml"
    path.write_text('[model]\napi_key = "sk-secret"\n')
    path.chmod(original)
    save_ui_value(path, "theme", "harmony-light")
    assert _mode(path) == original and load_settings(path).ui.theme == "harmony-light"
    assert sorted(tmp_path.iterdir()) == [path]  # no temporary file left behind


@posix_only
def test_saving_writes_through_a_link_to_its_target(tmp_path: Path, usual_umask: None) -> None:
    """A config kept in a dotfiles repository stays a link; the file it points to gets the value."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "harmony-chat.toml"
    target.write_text(COMMENTED)
    target.chmod(0o600)
    link = tmp_path / "config" / "config.toml"
    link.parent.mkdir()
    link.symlink_to(Path("..") / "dotfiles" / "harmony-chat.toml")
    save_ui_value(link, "theme", "harmony-light")
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text() == COMMENTED.replace('theme = "harmony-dark"', 'theme = "harmony-light"')
    assert _mode(target) == 0o600 and sorted(dotfiles.iterdir()) == [target]


@posix_only
@pytest.mark.skipif(os.name == "posix" and os.geteuid() != 0, reason="only root may give a file to another user")
def test_saving_keeps_the_owner(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[ui]\n")
    os.chown(path, 12345, 23456)
    save_ui_value(path, "theme", "harmony-light")
    assert (path.stat().st_uid, path.stat().st_gid) == (12345, 23456)


@posix_only
def test_a_new_config_is_private(tmp_path: Path, usual_umask: None) -> None:
    path = tmp_path / "new" / "harmony-chat" / "config.toml"
    save_ui_value(path, "theme", "harmony-light")
    assert (_mode(path), _mode(path.parent), _mode(path.parent.parent)) == (0o600, 0o700, 0o700)


def test_a_config_nested_too_deeply_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("x = " + "[" * 100_000 + "\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(path)
    assert str(raised.value) == f"config file {path}: its values nest too deeply"
    with pytest.raises(ConfigError, match=f"^config file {path}: ") as raised:
        save_ui_value(path, "theme", "harmony-light")
    assert "\n" not in str(raised.value) and path.read_text().startswith("x = [[[")
