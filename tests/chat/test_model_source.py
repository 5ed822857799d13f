"""The model source: the six model options read into one tagged type, and a backend for every kind."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from harmony_chat.chat.factory import BACKENDS, create_backend
from harmony_chat.chat.model_source import (
    DemoReplay,
    Engine,
    Gguf,
    HuggingFaceFile,
    ModelSource,
    Pocket,
    Recording,
    UsageProblem,
    model_source,
)
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import default_settings
from harmony_chat.errors import ModelError
from tests.support.flags import options_from


def _options(values: dict[str, object] | None = None, **given: typing.Any) -> ChatOptions:
    return ChatOptions(default_settings(values or {}), **given)


@pytest.mark.parametrize(
    ("options", "source"),
    [
        (_options(), Pocket(fallback=True)),
        (_options({"model.hf_file": "f.gguf"}), Pocket(fallback=True)),  # hf_file counts only with hf_repo
        (_options(demo=True), Pocket()),
        (_options({"model.hf_repo": "r"}, demo=True), Pocket()),
        (_options({"model.path": "/models/a.gguf"}), Gguf(Path("/models/a.gguf"))),
        (_options({"model.path": "~/a.gguf"}), Gguf(Path.home() / "a.gguf")),
        (_options({"model.hf_repo": "org/repo", "model.hf_file": "m.gguf"}), HuggingFaceFile("org/repo", "m.gguf")),
        (_options({"model.url": "http://h:1"}), Engine("http://h:1")),
        (
            _options(
                {
                    "model.url": "http://h:1",
                    "model.engine": "vllm",
                    "model.api_key": "k",
                    "model.served_model": "gpt-oss-20b",
                    "model.hf_repo": "ignored",
                }
            ),
            Engine("http://h:1", "vllm", "k", "gpt-oss-20b"),
        ),
        (_options(replay=Path("r.txt"), replay_delay=0.5), Recording(Path("r.txt"), 0.5)),
        (_options(replay_demo=True), DemoReplay()),
        (_options(replay_demo=True, demo=True, replay_delay=0.02), DemoReplay(0.02)),  # the recordings win
    ],
)
def test_each_combination_of_options_names_one_source(options: ChatOptions, source: ModelSource) -> None:
    assert model_source(options) == source == options.source == options.valid_source
    assert options.uses_pocket == isinstance(source, Pocket)


@pytest.mark.parametrize(
    ("args", "source"),
    [
        ([], Pocket(fallback=True)),
        (["--demo"], Pocket()),
        (["--model", "/m/a.gguf"], Gguf(Path("/m/a.gguf"))),
        (["--hf-repo", "o/r", "--hf-file", "f.gguf"], HuggingFaceFile("o/r", "f.gguf")),
        (["--url", "http://h:1", "--engine", "sglang"], Engine("http://h:1", "sglang")),
        (["--replay", "t.txt"], Recording(Path("t.txt"))),
    ],
)
def test_the_command_line_flags_name_the_source(args: list[str], source: ModelSource) -> None:
    assert options_from(*args).source == source


def test_a_source_on_the_command_line_replaces_the_config_files(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[model]\npath = "/models/a.gguf"\n', encoding="utf-8")
    assert options_from("--config", str(config)).source == Gguf(Path("/models/a.gguf"))
    assert options_from("--config", str(config), "--url", "http://h:1").source == Engine("http://h:1")
    assert options_from("--config", str(config), "--demo").source == Pocket()


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (_options({"model.url": "http://h:1"}, replay=Path("a.txt")), UsageProblem, "not --replay, --url$"),
        (_options({"model.path": "a.gguf", "model.url": "u"}), UsageProblem, "not --model, --url$"),
        (_options({"model.path": "a.gguf"}, demo=True), UsageProblem, "not --model and --demo$"),
        (_options(replay=Path("a.txt"), replay_demo=True), UsageProblem, "not --replay and --replay-demo$"),
        (_options({"model.path": "a.gguf", "model.hf_repo": "r"}), ModelError, "--model or --hf-repo/--hf-file"),
        (_options({"model.path": "a.gguf", "model.hf_file": "f"}), ModelError, "not both"),
        (_options({"model.hf_repo": "r"}), ModelError, "^--hf-repo and --hf-file go together$"),
    ],
)
def test_clashing_options_give_one_line(options: ChatOptions, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message) as raised:
        model_source(options)
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith(("give ", "--hf-repo"))
    with pytest.raises(error, match=message):
        create_backend(options)  # the backend is never built for them
    assert options.valid_source is None
    assert options.uses_pocket == options.demo  # until the load says what clashes, --demo counts


def test_the_model_switch_leaves_one_source() -> None:
    options = _options({"model.url": "http://h:1", "model.hf_file": "f"}, replay=Path("a.txt"))
    options.choose_model(path=Path("/m/b.gguf"))
    assert model_source(options) == Gguf(Path("/m/b.gguf"))
    options.choose_model(replay_demo=True)
    assert model_source(options) == DemoReplay()
    options.choose_model(demo=True)
    assert model_source(options) == Pocket()


def test_every_kind_of_source_has_a_backend() -> None:
    kinds = typing.get_args(ModelSource)
    assert set(kinds) == {Gguf, HuggingFaceFile, Engine, Recording, Pocket, DemoReplay}
    missing = [kind.__name__ for kind in kinds if kind not in BACKENDS]
    assert not missing, f"no backend factory registered for {missing}"
    assert set(BACKENDS) == set(kinds)


def test_the_registry_builds_replays_without_loading_anything(tmp_path: Path) -> None:
    from harmony_chat.backends.replay import ReplayBackend
    from harmony_chat.demo import choose_demo_turn, demo_recording

    recording = tmp_path / "turns.txt"
    backend, path = create_backend(_options(replay=recording, replay_delay=0.25))
    assert isinstance(backend, ReplayBackend) and path is None
    assert (backend.path, backend.delay_s, backend.chooser) == (recording, 0.25, None)
    backend, path = create_backend(_options(replay_demo=True))
    assert isinstance(backend, ReplayBackend) and path is None
    assert (backend.path, backend.delay_s, backend.chooser) == (demo_recording(), 0.0, choose_demo_turn)


def test_a_missing_gguf_is_said_when_the_backend_is_made(tmp_path: Path) -> None:
    options = _options({"model.path": str(tmp_path / "missing.gguf")})
    assert options.source == Gguf(tmp_path / "missing.gguf")  # reading the options checks no file
    with pytest.raises(ModelError, match="model file not found"):
        create_backend(options)


def test_the_engines_api_key_is_not_shown() -> None:
    assert "secret" not in repr(Engine("http://h:1", api_key="secret"))
