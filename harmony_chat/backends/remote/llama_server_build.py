"""Build ``llama-server`` once from the llama.cpp sources vendored in the llama-cpp-python sdist.

The tests drive a real llama-server; this builds it CPU-only (Release, the ``llama-server``
target only, no OpenSSL, no web UI download, portable instructions) into the user cache dir,
where later runs find it. One command does it::

    python -m harmony_chat.backends.remote.llama_server_build

``HARMONY_CHAT_LLAMA_SERVER`` may name an existing ``llama-server`` binary instead, and
``HARMONY_CHAT_LLAMA_CPP_SDIST`` a downloaded ``llama_cpp_python-<version>.tar.gz`` (otherwise
``pip download`` fetches it, from pip's cache when it is there). The build runs under ``nice``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from harmony_chat.errors import HarmonyChatError
from harmony_chat.locations import cache_dir

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
"""The llama-cpp-python release whose vendored llama.cpp is built (the one harmony-chat runs in-process)."""
BINARY_ENV = "HARMONY_CHAT_LLAMA_SERVER"
SDIST_ENV = "HARMONY_CHAT_LLAMA_CPP_SDIST"
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_COMMON=ON",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DGGML_NATIVE=OFF",
    "-DGGML_OPENMP=OFF",
    "-DGGML_CUDA=OFF",
    "-DGGML_METAL=OFF",
    "-DGGML_VULKAN=OFF",
)
"""CPU only, static, only what ``llama-server`` needs; portable so a cached build survives a CPU change."""


class BuildError(HarmonyChatError):
    """llama-server could not be built."""


class SdistUnavailable(BuildError):
    """The llama-cpp-python sdist could not be fetched (no network, or no index holds it)."""


def install_dir(root: Path | None = None) -> Path:
    """Where the built binary lives: ``<cache>/llama-server/llama-cpp-python-<version>``."""
    return (root or cache_dir()) / "llama-server" / f"llama-cpp-python-{LLAMA_CPP_PYTHON_VERSION}"


def server_binary(root: Path | None = None) -> Path:
    """The cached ``llama-server`` (it may not exist yet)."""
    return install_dir(root) / "bin" / "llama-server"


def _nice() -> None:  # pragma: no cover - runs in the child process
    os.nice(10)


def _run(command: list[str], log: Callable[[str], None], cwd: Path | None = None) -> None:
    log("$ " + " ".join(command))
    result = subprocess.run(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_nice if os.name == "posix" else None,
        check=False,
    )
    if result.returncode != 0:
        tail = "\n".join(result.stdout.splitlines()[-15:])
        raise BuildError(f"{command[0]} {command[1]} failed (exit {result.returncode}):\n{tail}")


def fetch_sdist(folder: Path, log: Callable[[str], None]) -> Path:
    """Return the llama-cpp-python sdist: ``$HARMONY_CHAT_LLAMA_CPP_SDIST`` or ``pip download``."""
    given = os.environ.get(SDIST_ENV)
    if given:
        path = Path(given)
        if not path.is_file():
            raise BuildError(f"${SDIST_ENV} names {path}, which is not a file")
        return path
    spec = f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"
    pip = [sys.executable, "-m", "pip", "download", spec, "--no-binary", ":all:", "--no-deps", "-d", str(folder)]
    try:
        _run([*pip, "--retries", "1", "--timeout", "15"], log)
    except BuildError as error:
        reason = str(error).splitlines()[-1].removeprefix("ERROR: ")
        raise SdistUnavailable(
            f"pip cannot download the {spec} sdist ({reason}); set ${SDIST_ENV} to a downloaded "
            f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz, or ${BINARY_ENV} to a llama-server binary"
        ) from error
    found = sorted(folder.glob("llama_cpp_python-*.tar.gz"))
    if not found:
        raise BuildError(f"pip download left no llama-cpp-python sdist in {folder}")
    return found[0]


def extract_llama_cpp(sdist: Path, folder: Path) -> Path:
    """Unpack only ``vendor/llama.cpp`` from the sdist into ``folder``; return its path."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if "/vendor/llama.cpp/" in m.name + "/"]
        if not members:
            raise BuildError(f"{sdist.name} holds no vendor/llama.cpp")
        archive.extractall(folder, members=members, filter="data")
    source = next(folder.glob("*/vendor/llama.cpp"), None)
    if source is None:
        raise BuildError(f"{sdist.name} holds no vendor/llama.cpp")
    return source


def build_llama_server(root: Path | None = None, *, log: Callable[[str], None] = print) -> Path:
    """Return a ``llama-server`` binary, building and caching it first when there is none.

    Raises:
        SdistUnavailable: when the sources cannot be fetched (offline, with nothing cached).
        BuildError: when CMake or a compiler is missing or the build fails.
    """
    given = os.environ.get(BINARY_ENV)
    if given:
        if not os.access(given, os.X_OK):
            raise BuildError(f"${BINARY_ENV} names {given}, which is not an executable")
        return Path(given)
    binary = server_binary(root)
    if binary.is_file():
        return binary
    cmake = shutil.which("cmake")
    if cmake is None:
        raise BuildError("building llama-server needs CMake and a C++ compiler; install cmake")
    target = install_dir(root)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=target) as scratch:
        work = Path(scratch)
        source = extract_llama_cpp(fetch_sdist(work / "sdist", log), work / "src")
        build = work / "build"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run([cmake, "-S", str(source), "-B", str(build), *generator, *CMAKE_OPTIONS], log)
        jobs = str(os.cpu_count() or 2)
        _run([cmake, "--build", str(build), "--target", "llama-server", "--parallel", jobs], log)
        built = build / "bin" / "llama-server"
        if not built.is_file():
            raise BuildError(f"the build finished without {built}")
        binary.parent.mkdir(parents=True, exist_ok=True)
        staged = binary.with_suffix(".partial")
        shutil.copy2(built, staged)
        staged.replace(binary)  # atomic: a concurrent run sees no binary or a whole one
    log(f"llama-server is at {binary}")
    return binary


def main() -> int:
    """Build (or find) llama-server and print where it is."""
    try:
        print(build_llama_server())
    except HarmonyChatError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
