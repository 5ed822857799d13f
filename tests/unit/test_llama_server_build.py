"""Building llama-server for the tests: sources that cannot be fetched are named, not a build failure."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harmony_chat.backends.remote import llama_server_build as build


@pytest.fixture
def no_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No pip index and an empty folder of links: what pip sees offline with nothing cached."""
    empty = tmp_path / "links"
    empty.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    monkeypatch.delenv(build.SDIST_ENV, raising=False)
    monkeypatch.delenv(build.BINARY_ENV, raising=False)


@pytest.mark.usefixtures("no_index")
def test_sources_that_cannot_be_fetched_are_named(tmp_path: Path) -> None:
    with pytest.raises(build.SdistUnavailable) as raised:
        build.fetch_sdist(tmp_path / "sdist", lambda line: None)
    message = str(raised.value)
    assert message.startswith(f"pip cannot download the llama-cpp-python=={build.LLAMA_CPP_PYTHON_VERSION} sdist (")
    assert build.SDIST_ENV in message and build.BINARY_ENV in message and "\n" not in message


@pytest.mark.usefixtures("no_index")
def test_the_build_command_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("cmake") is None:
        pytest.skip("without CMake the build stops before fetching the sources")
    monkeypatch.setenv("HARMONY_CHAT_CACHE_DIR", str(tmp_path / "cache"))
    assert build.main() == 1
    err = capsys.readouterr().err
    assert err.startswith("error: pip cannot download the llama-cpp-python") and err.count("\n") == 1
    assert not build.server_binary(tmp_path / "cache").exists()


def test_a_named_sdist_that_is_missing_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(build.SDIST_ENV, str(tmp_path / "nothing.tar.gz"))
    with pytest.raises(build.BuildError, match="which is not a file") as raised:
        build.fetch_sdist(tmp_path, lambda line: None)
    assert not isinstance(raised.value, build.SdistUnavailable)  # a wrong path is the user's to fix, not offline
