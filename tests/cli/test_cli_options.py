"""The command line's options: bounds shared with the config file, and options given before a command."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harmony_chat.chat.options import ChatOptions
from harmony_chat.cli import main
from harmony_chat.config import ConfigError, load_settings
from harmony_chat.errors import HarmonyChatError


class Stopped(HarmonyChatError):
    """Raised where a command would start its model: the test has what it needs by then."""


@dataclass
class Started:
    """The options each command would have run with."""

    options: list[ChatOptions] = field(default_factory=list)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Started:
    """Nothing runs: ``ask``, ``serve``, the app and ``bench`` record their options and stop before a model."""
    seen = Started()

    def record_ask(request: object) -> int:
        seen.options.append(request.options)  # type: ignore[attr-defined]
        return 0

    def record_load(options: ChatOptions, progress: object) -> object:
        seen.options.append(options)
        raise Stopped("stopped before loading the model")

    def record_app(options: ChatOptions, *rest: object) -> None:
        seen.options.append(options)

    def no_bench(*args: object, **kwargs: object) -> object:
        raise Stopped("stopped before the benchmark")

    monkeypatch.setattr("harmony_chat.cli.ask.run_ask", record_ask)
    monkeypatch.setattr("harmony_chat.chat.factory.load_model", record_load)
    monkeypatch.setattr("harmony_chat.tui.app.run_tui", record_app)
    monkeypatch.setattr("harmony_chat.cli.root._require_terminal", lambda: None)
    monkeypatch.setattr("harmony_chat.tui.bench.run_tui_bench", no_bench)
    return seen


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "setting", "value"),
    [
        ("--threads", "model.threads", "1000000"),  # segfaulted llama.cpp (exit 139)
        ("--threads", "model.threads", "0"),
        ("--ctx", "model.context", "2000000"),
        ("--temperature", "sampling.temperature", "inf"),
        ("--temperature", "sampling.temperature", "nan"),
        ("--temperature", "sampling.temperature", "2.5"),
        ("--max-tokens", "sampling.max_tokens", "9999999"),
        ("--seed", "sampling.seed", "4294967296"),
        ("--seed", "sampling.seed", "-1"),
        ("--gpu-layers", "model.gpu_layers", "99999999999"),
        ("--max-steps", "tools.max_steps", "100000"),
    ],
)
def test_options_are_checked_by_the_settings_rule(
    capsys: pytest.CaptureFixture[str], started: Started, tmp_path: Path, flag: str, setting: str, value: str
) -> None:
    """The command line and the config file share one bound: the same words, from the same rule."""
    section, key = setting.split(".")
    path = tmp_path / "c.toml"
    path.write_text(f"[{section}]\n{key} = {value}\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(path)
    rule = str(raised.value).removeprefix(f"config file {path}, line 2: {setting} ")
    commands = [["ask", "--demo", "hi"], ["--demo"]]
    if section in ("model", "sampling"):
        commands.append(["serve", "--demo"])
    if flag in ("--threads", "--ctx", "--gpu-layers"):
        commands.append(["bench", "--tui"])
    for command in commands:
        code, err = run(capsys, *command, flag, value)
        assert (code, err) == (2, f"error: Invalid value for '{flag}': {value} {rule}\n"), command
    assert started.options == []


def test_bench_token_counts_are_bounded_like_max_tokens(capsys: pytest.CaptureFixture[str], started: Started) -> None:
    for flag in ("--tokens", "--tui-tokens", "--chat-tokens"):
        code, err = run(capsys, "bench", "--tui", flag, "99999999")
        assert (code, err) == (2, f"error: Invalid value for '{flag}': 99999999 must be at most 1048576\n")
    code, err = run(capsys, "bench", "--tui", "--runs", "100000")
    assert code == 2 and "--runs" in err and "1000" in err and err.count("\n") == 1


def test_serve_queue_is_bounded(capsys: pytest.CaptureFixture[str], started: Started) -> None:
    code, err = run(capsys, "serve", "--demo", "--max-queue", "100000000")
    assert code == 2 and "--max-queue" in err and "10000" in err and err.count("\n") == 1
    assert started.options == []


def test_values_at_the_bounds_are_used(capsys: pytest.CaptureFixture[str], started: Started) -> None:
    args = ["--threads", "512", "--temperature", "2", "--seed", "4294967294", "--ctx", "1048576", "--max-steps", "1000"]
    code, err = run(capsys, "ask", "--demo", "hi", *args)
    assert (code, err) == (0, "")
    (options,) = started.options
    model, sampling = options.settings.model, options.settings.sampling
    assert (model.threads, sampling.temperature, sampling.seed, model.context) == (512, 2.0, 4294967294, 1048576)
    assert options.settings.tools.max_steps == 1000


LOW_EFFORT = '[chat]\neffort = "low"\n[model]\ntemperature = 0.25\n'


def test_config_before_the_command_applies_to_ask_and_serve(
    capsys: pytest.CaptureFixture[str], started: Started, tmp_path: Path
) -> None:
    """``harmony-chat --config FILE ask`` (and ``serve``) used to read the default config instead."""
    config = tmp_path / "config.toml"
    config.write_text(LOW_EFFORT)
    code, err = run(capsys, "--config", str(config), "ask", "--demo", "hi")
    assert (code, err) == (0, "")
    code, err = run(capsys, "--config", str(config), "serve", "--demo", "--port", "0")
    assert (code, err) == (1, "error: stopped before loading the model\n")
    chats = [options.settings.chat for options in started.options]
    samplings = [options.settings.sampling for options in started.options]
    assert [(chat.effort, s.temperature) for chat, s in zip(chats, samplings, strict=True)] == [("low", 0.25)] * 2
    assert all(options.settings.path == config for options in started.options)


def test_a_bad_config_before_the_command_is_one_error(
    capsys: pytest.CaptureFixture[str], started: Started, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[model]\nthreads = 1000000\n")
    for command in (["ask", "--demo", "hi"], ["serve", "--demo"]):
        code, err = run(capsys, "--config", str(config), *command)
        assert (code, err) == (1, f"error: config file {config}, line 2: model.threads must be at most 512\n")
    assert started.options == []


def test_the_commands_own_config_wins(capsys: pytest.CaptureFixture[str], started: Started, tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer.toml", tmp_path / "inner.toml"
    outer.write_text(LOW_EFFORT)
    inner.write_text('[chat]\neffort = "high"\n')
    assert run(capsys, "--config", str(outer), "ask", "--config", str(inner), "--demo", "hi") == (0, "")
    assert [options.settings.chat.effort for options in started.options] == ["high"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--demo", "ask", "hi"], "--demo goes after the command: harmony-chat ask --demo ..."),
        (["--effort", "low", "serve"], "--effort goes after the command: harmony-chat serve --effort ..."),
        (["--threads", "4", "bench", "--tui"], "--threads goes after the command: harmony-chat bench --threads ..."),
        (["--history-db", "h.sqlite3", "ask", "hi"], "--history-db does not apply to `harmony-chat ask`"),
        (["--no-history", "serve"], "--no-history does not apply to `harmony-chat serve`"),
        (["--model", "m.gguf", "history", "list"], "--model does not apply to `harmony-chat history`"),
        (
            ["--config", "{config}", "bench", "--tui"],
            "--config does not apply to `harmony-chat bench`: it reads no config file",
        ),
        (
            ["--config", "{config}", "models"],
            "--config does not apply to `harmony-chat models`: it reads no config file",
        ),
    ],
)
def test_options_before_a_command_that_would_not_use_them_are_refused(
    capsys: pytest.CaptureFixture[str], started: Started, tmp_path: Path, args: list[str], message: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(LOW_EFFORT)
    code, err = run(capsys, *[arg.format(config=config) for arg in args])
    assert (code, err) == (2, f"error: {message}\n")
    assert started.options == []
