"""Build ``llama-server`` once from the llama.cpp sources vendored in the llama-cpp-python sdist.

The tests drive a real llama-server; this builds it CPU-only into the user cache dir, where later runs
find it. One command does it::

    python -m harmony_chat.backends.remote.llama_server_build

Two ways, the quick one first:

- **against the installed wheel** (Linux): llama-cpp-python's wheel already holds ``libllama``,
  ``libggml*`` and ``libmtmd`` as shared libraries, so only llama.cpp's ``common/`` and
  ``tools/server/`` are compiled (headers from the sdist of the same version, so they match), and the
  binary is linked against copies of those libraries kept beside it;
- **the full build** (Release, the ``llama-server`` target only, static, no OpenSSL, no web UI
  download, portable instructions), when the quick one cannot be done or fails.

The sdist is that of the installed llama-cpp-python. A file lock makes concurrent runs (pytest-xdist
workers, two test runs) build it once: the others wait for it. ``HARMONY_CHAT_LLAMA_SERVER`` may
name an existing ``llama-server`` binary instead, and ``HARMONY_CHAT_LLAMA_CPP_SDIST`` a downloaded
``llama_cpp_python-<version>.tar.gz`` (otherwise ``pip download`` fetches it, from pip's cache when
it is there). The build runs under ``nice``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

from harmony_chat.errors import HarmonyChatError
from harmony_chat.locations import cache_dir

PINNED_VERSION = "0.3.36"
"""The llama-cpp-python release built when none is installed."""


def _installed_version() -> str:
    try:
        return importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        return PINNED_VERSION


LLAMA_CPP_PYTHON_VERSION = _installed_version()
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
"""The full build: CPU only, static, only what ``llama-server`` needs; portable, so it survives a CPU change."""
WHEEL_LIBRARIES = ("llama", "ggml", "ggml-base", "mtmd")
"""The shared libraries of the llama-cpp-python wheel that the quick build links against."""
QUICK_CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG",
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
    "-DCMAKE_INSTALL_RPATH=$ORIGIN/../lib",
)
"""The quick build: the model runs in the wheel's optimized libraries; the HTTP and JSON code compiles at -O1."""
QUICK_CMAKELISTS = """\
# Written by harmony-chat in place of llama.cpp's own: builds llama-server alone, against the
# llama, ggml and mtmd shared libraries of the installed llama-cpp-python wheel (same version).
cmake_minimum_required(VERSION 3.14...3.28)
project("llama.cpp" C CXX)

set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin)
set(LLAMA_VERSION_MAJOR {major})
set(LLAMA_VERSION_BASE "{major}.{minor}.{patch}")
set(LLAMA_BUILD_COMMON ON)
set(LLAMA_BUILD_SERVER ON)
set(LLAMA_ALL_WARNINGS OFF)
set(LLAMA_SUBPROCESS ON)
set(LLAMA_BUILD_UI OFF)
set(LLAMA_USE_PREBUILT_UI OFF)
set(LLAMA_OPENSSL OFF)

include(${{CMAKE_CURRENT_SOURCE_DIR}}/cmake/build-info.cmake)
include(${{CMAKE_CURRENT_SOURCE_DIR}}/cmake/common.cmake)
include(${{CMAKE_CURRENT_SOURCE_DIR}}/cmake/license.cmake)
set(LLAMA_BUILD_NUMBER ${{BUILD_NUMBER}})
set(LLAMA_BUILD_COMMIT ${{BUILD_COMMIT}})
find_package(Threads REQUIRED)

foreach(name {libraries})
    add_library(${{name}} SHARED IMPORTED GLOBAL)
    set_target_properties(${{name}} PROPERTIES IMPORTED_LOCATION "{lib_dir}/lib${{name}}.so")
endforeach()
set_target_properties(ggml-base PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${{CMAKE_CURRENT_SOURCE_DIR}}/ggml/include")
set_target_properties(ggml PROPERTIES INTERFACE_LINK_LIBRARIES ggml-base)
set_target_properties(llama PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${{CMAKE_CURRENT_SOURCE_DIR}}/include"
    INTERFACE_LINK_LIBRARIES "ggml;ggml-base")
set_target_properties(mtmd PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${{CMAKE_CURRENT_SOURCE_DIR}}/tools/mtmd"
    INTERFACE_LINK_LIBRARIES llama)

add_subdirectory(vendor)
add_subdirectory(common)
add_subdirectory(tools/ui)
add_subdirectory(tools/server)
"""
QUICK_BUILD_MINUTES = 3
"""About how long the quick build takes on 2 cores (the full one: about 8 minutes)."""
FULL_BUILD_MINUTES = 8


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


def build_lock(root: Path | None = None) -> FileLock:
    """The lock every build of this version takes (beside the install dir, so deleting that keeps it)."""
    folder = install_dir(root)
    folder.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(folder.parent / f"{folder.name}.lock"))


def wheel_library_dir() -> Path | None:
    """The installed llama-cpp-python's folder of shared libraries, if it holds what the quick build needs."""
    if not sys.platform.startswith("linux"):
        return None  # the quick build writes Linux link and rpath settings
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "lib"
    return folder if all((folder / f"lib{name}.so").exists() for name in WHEEL_LIBRARIES) else None


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


def quick_cmakelists(source: Path, lib_dir: Path) -> str:
    """The top-level CMakeLists that builds llama-server alone against the libraries in ``lib_dir``."""
    original = (source / "CMakeLists.txt").read_text(encoding="utf-8")
    version = {}
    for part in ("major", "minor", "patch"):
        match = re.search(rf"set\(LLAMA_VERSION_{part.upper()}\s+(\d+)\)", original)
        version[part] = match.group(1) if match else "0"
    return QUICK_CMAKELISTS.format(**version, libraries=" ".join(WHEEL_LIBRARIES), lib_dir=lib_dir.as_posix())


def _cmake_build(cmake: str, source: Path, build: Path, options: tuple[str, ...], log: Callable[[str], None]) -> Path:
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    _run([cmake, "-S", str(source), "-B", str(build), *generator, *options], log)
    jobs = str(os.cpu_count() or 2)
    _run([cmake, "--build", str(build), "--target", "llama-server", "--parallel", jobs], log)
    built = build / "bin" / "llama-server"
    if not built.is_file():
        raise BuildError(f"the build finished without {built}")
    return built


def _quick_build(cmake: str, source: Path, work: Path, wheel_libs: Path, log: Callable[[str], None]) -> Path:
    """Build against copies of the wheel's libraries in ``work/lib``; return ``work/bin/llama-server``.

    The binary finds the libraries through its rpath, ``$ORIGIN/../lib``, wherever the pair is moved.
    """
    libs = work / "lib"
    shutil.copytree(wheel_libs, libs, symlinks=True)
    (source / "CMakeLists.txt").write_text(quick_cmakelists(source, libs), encoding="utf-8")
    built = _cmake_build(cmake, source, work / "build-quick", QUICK_CMAKE_OPTIONS, log)
    staged_bin = work / "bin"
    staged_bin.mkdir()
    shutil.copy2(built, staged_bin / "llama-server")
    _run([str(staged_bin / "llama-server"), "--version"], log)  # loads the copied libraries: a bad link fails here
    return staged_bin / "llama-server"


def _install(built: Path, target: Path, libs: Path | None = None) -> None:
    """Copy the binary into ``target/bin`` (and ``libs`` into ``target/lib``); the binary last."""
    if libs is not None:
        installed = target / "lib"
        if installed.exists():
            shutil.rmtree(installed)
        shutil.copytree(libs, installed, symlinks=True)
    binary = target / "bin" / "llama-server"
    binary.parent.mkdir(parents=True, exist_ok=True)
    partial = binary.with_suffix(".partial")
    shutil.copy2(built, partial)
    partial.replace(binary)  # atomic: a concurrent reader sees no binary or a whole one


def build_llama_server(
    root: Path | None = None, *, log: Callable[[str], None] = print, quick: bool | None = None
) -> Path:
    """Return a ``llama-server`` binary, building and caching it first when there is none.

    Args:
        root: the cache dir (default: the app's).
        log: where progress lines go.
        quick: True: only the build against the wheel's libraries; False: only the full build; None:
            the quick one, and the full one if that cannot be done.

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
    lock = build_lock(root)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        log(f"another process is building llama-server; waiting for it ({lock.lock_file})")
        lock.acquire()
    try:
        if binary.is_file():  # built by the process this one waited for
            return binary
        _build(cmake, install_dir(root), log, quick)
    finally:
        lock.release()
    log(f"llama-server is at {binary}")
    return binary


def _build(cmake: str, target: Path, log: Callable[[str], None], quick: bool | None) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=target) as scratch:
        work = Path(scratch)
        sdist = fetch_sdist(work / "sdist", log)
        wheel_libs = wheel_library_dir() if quick is not False else None
        if quick and wheel_libs is None:
            raise BuildError("the quick build needs llama-cpp-python's shared libraries on Linux; none found")
        if wheel_libs is not None:
            started = time.monotonic()
            try:
                staged = _quick_build(cmake, extract_llama_cpp(sdist, work / "quick"), work / "quick", wheel_libs, log)
            except BuildError as error:
                if quick:
                    raise
                log(f"the quick build failed; the full build follows ({error})")
            else:
                _install(staged, target, libs=staged.parent.parent / "lib")
                log(f"built llama-server against {wheel_libs} in {time.monotonic() - started:.0f} s")
                return
        source = extract_llama_cpp(sdist, work / "src")
        built = _cmake_build(cmake, source, work / "build", CMAKE_OPTIONS, log)
        _install(built, target)


def main(argv: list[str] | None = None) -> int:
    """Build (or find) llama-server and print where it is (``--full``: skip the quick build)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        print(build_llama_server(quick=False if "--full" in args else None))
    except HarmonyChatError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
