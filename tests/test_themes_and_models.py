"""Theme files and model discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from harmony_chat.gguf.discovery import find_models
from harmony_chat.locations import bundled_theme_dir
from harmony_chat.tui.themes import REQUIRED_VARIABLES, load_themes


def test_bundled_themes_load_and_define_every_variable(tmp_path: Path) -> None:
    loaded = load_themes(tmp_path)
    names = {theme.name for theme in loaded.themes}
    assert {"harmony-dark", "harmony-light", "harmony-high-contrast", "harmony-solarized"} <= names
    assert loaded.failures == []
    assert any(not theme.dark for theme in loaded.themes)
    for theme in loaded.themes:
        assert set(REQUIRED_VARIABLES) <= set(theme.variables), theme.name
    assert (bundled_theme_dir() / "harmony-dark.toml").is_file()


def test_user_themes_load_and_bad_ones_are_reported(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#ff0000"\ndark = false\n')
    (tmp_path / "broken.toml").write_text('name = "broken"\nprimary = "not a colour"\n')
    (tmp_path / "nameless.toml").write_text('primary = "#ffffff"\n')
    loaded = load_themes(tmp_path)
    mine = next(theme for theme in loaded.themes if theme.name == "mine")
    assert mine.variables["channel-final"]
    assert len(loaded.failures) == 2
    assert any("broken.toml" in failure for failure in loaded.failures)
    assert any("nameless.toml: needs a name" in failure for failure in loaded.failures)


def test_find_models_keeps_gpt_oss_only(tmp_path: Path, tiny_gguf: Path) -> None:
    hub = tmp_path / "hub" / "models--x--y" / "snapshots" / "abc"
    hub.mkdir(parents=True)
    (hub / "gpt-oss-tiny.gguf").symlink_to(tiny_gguf)
    (hub / "notes.gguf").write_text("not a model")
    (hub / "model-00002-of-00003.gguf").write_bytes(b"GGUF")
    other = tmp_path / "models"
    other.mkdir()
    (other / "same.gguf").symlink_to(tiny_gguf)
    found = find_models([("Hugging Face cache", tmp_path / "hub"), ("~/models", other), ("none", tmp_path / "x")])
    assert [model.path.name for model in found] == ["gpt-oss-tiny.gguf"]
    assert found[0].source == "Hugging Face cache" and found[0].size_gb > 0.01


def test_models_command(
    tmp_path: Path, tiny_gguf: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harmony_chat.cli import main

    assert main(["models"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "No gpt-oss GGUF files found" in captured.err and "--hf-repo" in captured.err
    (isolated_home / "models").mkdir()
    (isolated_home / "models" / "tiny.gguf").symlink_to(tiny_gguf)
    assert main(["models"]) == 0
    line = capsys.readouterr().out.strip()
    size = tiny_gguf.stat().st_size
    assert 1e6 < size < 1e9  # a small file: it used to be listed as "0.0 GB"
    assert line == f"{isolated_home / 'models' / 'tiny.gguf'}\t{size / 1e6:.1f} MB\t~/models"


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (12_800_000_000, "12.8 GB"),
        (38_200_000, "38.2 MB"),
        (640_000, "640.0 kB"),
        (512, "512 B"),
        (999_999_999, "1.0 GB"),
        (2_500_000_000_000, "2.5 TB"),
    ],
)
def test_model_sizes_are_shown_in_a_unit_that_fits(size: int, shown: str) -> None:
    from harmony_chat.gguf.discovery import FoundModel

    assert FoundModel(Path("m.gguf"), "~/models", size).size_text == shown
