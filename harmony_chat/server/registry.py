"""Which ``harmony-chat serve`` processes are running, for the TUI's status bar.

Each server writes one small JSON file, ``<cache dir>/servers/<pid>.json`` (pid, host, port,
model, started, whether it needs a key), once it listens, and removes it when it stops (Ctrl+C,
SIGTERM). A server that was killed leaves its file behind: :func:`running_servers` ignores any
file whose process is gone, and removes it. Reading costs a directory listing, one small file
read and one process check per file: no network, and no web framework is imported.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from harmony_chat.locations import cache_dir
from harmony_chat.private_files import make_private_dir, write_private_text

_ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def servers_dir() -> Path:
    """The folder of the running servers' files (under the cache dir, so ``HARMONY_CHAT_CACHE_DIR`` moves it)."""
    return cache_dir() / "servers"


@dataclass(frozen=True, slots=True)
class RegisteredServer:
    """A running ``serve`` process, as it registered itself."""

    pid: int
    host: str
    port: int
    model: str
    started: float
    """When it started listening (seconds since the epoch)."""
    api_key: bool = False
    """Whether clients must send a key."""
    workers: int = 1
    """Processes serving on its port (``--workers``; their parent is the one listed)."""

    @property
    def url(self) -> str:
        """The base URL a client on this machine uses (``…/v1``)."""
        host = _ANY_ADDRESS.get(self.host, self.host)
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/v1"


def register(
    host: str, port: int, model: str, *, api_key: bool = False, workers: int = 1, directory: Path | None = None
) -> Path | None:
    """Record this process as a running server; return its file (None when it could not be written).

    The file is written whole (a temporary file renamed), so a reader never sees half of it. A
    registry that cannot be written only makes the server invisible to the TUI: it never stops it.
    """
    entry = RegisteredServer(os.getpid(), host, port, model, time.time(), api_key, workers)
    folder = directory or servers_dir()
    path = folder / f"{entry.pid}.json"
    partial = folder / f".{entry.pid}.json.partial"
    try:
        make_private_dir(folder)  # which models this user serves, and where, is the user's business
        write_private_text(partial, json.dumps(asdict(entry)))
        os.replace(partial, path)
    except OSError:
        return None
    return path


def unregister(path: Path | None) -> None:
    """Remove a server's file (nothing happens when it is already gone)."""
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def running_servers(directory: Path | None = None) -> list[RegisteredServer]:
    """The servers running now, oldest first; files of processes that are gone are removed."""
    folder = directory or servers_dir()
    try:
        paths = [path for path in folder.iterdir() if path.suffix == ".json" and not path.name.startswith(".")]
    except OSError:
        return []
    servers: list[RegisteredServer] = []
    for path in paths:
        entry = _read(path)
        if entry is None:
            continue
        if not pid_alive(entry.pid) or _started_after(entry.pid, entry.started):
            unregister(path)
            continue
        servers.append(entry)
    return sorted(servers, key=lambda server: (server.started, server.pid))


def _read(path: Path) -> RegisteredServer | None:
    """A file's entry; None for one that is unreadable or not an entry (left alone: not ours to judge)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entry = RegisteredServer(
            pid=int(data["pid"]),
            host=str(data["host"]),
            port=int(data["port"]),
            model=str(data["model"]),
            started=float(data["started"]),
            api_key=bool(data.get("api_key", False)),
            workers=max(1, int(data.get("workers", 1))),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return entry if entry.pid > 0 else None


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (a zombie, or another user's, counts as existing)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return _windows_pid_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


@functools.cache
def _boot_time() -> float:
    """When this machine booted (seconds since the epoch), from ``/proc/stat`` (read once).

    Raises:
        OSError: where there is no ``/proc/stat``; StopIteration when it has no ``btime``.
    """
    with open("/proc/stat", encoding="ascii") as stat:
        return next(float(line.split()[1]) for line in stat if line.startswith("btime "))


def _started_after(pid: int, when: float) -> bool:
    """Whether process ``pid`` started after ``when``: its id was reused (Linux; elsewhere never known)."""
    try:
        boot = _boot_time()
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        started = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration, AttributeError):
        return False
    return started > when + 2.0  # a registration follows its process's start; clock ticks and btime are coarse


def _windows_pid_alive(pid: int) -> bool:  # pragma: no cover - exercised on Windows only
    """``os.kill(pid, 0)`` would terminate the process on Windows: ask the kernel instead."""
    if sys.platform != "win32":
        return False
    import ctypes

    query_limited_information, still_active = 0x1000, 259
    kernel32 = ctypes.windll.kernel32
    handle = kernel32.OpenProcess(query_limited_information, False, pid)
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == still_active
    finally:
        kernel32.CloseHandle(handle)
