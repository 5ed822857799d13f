"""A memory (and process) limit for the whole python sandbox: a child cgroup of this process's own.

Where this process may create a cgroup under its own (root, or a user whose slice systemd delegated)
and the memory controller is there, each kernel gets a cgroup of its own: ``memory.max`` (cgroup v2)
or ``memory.limit_in_bytes`` (v1) bounds what all its processes hold together, tmpfs pages and the
kernel memory of its files included, and ``pids.max`` bounds its processes. The launcher joins it
before anything else starts, so every process of the sandbox is counted. Where none can be made,
:func:`memory_cgroup` returns ``None`` and the sandbox falls back to per-process limits (the approval
dialog and the README say which applies).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "harmony-chat-python-"
STALE_S = 600.0
"""An empty kernel cgroup older than this was left behind and is removed when the next one is made."""
REMOVE_WAIT_S = 2.0
"""How long the sandbox's processes get to end before what is left in its cgroup is killed."""


@dataclass(frozen=True)
class Cgroup:
    """One kernel's cgroup: its folder, and the file a process writes ``0`` into to join it."""

    folder: Path
    version: int

    @property
    def procs(self) -> Path:
        """``cgroup.procs``: writing ``0`` moves the writer in (its later children follow)."""
        return self.folder / "cgroup.procs"

    def remove(self, wait_s: float = REMOVE_WAIT_S) -> None:
        """Remove the cgroup once its processes are gone, killing any left after ``wait_s`` (idempotent).

        A cgroup with processes cannot be removed, and the sandbox's are still ending when the
        kernel is closed: they are waited for, then killed, so no cgroup is left behind.
        """
        deadline = time.monotonic() + wait_s
        while True:
            try:
                pids = [int(line) for line in self.procs.read_text(encoding="ascii").split()]
            except (OSError, ValueError):
                pids = []  # gone already, or no list to read: rmdir says whether it can go
            if not pids:
                break
            if time.monotonic() >= deadline:
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + wait_s
            time.sleep(0.02)
        with contextlib.suppress(OSError):
            self.folder.rmdir()


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """The cgroup of this process per controller (``""`` for v2's unified one), from ``/proc/self/cgroup``."""
    paths: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            paths[controller] = parts[2]
    return paths


def _write(path: Path, value: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(value)


def _v2(root: Path, own: str, memory_bytes: int, processes: int) -> Cgroup | None:
    parent = root / own.lstrip("/")
    try:
        enabled = (parent / "cgroup.subtree_control").read_text(encoding="ascii").split()
    except OSError:
        return None
    if "memory" not in enabled:  # the parent gives its children no memory controller
        return None
    limits = {"memory.max": str(memory_bytes)} | ({"pids.max": str(processes)} if "pids" in enabled else {})
    return _make(parent, 2, limits, {"memory.swap.max": "0"})  # swap may be off, or not accounted


def _v1(root: Path, paths: dict[str, str], memory_bytes: int) -> Cgroup | None:
    own = paths.get("memory")
    hierarchy = root / "memory"
    if own is None or not (hierarchy / "memory.limit_in_bytes").exists():
        return None
    swap = {"memory.memsw.limit_in_bytes": str(memory_bytes)}  # only where swap is accounted
    return _make(hierarchy / own.lstrip("/"), 1, {"memory.limit_in_bytes": str(memory_bytes)}, swap)


def _make(parent: Path, version: int, limits: dict[str, str], optional: dict[str, str]) -> Cgroup | None:
    """A new cgroup under ``parent`` with ``limits`` written (and ``optional`` where the kernel takes them)."""
    _remove_stale(parent)
    folder = parent / f"{PREFIX}{secrets.token_hex(6)}"
    try:
        folder.mkdir(mode=0o755)
    except OSError:
        return None
    try:
        for name, value in limits.items():
            _write(folder / name, value)
        for name, value in optional.items():
            with contextlib.suppress(OSError):
                _write(folder / name, value)
    except OSError:
        with contextlib.suppress(OSError):
            folder.rmdir()
        return None
    return Cgroup(folder, version)


def _remove_stale(parent: Path) -> None:
    """Remove empty cgroups of kernels whose app ended without removing them (killed, say).

    Only those made over :data:`STALE_S` ago: a newer empty one may be another app's, about to be joined.
    """
    now = time.time()
    with contextlib.suppress(OSError):
        for stale in parent.glob(f"{PREFIX}*"):
            with contextlib.suppress(OSError):
                if now - stale.stat().st_mtime > STALE_S:
                    stale.rmdir()  # fails, as it should, for one with processes: a running kernel's


def memory_cgroup(memory_bytes: int, processes: int, *, root: Path = CGROUP_ROOT) -> Cgroup | None:
    """A new cgroup limiting memory (and, on v2, processes) for one sandbox, or ``None`` where none can be made."""
    try:
        paths = _own_paths(Path("/proc/self/cgroup").read_text(encoding="ascii"))
    except OSError:
        return None
    if "" in paths and (root / "cgroup.controllers").exists():
        return _v2(root, paths[""], memory_bytes, processes)
    return _v1(root, paths, memory_bytes)


def can_limit_memory() -> bool:
    """True when a cgroup for the sandbox can be made here (one is made and removed to find out)."""
    probe = memory_cgroup(1024**3, 64)
    if probe is None:
        return False
    probe.remove()
    return True
