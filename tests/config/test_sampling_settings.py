"""``[sampling]``: the backends' SamplingParams as settings, its generated flags, the keys it took from [model]."""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from harmony_chat.backends.base import SamplingParams
from harmony_chat.chat.options import ChatOptions
from harmony_chat.cli.options import APP, EVERY_CHAT, FLAGS, SERVE
from harmony_chat.cli.settings_digest import SETTINGS
from harmony_chat.config import ConfigError, SamplingSettings, load_settings
from tests.support.flags import options_from, parse_flags

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_sampling_key_is_the_backends_field_of_its_name_with_its_default() -> None:
    """The two shapes cannot drift: a key the backends do not take, or another default, fails here."""
    params = {field.name: field for field in dataclasses.fields(SamplingParams)}
    for key, field in SamplingSettings.model_fields.items():
        assert key in params, f"[sampling] {key} is no SamplingParams field"
        assert field.default == params[key].default, key
    assert {"temperature", "top_p", "top_k", "min_p", "seed", "max_tokens"} <= set(SamplingSettings.model_fields)
    assert ChatOptions().sampling == SamplingParams()


def test_a_sampling_key_in_the_config_file_or_the_environment_reaches_the_backends_sampling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, "[sampling]\ntop_k = 40\nmin_p = 0.05\nfrequency_penalty = 0.5\n")
    monkeypatch.setenv("HARMONY_CHAT_SAMPLING__TOP_P", "0.9")
    settings = load_settings(config)
    sampling = ChatOptions(settings).sampling
    assert (sampling.top_k, sampling.min_p, sampling.top_p, sampling.frequency_penalty) == (40, 0.05, 0.9, 0.5)
    assert settings.notices == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[sampling]\ntop_p = 0\n", "line 2: sampling.top_p must be more than 0"),
        ("[sampling]\ntop_k = -1\n", "line 2: sampling.top_k must be at least 0"),
        ("[sampling]\nmin_p = 1.5\n", "line 2: sampling.min_p must be at most 1"),
        ("[sampling]\npresence_penalty = -2.5\n", "line 2: sampling.presence_penalty must be at least -2"),
        # a moved key keeps its old name and line, beside a [sampling] table too
        ("[sampling]\ntop_k = 5\n[model]\nseed = -1\n", "line 4: model.seed must be at least 0"),
    ],
)
def test_a_bad_sampling_value_names_its_key_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = _config(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_settings(path)
    assert str(raised.value) == f"config file {path}, {message}"


def test_the_command_line_flags_are_generated_from_the_section() -> None:
    """Every [sampling] key is a flag of every chat command; ``--top-k 40`` reaches the backends' sampling."""
    flags = {flag.setting: flag for flag in FLAGS if flag.setting}
    for key in SamplingSettings.model_fields:
        flag = flags[f"sampling.{key}"]
        assert flag.name == "--" + key.replace("_", "-") and flag.commands == EVERY_CHAT
    assert [path for path in SETTINGS if path.startswith("sampling.")] == [
        f"sampling.{key}" for key in SamplingSettings.model_fields
    ]
    assert options_from("--top-k", "40", "--min-p", "0.1").sampling.top_k == 40
    for command in (APP, SERVE):
        assert parse_flags("--top-k", "40", command=command).settings == {"sampling.top_k": 40}


def test_a_flag_out_of_bounds_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from harmony_chat.cli import main

    assert main(["ask", "--demo", "hi", "--top-p", "3"]) == 2
    assert capsys.readouterr().err == "error: Invalid value for '--top-p': 3.0 must be at most 1\n"


def test_old_model_keys_still_work_and_say_once_where_they_moved(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _config(tmp_path, "[model]\ntemperature = 0.3\ncontext = 4096\n")
    with caplog.at_level(logging.WARNING, logger="harmony_chat.config"):
        settings = load_settings(path)
    assert settings.sampling.temperature == 0.3 and ChatOptions(settings).sampling.temperature == 0.3
    assert settings.model.context == 4096  # the rest of [model] is read as before
    (notice,) = settings.notices
    assert notice == (
        f"[model] temperature moved to [sampling] (config file {path}, line 2): "
        "still read, but write it under [sampling]"
    )
    assert [record.getMessage() for record in caplog.records] == [f"note: {notice}"]


def test_an_old_environment_variable_still_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARMONY_CHAT_MODEL__SEED", "5")
    settings = load_settings(tmp_path / "none.toml")
    assert settings.sampling.seed == 5
    assert settings.notices == (
        "[model] seed moved to [sampling] (environment variable HARMONY_CHAT_MODEL__SEED): still read, "
        "but write it under [sampling]",
    )


def test_the_note_reaches_stderr_as_one_line(tmp_path: Path) -> None:
    """Outside pytest's log capture, the note is one line on stderr (Python's last-resort handler)."""
    path = _config(tmp_path, "[model]\nmax_tokens = 100\nseed = 3\n")
    code = (
        f"from pathlib import Path; from harmony_chat.config import load_settings; load_settings(Path({str(path)!r}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stderr == (
        f"note: [model] max_tokens, seed moved to [sampling] (max_tokens: config file {path}, line 2; seed: config "
        f"file {path}, line 3): still read, but write them under [sampling]\n"
    )


def test_a_key_at_both_places_is_an_error_naming_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _config(tmp_path, "[model]\ntemperature = 0.3\n[sampling]\ntemperature = 0.5\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(path)
    assert str(raised.value) == (
        f"[model] temperature (config file {path}, line 2) and [sampling] temperature (config file {path}, line 4) "
        "are one setting: [model] temperature moved to [sampling], keep only [sampling] temperature"
    )
    _config(tmp_path, "[sampling]\nmax_tokens = 50\n")
    monkeypatch.setenv("HARMONY_CHAT_MODEL__MAX_TOKENS", "60")
    with pytest.raises(
        ConfigError, match=r"^\[model\] max_tokens \(environment variable HARMONY_CHAT_MODEL__MAX_TOKENS\) "
    ):
        load_settings(path)
