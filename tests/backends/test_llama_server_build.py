"""Building llama-server for the tests: once under a lock, against the wheel when it can, announced; named failures."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harmony_chat.backends.remote import llama_server_build as build
from tests.support import llama_server


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


def test_concurrent_builds_build_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers (or two runs) that both lack the binary: one builds, the other waits and reuses it."""
    monkeypatch.delenv(build.BINARY_ENV, raising=False)
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    started = threading.Event()
    builds: list[Path] = []

    def slow_build(cmake: str, target: Path, log: Callable[[str], None], quick: bool | None) -> None:
        builds.append(target)
        started.set()
        time.sleep(0.5)  # the other caller arrives while this one builds
        binary = target / "bin" / "llama-server"
        binary.parent.mkdir(parents=True)
        binary.write_text("#!/bin/sh\n")

    monkeypatch.setattr(build, "_build", slow_build)
    logs: list[str] = []
    results: list[Path] = []
    first = threading.Thread(target=lambda: results.append(build.build_llama_server(tmp_path, log=logs.append)))
    first.start()
    assert started.wait(10)
    results.append(build.build_llama_server(tmp_path, log=logs.append))
    first.join(10)
    assert builds == [build.install_dir(tmp_path)]
    assert results == [build.server_binary(tmp_path)] * 2
    assert any(line.startswith("another process is building llama-server; waiting") for line in logs)


def test_the_quick_build_links_the_installed_wheel(tmp_path: Path) -> None:
    """The quick build's CMakeLists names the wheel's libraries and llama.cpp's own version."""
    source = tmp_path / "llama.cpp"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(
        "set(LLAMA_VERSION_MAJOR 0)\nset(LLAMA_VERSION_MINOR 5)\nset(LLAMA_VERSION_PATCH 2)\n", encoding="utf-8"
    )
    text = build.quick_cmakelists(source, tmp_path / "lib")
    assert 'set(LLAMA_VERSION_BASE "0.5.2")' in text
    assert f'IMPORTED_LOCATION "{(tmp_path / "lib").as_posix()}/lib${{name}}.so"' in text
    assert "foreach(name llama ggml ggml-base mtmd)" in text and "add_subdirectory(tools/server)" in text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the quick build is for Linux")
def test_the_installed_wheel_has_the_libraries_the_quick_build_needs() -> None:
    folder = build.wheel_library_dir()
    assert folder is not None and (folder / "libllama.so").exists()


def test_the_run_header_says_what_happens_to_llama_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(build.BINARY_ENV, raising=False)
    monkeypatch.setattr(llama_server, "BUILD_ROOT", tmp_path)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert llama_server.status_line().startswith("llama-server: not built and no cmake: its tests are skipped")
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    line = llama_server.status_line()
    assert line.startswith("llama-server: not built yet: the first test that needs it builds it once (~")
    assert "skipped" in line and str(build.install_dir(tmp_path).parent) in line
    binary = build.server_binary(tmp_path)
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    assert llama_server.status_line() == f"llama-server: cached at {binary}"
    monkeypatch.setenv(build.BINARY_ENV, "/opt/llama-server")
    assert llama_server.status_line() == f"llama-server: ${build.BINARY_ENV} = /opt/llama-server"
